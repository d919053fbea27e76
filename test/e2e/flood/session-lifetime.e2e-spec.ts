import { randomBytes } from 'node:crypto';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

/**
 * Contract section 10: a customer session of a client without `offline_access` can never be
 * refreshed, so it lives no longer than its access token, in Redis and in PostgreSQL; an
 * anonymous guest creation cannot hold state for 30 days.
 */
describe('customer session lifetime', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld();
  });
  afterAll(async () => {
    await w.close();
  });

  async function createGuest(clientId: string): Promise<{ sessionId: string; expiresIn: number }> {
    const res = await w.t
      .auth()
      .post('/t/acme/guest')
      .send({ client_id: clientId, browser_flow_id: `flw_${randomBytes(16).toString('base64url')}` })
      .expect(201);
    return { sessionId: res.body.session_id as string, expiresIn: res.body.expires_in as number };
  }

  async function lifetimes(sessionId: string): Promise<{ redis: number; row: number }> {
    const redisMs = await w.t.redis.pttl(`s:{${sessionId}}`);
    const [row] = (
      await w.t.pg.query<{ s: string }>(
        'SELECT extract(epoch FROM expires_at - clock_timestamp()) AS s FROM sessions WHERE id = $1',
        [sessionId],
      )
    ).rows;
    return { redis: redisMs / 1000, row: Number(row?.s) };
  }

  it('without offline_access: the session ends with its access token', async () => {
    const { sessionId, expiresIn } = await createGuest('cli_native');
    expect(expiresIn).toBe(300);
    const { redis, row } = await lifetimes(sessionId);
    expect(redis).toBeGreaterThan(290);
    expect(redis).toBeLessThanOrEqual(expiresIn);
    expect(row).toBeGreaterThan(290);
    expect(row).toBeLessThanOrEqual(expiresIn);
  });

  it('with offline_access: the session lives its idle lifetime (contract 13)', async () => {
    const idle = w.t.config.customerSessions.idleTtl;
    const { sessionId } = await createGuest('cli_game');
    const { redis, row } = await lifetimes(sessionId);
    expect(redis).toBeGreaterThan(idle - 60);
    expect(redis).toBeLessThanOrEqual(idle);
    expect(row).toBeGreaterThan(idle - 60);
    expect(row).toBeLessThanOrEqual(idle);
  });
});
