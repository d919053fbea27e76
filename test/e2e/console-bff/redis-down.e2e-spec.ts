import { CONSOLE_COOKIE, consoleSignIn, setCookieLine, type ConsoleSession } from '../../support/console-flow';
import { eventually } from '../../support/eventually';
import { PrivateRedis } from '../../support/private-redis';
import { startTestApp, type TestApp } from '../../support/test-app';

/**
 * Redis is the authority of console sessions. The suite runs against a Redis of its own and
 * stalls it with SIGSTOP (commands time out after DEPENDENCY_TIMEOUT_MS), then resumes it with
 * its data: an outage must answer 503 and never sign anyone out (spec 3; contract section 3).
 */
describe('console BFF with Redis unavailable', () => {
  let redis: PrivateRedis;
  let t: TestApp;
  let s: ConsoleSession;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    t = await startTestApp({ RATE_LIMITS: 'off', REDIS_URL: redis.url });
    s = await consoleSignIn(t, 'outage@studio.example');
  });
  afterAll(async () => {
    redis.resume();
    await t.close();
    await redis.stop();
  });

  it('answers 503 temporarily_unavailable everywhere, never expires the cookie, and the session works once Redis is back', async () => {
    await t.console().get('/api/management/tenants').set('Cookie', s.cookie).expect(200);
    redis.pause();
    try {
      const answers = [
        await t.console().get('/api/auth/current').set('Cookie', s.cookie),
        await t.console().get('/api/management/tenants').set('Cookie', s.cookie),
        await t.console().post('/api/auth/sign-out').set('Cookie', s.cookie).set('Origin', t.consoleOrigin),
        await t.console().post('/api/auth/start').set('Origin', t.consoleOrigin),
      ];
      for (const res of answers) {
        expect(res.status).toBe(503);
        expect(res.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
        expect(setCookieLine(res, CONSOLE_COOKIE)).toBeUndefined();
        expect(res.headers['set-cookie']).toBeUndefined();
      }
    } finally {
      redis.resume();
    }
    // The reconnect backoff is capped at one second.
    await eventually(
      async () => (await t.console().get('/api/auth/current').set('Cookie', s.cookie)).status === 200,
      10_000,
    );
    await t.console().get('/api/management/tenants').set('Cookie', s.cookie).expect(200);
  });

  it('sends a callback during an outage to /?error=temporarily_unavailable', async () => {
    const start = await t.console().post('/api/auth/start').set('Origin', t.consoleOrigin).expect(303);
    const flowCookie = (setCookieLine(start, '__Host-svc_control_flow') ?? '').split(';')[0] as string;
    redis.pause();
    try {
      const res = await t.console().get('/api/auth/callback?code=x&state=y').set('Cookie', flowCookie).expect(303);
      expect(res.headers.location).toBe('/?error=temporarily_unavailable');
      expect(setCookieLine(res, CONSOLE_COOKIE)).toBeUndefined();
    } finally {
      redis.resume();
    }
  });
});
