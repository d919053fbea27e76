import { randomBytes } from 'node:crypto';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { redisFootprint } from '../../support/redis-memory';

/**
 * Contract section 10: `POST /t/{t}/guest/linking-intent` writes a flow (an hour) and an intent
 * (ten minutes) for each new `browser_flow_id`, and guest tokens are free. A budget per session
 * and one per network are taken before anything is written; what an allowed request holds in
 * Redis is bounded, and a refused one holds nothing.
 */
describe('flood: linking intents', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({
      TRUST_PROXY: 'true',
      RATE_LIMIT_LINKING_INTENT_SESSION: '3/3600',
      RATE_LIMIT_IP_LINKING_INTENT: '5/3600',
      // Hour windows for the coarse tiers too: a GCRA key lives until its bucket is full again,
      // which under the default minute windows is a few hundred ms after three requests. On a
      // busy machine the /48's key expired before the footprint was taken and the refused
      // requests that passed the network budgets wrote it again, one key more than before.
      RATE_LIMIT_NET_IPV6_56: '600/3600',
      RATE_LIMIT_NET_IPV6_48: '600/3600',
    });
  });
  afterAll(async () => {
    await w.close();
  });

  const flowBody = () => ({ client_id: 'cli_game', browser_flow_id: `flw_${randomBytes(16).toString('base64url')}` });
  async function guestToken(ip: string): Promise<string> {
    const res = await w.t.auth().post('/t/acme/guest').set('X-Forwarded-For', ip).send(flowBody()).expect(201);
    return (res.body as { access_token: string }).access_token;
  }
  const intent = (token: string, ip: string) =>
    w.t
      .auth()
      .post('/t/acme/guest/linking-intent')
      .set('X-Forwarded-For', ip)
      .set('Authorization', `Bearer ${token}`)
      .send(flowBody());

  it('bounds the intents of one session, with at most 1,000 bytes held per intent and none per refusal', async () => {
    const token = await guestToken('198.51.100.1');
    const before = await redisFootprint(w.t);
    // One /64: its budget keys are written by the first intent, so a refusal adds no key.
    for (let i = 0; i < 3; i++) expect((await intent(token, `2001:db8:10:1::${i + 1}`)).status).toBe(201);
    const perIntent = ((await redisFootprint(w.t)).bytes - before.bytes) / 3;
    expect(perIntent).toBeLessThanOrEqual(1000);

    const full = await redisFootprint(w.t);
    const refused = await Promise.all(Array.from({ length: 50 }, (_, i) => intent(token, `2001:db8:10:1::${i + 10}`)));
    expect(refused.every((r) => r.status === 429)).toBe(true);
    expect(refused[0]?.body).toMatchObject({ error: 'rate_limited' });
    expect(refused.every((r) => r.headers['set-cookie'] === undefined)).toBe(true);
    const after = await redisFootprint(w.t);
    expect(after.keys).toBeLessThanOrEqual(full.keys);
    expect(after.bytes).toBeLessThanOrEqual(full.bytes);
  });

  it('bounds the intents of one network across sessions', async () => {
    const tokens = await Promise.all([1, 2, 3].map((n) => guestToken(`198.51.101.${n}`)));
    const net = '2001:db8:11:1::';
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await intent(tokens[i % 3] ?? '', `${net}${i + 1}`)).status);
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
    expect((await intent(tokens[2] ?? '', '2001:db8:11:2::1')).status).toBe(201);
  });
});
