import { PrivateRedis } from '../../support/private-redis';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { NATIVE_APP_ID, startProviders, type ProviderWorld } from '../../support/provider-fixtures';

/**
 * Contract 10: the provider endpoints fail closed. While Redis (flows, states, proofs, sessions)
 * hangs, they answer 503 temporarily_unavailable and write no user or identity; the same calls
 * work once it is back.
 */
describe('provider sign-in fails closed when Redis stalls', () => {
  let redis: PrivateRedis;
  let w: GuestWorld;
  let p: ProviderWorld;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    w = await startGuestWorld({ REDIS_URL: redis.url, RATE_LIMITS: 'off', DEPENDENCY_TIMEOUT_MS: '500' });
    p = await startProviders(w);
  });
  afterAll(async () => {
    redis.resume();
    await p.stop();
    await w.close().catch(() => undefined);
    await redis.stop();
  });

  it('answers 503 on start, native token, callback and me/identities; nothing is written', async () => {
    const c = w.client();
    await c.createGuest();
    await c.createLinkingIntent();
    const now = Math.floor(Date.now() / 1000);
    const idToken = await p.plain.sign({
      iss: p.plain.issuer,
      aud: NATIVE_APP_ID,
      sub: 'stall-1',
      iat: now,
      exp: now + 300,
    });
    const cookie = `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`;
    const flow = { client_id: 'cli_game', browser_flow_id: c.browserFlowId };
    const start = new URL(c.providerStartUrl('google'));

    redis.pause();
    try {
      const answers = await Promise.all([
        w.t
          .auth()
          .get(start.pathname + start.search)
          .set('Cookie', cookie),
        w.t.auth().post('/t/acme/providers/google/start').set('Cookie', cookie).send(flow),
        w.t
          .auth()
          .post('/t/acme/providers/google/token')
          .set('Cookie', cookie)
          .send({ ...flow, id_token: idToken }),
        w.t.auth().get('/t/acme/providers/callback').query({ code: 'c', state: 's' }).set('Cookie', cookie),
        w.t
          .auth()
          .post('/t/acme/me/identities')
          .set('Authorization', `Bearer ${c.accessToken as string}`)
          .set('Cookie', cookie)
          .send({ ...flow, proof_id: 'prf_NoSuchProofAtAll00' }),
      ]);
      expect(answers.map((a) => [a.status, a.body.error])).toEqual(
        Array(answers.length).fill([503, 'temporarily_unavailable']),
      );
    } finally {
      redis.resume();
    }
    const rows = await w.t.pg.query(
      `SELECT 1 FROM identities WHERE provider = 'google' AND provider_subject = 'stall-1'`,
    );
    expect(rows.rows).toEqual([]);
    // Back: the same token proves the sign-in (the stalled attempt never spent it).
    const proof = await c.providerToken('google', idToken);
    expect((await c.upgrade(proof.proof_id)).linked_identity).toMatchObject({
      provider: 'google',
      provider_subject: 'stall-1',
    });
  });
});
