import { PostgresOutage } from '../../support/postgres-outage';
import { PrivateRedis } from '../../support/private-redis';
import { emailProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { eventually } from '../../support/eventually';

const countUsers = async (w: GuestWorld): Promise<number> =>
  (await w.t.pg.query('SELECT count(*)::int AS n FROM users')).rows[0].n as number;

/**
 * Spec 1.6: when the authoritative session state is unavailable, guest features issue no token.
 * A guest bearer route answers 503, never 401 (a 401 would make a game throw away a healthy
 * session) and never 200.
 */
describe('guest API fails closed when Redis stalls', () => {
  let redis: PrivateRedis;
  let w: GuestWorld;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    w = await startGuestWorld({ REDIS_URL: redis.url, RATE_LIMITS: 'off', DEPENDENCY_TIMEOUT_MS: '500' });
  });
  afterAll(async () => {
    redis.resume();
    await w.close().catch(() => undefined);
    await redis.stop();
  });

  it('answers 503 on every guest route while the session authority hangs, then the same session works again', async () => {
    const c = w.client();
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const proof = await emailProof(w, c, 'redis-stall@example.com');
    // Refresh and revoke use another guest's session: a command that timed out may still run when
    // Redis resumes (the client was told 503 and retries), so it must not touch c's session.
    const other = await w.client().createGuest();
    const users = await countUsers(w);
    const cookie = `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`;
    const flow = { client_id: 'cli_game', browser_flow_id: c.browserFlowId };

    redis.pause();
    try {
      const answers = {
        create: await w.t
          .auth()
          .post('/t/acme/guest')
          .send({ client_id: 'cli_game', browser_flow_id: 'flw_RedisStalledFlow0001' }),
        intent: await w.t
          .auth()
          .post('/t/acme/guest/linking-intent')
          .set('Authorization', `Bearer ${created.access_token}`)
          .set('Cookie', cookie)
          .send(flow),
        upgrade: await w.t
          .auth()
          .post('/t/acme/guest/upgrade')
          .set('Authorization', `Bearer ${created.access_token}`)
          .set('Cookie', cookie)
          .send({ ...flow, proof_id: proof }),
        refresh: await w.t
          .auth()
          .post('/t/acme/token')
          .send({ grant_type: 'refresh_token', refresh_token: other.refresh_token, client_id: 'cli_game' }),
        revoke: await w.t.auth().post('/t/acme/revoke').send({ token: other.refresh_token, client_id: 'cli_game' }),
        emailStart: await w.t
          .auth()
          .post('/t/acme/email/start')
          .set('Cookie', cookie)
          .send({ ...flow, email: 'stalled@example.com' }),
      };
      for (const [route, res] of Object.entries(answers)) {
        expect({
          route,
          status: res.status,
          error: res.body.error,
          tokens: res.body.access_token ?? res.body.refresh_token,
        }).toEqual({
          route,
          status: 503,
          error: 'temporarily_unavailable',
          tokens: undefined,
        });
      }
    } finally {
      redis.resume();
    }
    // Nothing was written for the refused creation.
    expect(await countUsers(w)).toBe(users);
    // Only reads touched c's records during the stall: its session, intent and proof are intact.
    await eventually(async () => (await w.t.auth().get('/readyz')).status === 200, 10_000);
    const upgraded = await c.upgrade(proof);
    expect(upgraded.user_id).toBe(created.user_id);
  });
});

describe('guest API fails closed when PostgreSQL refuses connections', () => {
  let w: GuestWorld;
  let outage: PostgresOutage;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
    outage = await PostgresOutage.of(w.t.databaseName);
  });
  afterAll(async () => {
    await outage.end();
    await w.close();
  });

  it('creates no guest and attaches nothing while the database is away, then recovers', async () => {
    const c = w.client();
    await c.createGuest();
    await c.createLinkingIntent();
    const proof = await emailProof(w, c, 'pg-down@example.com');

    await outage.cut();
    try {
      const create = await w.t
        .auth()
        .post('/t/acme/guest')
        .send({ client_id: 'cli_game', browser_flow_id: 'flw_PostgresDownFlow0001' });
      expect({ status: create.status, error: create.body.error, token: create.body.access_token }).toEqual({
        status: 503,
        error: 'temporarily_unavailable',
        token: undefined,
      });
      const upgrade = await w.t
        .auth()
        .post('/t/acme/guest/upgrade')
        .set('Authorization', `Bearer ${c.accessToken}`)
        .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
        .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, proof_id: proof });
      expect({ status: upgrade.status, error: upgrade.body.error, token: upgrade.body.access_token }).toEqual({
        status: 503,
        error: 'temporarily_unavailable',
        token: undefined,
      });
    } finally {
      await outage.restore();
    }
    await eventually(async () => (await w.t.auth().get('/readyz')).status === 200, 10_000);
    // The guest's session survived; its identity count is unchanged, and a fresh guest can be made.
    // (t.pg was cut with the rest, so a fresh connection reads the rows.)
    await outage.fresh(async (pg) => {
      const attached = await pg.query(`SELECT count(*)::int AS n FROM identities WHERE user_id = $1`, [c.userId]);
      expect(attached.rows[0].n).toBe(0);
      const stray = await pg.query(`SELECT count(*)::int AS n FROM sessions WHERE user_id = $1`, [c.userId]);
      expect(stray.rows[0].n).toBe(1);
    });
    expect(await c.createLinkingIntent()).toMatchObject({ intent_id: expect.stringMatching(/^lnk_/) });
    await w.client().createGuest();
  });
});
