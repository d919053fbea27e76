import { Client } from 'pg';
import { PG_BASE } from '../../support/database';
import {
  callbackUri,
  confirmCode,
  emailPost,
  requestCode,
  signIn,
  startFlow,
  tokenRequest,
} from '../../support/management-flow';
import { PrivateRedis } from '../../support/private-redis';
import { startTestApp, type TestApp } from '../../support/test-app';
import { eventually } from '../../support/eventually';

/** Spec 1.6: with the session authority or the database away, no token is issued: 503, then recovery. */
describe('fail closed when Redis is unavailable', () => {
  let redis: PrivateRedis;
  let t: TestApp;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    t = await startTestApp({ REDIS_URL: redis.url, RATE_LIMITS: 'off' });
  });
  // The app closes while its Redis still runs: close() deletes the suite's keys through it.
  afterAll(async () => {
    redis.resume();
    await t.close();
    await redis.stop();
  });

  it('answers 503 everywhere a session or code is involved, never 401 or 200, and recovers within 10 s', async () => {
    const tokens = await signIn(t, 'redis-down@studio.example');
    const flow = await startFlow(t);
    await redis.kill();

    const started = Date.now();
    const current = await t
      .auth()
      .get('/management-auth/current')
      .set('Authorization', `Bearer ${tokens.access_token}`);
    expect(current.status).toBe(503);
    expect(current.body.error).toBe('temporarily_unavailable');
    expect(Date.now() - started).toBeLessThan(5000);

    const refresh = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(refresh.status).toBe(503);
    expect(refresh.body.access_token).toBeUndefined();

    const revoke = await t.auth().post('/management-auth/revoke').set('Authorization', `Bearer ${tokens.access_token}`);
    expect(revoke.status).toBe(503);

    expect((await emailPost(t, 'start', flow, { email: 'redis-down@studio.example' })).status).toBe(503);
    expect(
      (await t.auth().get('/management-auth/authorize').query({ client_id: 'cli_console' })).status,
    ).toBeGreaterThanOrEqual(400);
    const ready = await t.auth().get('/readyz').expect(503);
    expect(ready.body.checks).toEqual({ postgres: 'up', redis: 'down' });

    await redis.restart();
    const recoveredIn = await eventually(async () => (await t.auth().get('/readyz')).status === 200, 10_000);
    expect(recoveredIn).toBeLessThan(10_000);
    // Redis kept nothing, so the old session is gone: a fresh sign-in works without a restart.
    const again = await signIn(t, 'redis-back@studio.example');
    await t.auth().get('/management-auth/current').set('Authorization', `Bearer ${again.access_token}`).expect(200);
  });

  it('keeps sessions across a Redis stall and answers 503 while it hangs', async () => {
    const tokens = await signIn(t, 'redis-stall@studio.example');
    redis.pause();
    try {
      const res = await t.auth().get('/management-auth/current').set('Authorization', `Bearer ${tokens.access_token}`);
      expect(res.status).toBe(503);
    } finally {
      redis.resume();
    }
    await eventually(
      async () =>
        (await t.auth().get('/management-auth/current').set('Authorization', `Bearer ${tokens.access_token}`))
          .status === 200,
      10_000,
    );
  });
});

describe('fail closed when PostgreSQL refuses connections', () => {
  let t: TestApp;
  let admin: Client;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
    admin = new Client({ connectionString: `${PG_BASE}/postgres` });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.query(`ALTER DATABASE ${t.databaseName} ALLOW_CONNECTIONS true`);
    await admin.end();
    await t.close();
  });

  async function cutDatabase(): Promise<void> {
    await admin.query(`ALTER DATABASE ${t.databaseName} ALLOW_CONNECTIONS false`);
    await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [t.databaseName],
    );
  }

  it('issues no code and no token while the database is away, then recovers without a restart', async () => {
    const email = 'pg-down@studio.example';
    const flow = await startFlow(t);
    const emailCode = await requestCode(t, flow, email);
    const authorizationFlow = await startFlow(t);
    const code2 = await requestCode(t, authorizationFlow, 'pg-down-2@studio.example');
    const authorizationCode = await confirmCode(t, authorizationFlow, 'pg-down-2@studio.example', code2);

    await cutDatabase();
    const confirm = await emailPost(t, 'confirm', flow, { email, code: emailCode });
    expect(confirm.status).toBe(503);
    expect(confirm.body.redirect_to).toBeUndefined();
    const exchange = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code: authorizationCode,
      redirect_uri: callbackUri(t),
      code_verifier: authorizationFlow.pkce.verifier,
    });
    expect(exchange.status).toBe(503);
    expect(exchange.body.access_token).toBeUndefined();
    expect((await t.auth().get('/readyz')).body.checks).toEqual({ postgres: 'down', redis: 'up' });

    await admin.query(`ALTER DATABASE ${t.databaseName} ALLOW_CONNECTIONS true`);
    await eventually(async () => (await t.auth().get('/readyz')).status === 200, 10_000);
    const tokens = await signIn(t, 'pg-back@studio.example');
    await t.auth().get('/management-auth/current').set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
  });
});
