import {
  CONSOLE_COOKIE,
  consoleSignIn,
  expiresConsoleCookie,
  readConsoleRecord,
  setCookieLine,
  type ConsoleSession,
} from '../../support/console-flow';
import { startTestApp, type TestApp } from '../../support/test-app';

// @redis-cluster console-sessions.store:del authorization-codes.store:CONSUME

describe('console session: current, tampering, sign-out, upstream 401 (spec 2.2, 3, 4.1, 7)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await t.close();
  });

  const current = (cookie?: string) => {
    const req = t.console().get('/api/auth/current');
    return cookie === undefined ? req : req.set('Cookie', cookie);
  };
  const signOut = (cookie: string, origin: string | undefined) => {
    const req = t.console().post('/api/auth/sign-out').set('Cookie', cookie);
    return origin === undefined ? req : req.set('Origin', origin);
  };
  function expectNoSession(res: Awaited<ReturnType<typeof current>>, cookieExpired: boolean): void {
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'unauthorized', error_description: expect.any(String) });
    expect(res.headers['cache-control']).toBe('no-store');
    expect(expiresConsoleCookie(res)).toBe(cookieExpired);
  }

  it('answers current with exactly {user:{id,email,email_verified}}, no-store, and never a token', async () => {
    const s = await consoleSignIn(t, 'Current@Studio.example');
    const res = await current(s.cookie).expect(200);
    expect(res.body).toEqual({
      user: { id: expect.stringMatching(/^usr_/), email: 'current@studio.example', email_verified: true },
    });
    expect(res.headers['cache-control']).toBe('no-store');
    const record = await readConsoleRecord(t, s);
    for (const secret of [record?.accessToken, record?.refreshToken, record?.sessionId, t.config.consoleClientSecret]) {
      expect(res.text).not.toContain(secret);
      expect(JSON.stringify(res.headers)).not.toContain(secret);
    }
  });

  it('answers 401 without a cookie, and does not send a Set-Cookie then', async () => {
    expectNoSession(await current(), false);
    expect(setCookieLine(await current(), CONSOLE_COOKIE)).toBeUndefined();
  });

  describe('a tampered cookie or record is 401 and the cookie is expired', () => {
    let s: ConsoleSession;
    beforeAll(async () => {
      s = await consoleSignIn(t, 'tamper@studio.example');
    });

    it.each([
      ['one character changed', (v: string) => `${v.slice(0, -1)}${v.endsWith('A') ? 'B' : 'A'}`],
      ['truncated', (v: string) => v.slice(0, 42)],
      ['extended', (v: string) => `${v}A`],
      ['not base64url', (v: string) => `${v.slice(0, 42)}.`],
      // The digest that names the record is no credential: only the cookie value is.
      ['replaced by the digest that names its record', (_v: string, handle: string) => handle],
    ])('cookie %s', async (_label, change) => {
      const value = change(s.value, s.recordKey.slice(4, -1));
      expectNoSession(await current(`${CONSOLE_COOKIE}=${value}`), true);
      await current(s.cookie).expect(200);
    });

    it('two console cookies in one header are ambiguous and refused', async () => {
      expectNoSession(await current(`${s.cookie}; ${s.cookie}`), true);
    });

    it('a record with flipped ciphertext bytes fails to open: 401', async () => {
      const victim = await consoleSignIn(t, 'flip@studio.example');
      const sealed = (await t.redis.get(victim.recordKey)) as string;
      const raw = Buffer.from(sealed, 'base64url');
      raw[raw.length - 1] = (raw[raw.length - 1] ?? 0) ^ 1;
      await t.redis.set(victim.recordKey, raw.toString('base64url'), 'KEEPTTL');
      expectNoSession(await current(victim.cookie), true);
    });

    it('a record moved under another session name fails to open (associated data binds the name)', async () => {
      const a = await consoleSignIn(t, 'move-a@studio.example');
      const b = await consoleSignIn(t, 'move-b@studio.example');
      await t.redis.set(b.recordKey, (await t.redis.get(a.recordKey)) as string, 'KEEPTTL');
      expectNoSession(await current(b.cookie), true);
      await current(a.cookie).expect(200);
    });
  });

  describe('sign-out', () => {
    it.each([
      ['missing', undefined],
      ['"null"', 'null'],
      ['another origin', 'https://evil.example'],
      ['another port', 'other-port'],
      ['the auth origin', 'auth'],
    ])('needs the exact console Origin: %s is 403 and the session survives', async (_label, origin) => {
      const s = await consoleSignIn(t, `signout-origin-${String(origin).replace(/\W/g, '')}@studio.example`);
      const value =
        origin === 'other-port'
          ? t.consoleOrigin.replace(/:(\d+)$/, (_, p: string) => `:${Number(p) + 1}`)
          : origin === 'auth'
            ? t.authOrigin
            : origin;
      const res = await signOut(s.cookie, value).expect(403);
      expect(res.body.error).toBe('forbidden');
      expect(setCookieLine(res, CONSOLE_COOKIE)).toBeUndefined();
      await current(s.cookie).expect(200);
    });

    it('revokes the control-plane session at the API, clears the record and expires the cookie', async () => {
      const s = await consoleSignIn(t, 'signout@studio.example');
      const record = await readConsoleRecord(t, s);
      const bearer = `Bearer ${record?.accessToken}`;
      await t.auth().get('/management-auth/current').set('Authorization', bearer).expect(200);

      const res = await signOut(s.cookie, t.consoleOrigin).expect(204);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(setCookieLine(res, CONSOLE_COOKIE)).toMatch(
        /^__Host-svc_console=; Max-Age=0; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Strict$/,
      );
      expect(await t.redis.exists(s.recordKey)).toBe(0);
      // The control-plane session is gone: its access token and refresh token are dead at the API.
      await t.auth().get('/management-auth/current').set('Authorization', bearer).expect(401);
      await t
        .auth()
        .post('/management-auth/token')
        .auth('cli_console', t.config.consoleClientSecret)
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: record?.refreshToken })
        .expect(400);
      expectNoSession(await current(s.cookie), true);
    });

    it('answers 401 for a session that already ended', async () => {
      const s = await consoleSignIn(t, 'signout-twice@studio.example');
      await signOut(s.cookie, t.consoleOrigin).expect(204);
      expectNoSession(await signOut(s.cookie, t.consoleOrigin), true);
    });
  });

  describe('an upstream 401 drops the console session (spec 3, 7.1)', () => {
    it('on current: the control-plane session revoked elsewhere ends the console session', async () => {
      const s = await consoleSignIn(t, 'revoked-elsewhere@studio.example');
      const record = await readConsoleRecord(t, s);
      await t.auth().post('/management-auth/revoke').set('Authorization', `Bearer ${record?.accessToken}`).expect(200);
      expectNoSession(await current(s.cookie), true);
      expect(await t.redis.exists(s.recordKey)).toBe(0);
    });

    it('on a proxied call: 401 unauthorized, record cleared, cookie expired', async () => {
      const s = await consoleSignIn(t, 'revoked-proxy@studio.example');
      await t.console().get('/api/management/tenants').set('Cookie', s.cookie).expect(200);
      const record = await readConsoleRecord(t, s);
      await t.auth().post('/management-auth/revoke').set('Authorization', `Bearer ${record?.accessToken}`).expect(200);
      const res = await t.console().get('/api/management/tenants').set('Cookie', s.cookie);
      expectNoSession(res, true);
      expect(await t.redis.exists(s.recordKey)).toBe(0);
      // A later request with the same cookie finds nothing.
      expectNoSession(await current(s.cookie), true);
    });
  });
});
