import fc from 'fast-check';
import type { GuestClient } from '../../../sdk/src/guest-client';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { stateSnapshot } from '../../support/hostile-input';

/** Hostile bodies and headers over every guest JSON endpoint: never a 5xx, never a state change. */
const SEED = 4242;
const RUNS = 25;
jest.setTimeout(120_000);

const nasty = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.fullUnicodeString({ maxLength: 30 }),
  fc.constantFrom(
    'flw_AAAAAAAAAAAAAAAAAAAAAA',
    'cli_game',
    'prf_AAAAAAAAAAAAAAAAAAAAAA',
    'usr_AAAAAAAAAAAAAAAAAAAAAA',
    'ｃli_game',
    'cli_gamе',
    '',
    '\u0000',
    '__proto__',
  ),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
);
const fields = [
  'client_id',
  'browser_flow_id',
  'email',
  'code',
  'proof_id',
  'grant_type',
  'refresh_token',
  'token',
  'upgrade_proof_id',
  'user_id',
];
const bodies = fc.oneof(
  fc.record(Object.fromEntries(fields.map((f) => [f, nasty])), { requiredKeys: [] }),
  fc.dictionary(fc.string({ maxLength: 10 }), nasty, { maxKeys: 5 }),
  fc.jsonValue({ maxDepth: 4 }),
);

describe('hostile input: guest API', () => {
  let w: GuestWorld;
  let guest: GuestClient;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
    guest = w.client();
    await guest.createGuest();
  });
  afterAll(async () => {
    await w.close();
  });

  it.each([
    'guest',
    'email/start',
    'email/verify',
    'sign-in',
    'token',
    'revoke',
    'guest/linking-intent',
    'guest/upgrade',
  ])('POST /t/acme/%s answers every hostile body with a 4xx in the error shape', async (path) => {
    const before = await stateSnapshot(w.t);
    await fc.assert(
      fc.asyncProperty(bodies, fc.boolean(), async (body, withToken) => {
        // Bodies that happen to be valid guest creations legitimately create a guest; skip those.
        fc.pre(
          !(
            path === 'guest' &&
            typeof body === 'object' &&
            body !== null &&
            (body as Record<string, unknown>).client_id === 'cli_game'
          ),
        );
        let req = w.t
          .auth()
          .post(`/t/acme/${path}`)
          .set('Content-Type', 'application/json')
          .set('Cookie', `__Host-svc_flow_${guest.browserFlowId}=${guest.flowCookie()}`);
        if (withToken) req = req.set('Authorization', `Bearer ${guest.accessToken}`);
        const res = await req.send(JSON.stringify(body));
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expect(res.body).toEqual({ error: expect.stringMatching(/^[a-z_]+$/), error_description: expect.any(String) });
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(await stateSnapshot(w.t)).toBe(before);
  });

  it('answers hostile tenant ids and Authorization headers without a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 70 }),
        fc.string({ maxLength: 300 }),
        async (tenant, auth) => {
          fc.pre(
            /^[\x21-\x7e]*$/.test(auth) && !tenant.includes('/') && !tenant.includes('?') && !tenant.includes('#'),
          );
          const res = await w.t
            .auth()
            .post(`/t/${encodeURIComponent(tenant)}/guest/upgrade`)
            .set('Authorization', `Bearer ${auth}`)
            .send({
              client_id: 'cli_game',
              browser_flow_id: guest.browserFlowId,
              proof_id: 'prf_AAAAAAAAAAAAAAAAAAAAAA',
            });
          expect(res.status).toBeGreaterThanOrEqual(400);
          expect(res.status).toBeLessThan(500);
        },
      ),
      { seed: SEED, numRuns: RUNS * 2 },
    );
  });
});
