import { Client } from 'pg';
import { PG_BASE } from '../../support/database';
import { randomBytes } from 'node:crypto';
import {
  authorizeQuery,
  callbackUri,
  confirmCode,
  emailPost,
  pkcePair,
  requestCode,
  signIn,
  startFlow,
  tokenRequest,
} from '../../support/management-flow';
import { PostgresOutage } from '../../support/postgres-outage';
import { PrivateRedis } from '../../support/private-redis';
import { consoleBasic, startTestApp, type TestApp } from '../../support/test-app';
import { eventually } from '../../support/eventually';

/**
 * The console client's revoke-session, as `status error`. Contract section 10: with the session
 * authority away it is 503, never 401 invalid_client (the BFF would drop the console session) nor
 * 200 {revoked: false}.
 */
async function revokeSession(t: TestApp, sessionId: string): Promise<string> {
  const res = await t
    .auth()
    .post('/management-auth/revoke-session')
    .set('Authorization', consoleBasic(t))
    .send({ session_id: sessionId });
  return `${res.status} ${res.body.error}`;
}

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

    // Restarted whatever the assertions say: a suite whose Redis stays away cannot close.
    try {
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

      const revoke = await t
        .auth()
        .post('/management-auth/revoke')
        .set('Authorization', `Bearer ${tokens.access_token}`);
      expect(revoke.status).toBe(503);

      expect(await revokeSession(t, tokens.session_id)).toBe('503 temporarily_unavailable');

      expect((await emailPost(t, 'start', flow, { email: 'redis-down@studio.example' })).status).toBe(503);
      // A complete, valid authorize request: only the missing flow store can refuse it, with no flow cookie.
      const authorize = await t
        .auth()
        .get('/management-auth/authorize')
        .query(authorizeQuery(t, pkcePair(), randomBytes(16).toString('base64url')));
      expect(authorize.status).toBe(503);
      expect(authorize.body.error).toBe('temporarily_unavailable');
      expect(authorize.headers['set-cookie']).toBeUndefined();
      const ready = await t.auth().get('/readyz').expect(503);
      expect(ready.body.checks).toEqual({ postgres: 'up', redis: 'down' });
    } finally {
      await redis.restart();
    }
    const recoveredIn = await eventually(async () => (await t.auth().get('/readyz')).status === 200, 10_000);
    expect(recoveredIn).toBeLessThan(10_000);
    // Redis kept nothing, so the old session is gone: a fresh sign-in works without a restart.
    const again = await signIn(t, 'redis-back@studio.example');
    await t.auth().get('/management-auth/current').set('Authorization', `Bearer ${again.access_token}`).expect(200);
  });

  it('keeps sessions across a Redis stall and answers 503 while it hangs, revoke-session included', async () => {
    const tokens = await signIn(t, 'redis-stall@studio.example');
    redis.pause();
    try {
      const res = await t.auth().get('/management-auth/current').set('Authorization', `Bearer ${tokens.access_token}`);
      expect(res.status).toBe(503);
      expect(await revokeSession(t, tokens.session_id)).toBe('503 temporarily_unavailable');
    } finally {
      redis.resume();
    }
    // The stalled Redis kept its data, and the refused revocation is not carried out once it resumes.
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

  // Contract 10 and 13: a 503 changes nothing. The code is checked (and spent) in Redis before the
  // account is resolved in PostgreSQL, with nothing putting it back when that read fails.
  it('a confirm refused while the database is away spends no code: the same code confirms once it is back', async () => {
    const email = 'pg-retry@studio.example';
    const flow = await startFlow(t);
    const emailCode = await requestCode(t, flow, email);
    await cutDatabase();
    const refused = await emailPost(t, 'confirm', flow, { email, code: emailCode });
    expect(refused.status).toBe(503);
    await admin.query(`ALTER DATABASE ${t.databaseName} ALLOW_CONNECTIONS true`);
    await eventually(async () => (await t.auth().get('/readyz')).status === 200, 10_000);
    const retried = await emailPost(t, 'confirm', flow, { email, code: emailCode });
    expect({ status: retried.status, error: retried.body.error }).toEqual({ status: 200, error: undefined });
  });
});

/**
 * Spec 7 and contract section 10: with PostgreSQL away and the console client's row no longer
 * cached (CLIENT_CACHE_TTL_MS=100), correct Basic credentials cannot be checked. `revoke-session`
 * and the refresh grant answer 503 temporarily_unavailable, never 401 invalid_client, which would
 * make the BFF drop every console session; and nothing is revoked or rotated.
 */
describe('the console client while PostgreSQL is away and its row is not cached', () => {
  let t: TestApp;
  let outage: PostgresOutage;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off', CLIENT_CACHE_TTL_MS: '100' });
    outage = await PostgresOutage.of(t.databaseName);
  });
  afterAll(async () => {
    await outage.end();
    await t.close();
  });

  it('answers 503 temporarily_unavailable, not 401 invalid_client, to revoke-session and the refresh grant', async () => {
    const tokens = await signIn(t, 'pg-basic@studio.example');
    await outage.cut();
    // Past the row's cache lifetime: every Basic check now needs the database.
    await new Promise((r) => setTimeout(r, 250));

    const revokeSession = await t
      .auth()
      .post('/management-auth/revoke-session')
      .set('Authorization', consoleBasic(t))
      .send({ session_id: tokens.session_id });
    expect(revokeSession.status).toBe(503);
    expect(revokeSession.body.error).toBe('temporarily_unavailable');
    expect(revokeSession.headers['www-authenticate']).toBeUndefined();

    const refresh = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token });
    expect(refresh.status).toBe(503);
    expect(refresh.body.error).toBe('temporarily_unavailable');
    expect(refresh.body.access_token).toBeUndefined();
    expect(refresh.headers['www-authenticate']).toBeUndefined();

    await outage.restore();
    await eventually(async () => (await t.auth().get('/readyz')).status === 200, 10_000);
    // Nothing changed: the session is live and its refresh token was not rotated.
    await t.auth().get('/management-auth/current').set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
    await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }).expect(200);
  });
});
