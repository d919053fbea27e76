import { setTimeout as sleep } from 'node:timers/promises';
import {
  CONSOLE_COOKIE,
  consoleSignIn,
  expiresConsoleCookie,
  readConsoleRecord,
  setCookieLine,
  type ConsoleSession,
} from '../../support/console-flow';
import { addMember, createTenant } from '../../support/console-fixtures';
import { UpstreamSwitch } from '../../support/console-upstream';
import { startTestApp, type TestApp } from '../../support/test-app';

/**
 * What the BFF does with each answer of the API (spec 3, 7.1; contract section 10): only a 400 or
 * 401 from the token endpoint, or a 401 to a proxied call, ends a console session. Any other
 * status, which a proxy, load balancer or rate limit in front of the API may answer, keeps it and
 * answers 503. Access tokens live 4 s, so the BFF refreshes from 3 s on.
 */
describe('console BFF: which upstream answers end a console session', () => {
  let sw: UpstreamSwitch;
  let t: TestApp;

  beforeAll(async () => {
    sw = await UpstreamSwitch.start();
    t = await startTestApp({ RATE_LIMITS: 'off', AUTH_ORIGIN: sw.origin, MANAGEMENT_ACCESS_TOKEN_TTL: '4' });
    sw.target = t.port;
    await createTenant(t, 'acme', 'Acme');
  });
  afterAll(async () => {
    await t.close();
    await sw.stop();
  });

  async function signedIn(email: string): Promise<{ s: ConsoleSession; accessExpiresAt: number }> {
    await addMember(t, 'acme', email, 'developer');
    const s = await consoleSignIn(t, email);
    return { s, accessExpiresAt: (await readConsoleRecord(t, s))?.accessExpiresAt ?? 0 };
  }
  const untilExpired = async (at: number) => sleep(Math.max(0, at - Date.now() + 150));
  const current = (s: ConsoleSession) => t.console().get('/api/auth/current').set('Cookie', s.cookie);
  const signOut = (s: ConsoleSession) =>
    t.console().post('/api/auth/sign-out').set('Cookie', s.cookie).set('Origin', t.consoleOrigin);

  const transient = [
    // A 200 that is no token answer (a gateway's page, a cut-off body) is not a refusal either.
    [200, ''],
    [200, '{}'],
    [200, '<html>OK</html>'],
    [403, '{"error":"forbidden","error_description":"denied by a gateway"}'],
    [404, '<html>Not Found</html>'],
    [408, ''],
    [429, '{"error":"rate_limited","error_description":"slow down"}'],
    [500, '{"error":"server_error"}'],
    [502, '<html>Bad Gateway</html>'],
  ] as const;

  it('keeps the session on a token endpoint answering 200 without tokens, 403, 404, 408, 429, 500 or 502: 503, then recovers', async () => {
    const sessions = await Promise.all(transient.map(([status], i) => signedIn(`keep-${status}-${i}@studio.example`)));
    await untilExpired(Math.max(...sessions.map((x) => x.accessExpiresAt)));
    for (const [i, [status, body]] of transient.entries()) {
      const { s } = sessions[i] as { s: ConsoleSession };
      const before = await readConsoleRecord(t, s);
      sw.answer = { prefix: '/management-auth/token', status, body };
      try {
        const res = await current(s);
        expect({ status, answer: res.status, body: res.body }).toEqual({
          status,
          answer: 503,
          body: { error: 'temporarily_unavailable', error_description: expect.any(String) },
        });
        expect(setCookieLine(res, CONSOLE_COOKIE)).toBeUndefined();
      } finally {
        sw.answer = null;
      }
      expect((await readConsoleRecord(t, s))?.refreshToken).toBe(before?.refreshToken);
    }
    for (const { s } of sessions) await current(s).expect(200);
  });

  it('drops the session on a token endpoint answering 400 or 401, with or without an error body', async () => {
    const final = [
      [400, '{"error":"invalid_grant"}'],
      [401, '{"error":"invalid_client"}'],
      [401, ''],
    ] as const;
    const sessions = await Promise.all(final.map((_, i) => signedIn(`drop-${i}@studio.example`)));
    await untilExpired(Math.max(...sessions.map((x) => x.accessExpiresAt)));
    for (const [i, [status, body]] of final.entries()) {
      const { s } = sessions[i] as { s: ConsoleSession };
      sw.answer = { prefix: '/management-auth/token', status, body };
      try {
        const res = await current(s);
        expect({ status, body, answer: res.status, error: res.body.error, expired: expiresConsoleCookie(res) }).toEqual(
          { status, body, answer: 401, error: 'unauthorized', expired: true },
        );
      } finally {
        sw.answer = null;
      }
      expect(await t.redis.exists(s.recordKey)).toBe(0);
    }
  });

  it('keeps the session when current answers 200 with something else than JSON: 503, never 500', async () => {
    const { s } = await signedIn('current-html@studio.example');
    sw.answer = { prefix: '/management-auth/current', status: 200, body: '<html>OK</html>' };
    try {
      const res = await current(s);
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 503, error: 'temporarily_unavailable' });
    } finally {
      sw.answer = null;
    }
    await current(s).expect(200);
  });

  it.each([408, 429, 503])('keeps the session when a proxied call answers %i: 503', async (status) => {
    const { s } = await signedIn(`proxy-${status}@studio.example`);
    sw.answer = { prefix: '/management/tenants', status, body: '{"error":"temporarily_unavailable"}' };
    try {
      const res = await t.console().get('/api/management/tenants').set('Cookie', s.cookie).expect(503);
      expect(res.body.error).toBe('temporarily_unavailable');
      expect(setCookieLine(res, CONSOLE_COOKIE)).toBeUndefined();
    } finally {
      sw.answer = null;
    }
    await t.console().get('/api/management/tenants').set('Cookie', s.cookie).expect(200);
  });

  it('signs out with revoke-session and the stored session id: no refresh, no bearer, even after expiry', async () => {
    const { s, accessExpiresAt } = await signedIn('sign-out-by-id@studio.example');
    const record = await readConsoleRecord(t, s);
    await untilExpired(accessExpiresAt);
    const mark = sw.seen.length;
    await signOut(s).expect(204);
    const calls = sw.seen.slice(mark);
    expect(calls.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /management-auth/revoke-session']);
    expect(calls[0]?.headers.authorization).toMatch(/^Basic /);
    expect(await t.redis.exists(s.recordKey)).toBe(0);
    // The control-plane session is gone at the API.
    await t
      .auth()
      .post('/management-auth/token')
      .auth('cli_console', t.config.consoleClientSecret)
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: record?.refreshToken })
      .expect(400);
  });

  it.each([
    [429, '{"error":"rate_limited"}'],
    [401, '{"error":"invalid_client"}'],
  ] as const)(
    'keeps the session when revoke-session answers %i: 503, sign-out can be retried',
    async (status, body) => {
      const { s } = await signedIn(`sign-out-refused-${status}@studio.example`);
      sw.answer = { prefix: '/management-auth/revoke-session', status, body };
      try {
        const res = await signOut(s).expect(503);
        expect(expiresConsoleCookie(res)).toBe(false);
      } finally {
        sw.answer = null;
      }
      await current(s).expect(200);
      await signOut(s).expect(204);
    },
  );
});

/** Contract section 10: AUTH_INTERNAL_URL on another host name and port than AUTH_ORIGIN. */
describe('console BFF reaching the API at AUTH_INTERNAL_URL', () => {
  let sw: UpstreamSwitch;
  let t: TestApp;

  beforeAll(async () => {
    sw = await UpstreamSwitch.start();
    t = await startTestApp({ RATE_LIMITS: 'off', AUTH_INTERNAL_URL: `http://127.0.0.1:${sw.port}` });
    sw.target = t.port;
  });
  afterAll(async () => {
    await t.close();
    await sw.stop();
  });

  it('signs in, calls the API and signs out through the internal address, each call served as the auth host', async () => {
    const s = await consoleSignIn(t, 'internal@studio.example');
    await t.console().get('/api/auth/current').set('Cookie', s.cookie).expect(200);
    await t.console().post('/api/auth/sign-out').set('Cookie', s.cookie).set('Origin', t.consoleOrigin).expect(204);
    const paths = sw.seen.map((r) => r.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '/t/control-plane/.well-known/openid-configuration',
        '/management-auth/token',
        '/management-auth/current',
        '/management-auth/revoke-session',
      ]),
    );
    const authHost = new URL(t.authOrigin).host;
    expect(new Set(sw.seen.map((r) => r.headers.host))).toEqual(new Set([authHost]));
  });
});
