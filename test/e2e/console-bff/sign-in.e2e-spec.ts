import { createHash } from 'node:crypto';
import {
  CONSOLE_COOKIE,
  consoleCallback,
  consoleSignIn,
  consoleStart,
  FLOW_COOKIE,
  readConsoleRecord,
  setCookieLine,
  setCookies,
  signInAtAuthHost,
} from '../../support/console-flow';
import { sha256 } from '../../../src/platform/crypto/digests';
import { startTestApp, type TestApp } from '../../support/test-app';

describe('console BFF sign-in: start and callback (spec 2.3, 3, 4.1; contract section 4)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('POST /api/auth/start needs the exact console Origin', () => {
    const start = () => t.console().post('/api/auth/start');
    const refused: Array<[string, (o: string) => string | undefined]> = [
      ['missing', () => undefined],
      ['the opaque origin "null"', () => 'null'],
      ['another origin', () => 'https://evil.example'],
      ['the console host on another port', (o) => o.replace(/:(\d+)$/, (_, p: string) => `:${Number(p) + 1}`)],
      ['the auth origin', () => t.authOrigin],
      ['the console origin with a trailing slash', (o) => `${o}/`],
      ['the console origin over https', (o) => o.replace('http:', 'https:')],
      ['the console origin cut short by one character', (o) => o.slice(0, -1)],
      ['the console origin in capitals', (o) => o.toUpperCase()],
      ['the console origin followed by a longer host', (o) => `${o}.evil.example`],
    ];
    it.each(refused)('refuses an Origin that is %s, with 403 and no flow cookie', async (_label, origin) => {
      const value = origin(t.consoleOrigin);
      const req = start();
      const res = await (value === undefined ? req : req.set('Origin', value)).expect(403);
      expect(res.body).toEqual({ error: 'forbidden', error_description: expect.any(String) });
      expect(setCookies(res)).toEqual([]);
    });

    it('accepts the exact console Origin, also with the empty form body a browser sends', async () => {
      const res = await start().set('Origin', t.consoleOrigin).type('form').send('').expect(303);
      expect(res.headers.location).toMatch(new RegExp(`^${t.authOrigin}/management-auth/authorize\\?`));
    });
  });

  it('redirects to the discovered authorize endpoint with a fresh state and an S256 challenge, and no secret', async () => {
    const a = await consoleStart(t);
    const b = await consoleStart(t);
    const q = a.authorizeUrl.searchParams;
    expect(`${a.authorizeUrl.origin}${a.authorizeUrl.pathname}`).toBe(`${t.authOrigin}/management-auth/authorize`);
    expect(Object.fromEntries(q)).toEqual({
      client_id: 'cli_console',
      response_type: 'code',
      redirect_uri: `${t.consoleOrigin}/api/auth/callback`,
      scope: 'tenant:read tenant:write',
      state: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      code_challenge_method: 'S256',
    });
    expect(b.authorizeUrl.searchParams.get('state')).not.toBe(q.get('state'));
    expect(b.authorizeUrl.searchParams.get('code_challenge')).not.toBe(q.get('code_challenge'));
    expect(a.authorizeUrl.href).not.toContain(t.config.consoleClientSecret);
  });

  it('sets the flow cookie host-only, Secure, HttpOnly, SameSite=Lax, short-lived', async () => {
    const res = await t.console().post('/api/auth/start').set('Origin', t.consoleOrigin).expect(303);
    const line = setCookieLine(res, FLOW_COOKIE) as string;
    expect(line).toMatch(
      /^__Host-svc_control_flow=[A-Za-z0-9_-]{43}; Max-Age=600; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$/,
    );
    expect(line).not.toMatch(/Domain/i);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('stores the pending state and verifier only sealed, under a key derived from the flow cookie', async () => {
    const { authorizeUrl, flowCookie } = await consoleStart(t);
    const name = `cp:{${sha256(flowCookie.split('=')[1] as string)}}`;
    const sealed = await t.redis.get(name);
    expect(sealed).toEqual(expect.any(String));
    expect(sealed).not.toContain(authorizeUrl.searchParams.get('state'));
    expect(Buffer.from(sealed as string, 'base64url').toString('latin1')).not.toContain('state');
    expect(await t.redis.ttl(name)).toBeGreaterThan(590);
    expect(await t.redis.ttl(name)).toBeLessThanOrEqual(600);
  });

  it('completes sign-in: 303 to /, the console cookie with the spec attributes, the flow cookie expired, no token shown', async () => {
    const start = await consoleStart(t);
    const redirectTo = await signInAtAuthHost(t, start.authorizeUrl, 'complete@studio.example');
    const res = await consoleCallback(t, redirectTo, start.flowCookie).expect(303);
    expect(res.headers.location).toBe('/');
    expect(res.headers['cache-control']).toBe('no-store');
    const consoleLine = setCookieLine(res, CONSOLE_COOKIE) as string;
    // Spec 2.2: Secure, HttpOnly, SameSite=Strict, host-only (no Domain, Path=/), within one day.
    expect(consoleLine).toMatch(
      /^__Host-svc_console=[A-Za-z0-9_-]{43}; Max-Age=86400; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Strict$/,
    );
    const expires = Date.parse(/Expires=([^;]+)/.exec(consoleLine)?.[1] ?? '');
    expect(expires - Date.now()).toBeLessThanOrEqual(86_400_000);
    expect(setCookieLine(res, FLOW_COOKIE)).toMatch(
      /^__Host-svc_control_flow=; Max-Age=0; Path=\/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$/,
    );
    expect(res.text).toBe('See Other. Redirecting to /');
    expect(JSON.stringify(res.headers)).not.toMatch(/eyJ|ses_/);
  });

  it('keeps the session server-side as ciphertext under sha256 of the cookie, with the idle lifetime as TTL', async () => {
    const s = await consoleSignIn(t, 'sealed@studio.example');
    const sealed = (await t.redis.get(s.recordKey)) as string;
    const record = await readConsoleRecord(t, s);
    expect(record).toMatchObject({
      accessToken: expect.stringMatching(/^eyJ/),
      refreshToken: expect.stringMatching(/^ses_/),
      sessionId: expect.stringMatching(/^ses_/),
    });
    expect(sealed).not.toContain(record?.accessToken.slice(0, 20));
    expect(sealed).not.toContain(record?.sessionId);
    expect(Buffer.from(sealed, 'base64url').toString('latin1')).not.toMatch(/ses_|eyJ/);
    expect(s.recordKey).toBe(`cs:{${createHash('sha256').update(s.value).digest('base64url')}}`);
    expect(await t.redis.exists(`cs:{${s.value}}`)).toBe(0);
    const ttl = await t.redis.ttl(s.recordKey);
    expect(ttl).toBeGreaterThan(28_790);
    expect(ttl).toBeLessThanOrEqual(28_800);
    expect((record?.absoluteExpiresAt ?? 0) - (record?.createdAt ?? 0)).toBe(86_400_000);
  });

  describe('callback failures: always 303 to /?error=<code>, the flow cookie expired, no session', () => {
    function expectFailure(res: Awaited<ReturnType<typeof consoleCallback>>, error: string): void {
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe(`/?error=${error}`);
      expect(setCookieLine(res, CONSOLE_COOKIE)).toBeUndefined();
      expect(setCookieLine(res, FLOW_COOKIE)).toMatch(/^__Host-svc_control_flow=; Max-Age=0/);
    }

    it('refuses a callback without the flow cookie (another browser), and the flow still works in its own browser', async () => {
      const start = await consoleStart(t);
      const redirectTo = await signInAtAuthHost(t, start.authorizeUrl, 'nocookie@studio.example');
      expectFailure(await consoleCallback(t, redirectTo, undefined), 'invalid_state');
      // The code was not spent: the pending record belongs to the flow cookie, not to whoever has the URL.
      const res = await consoleCallback(t, redirectTo, start.flowCookie).expect(303);
      expect(res.headers.location).toBe('/');
    });

    it('refuses a state mismatch and consumes the pending record anyway', async () => {
      const start = await consoleStart(t);
      const redirectTo = await signInAtAuthHost(t, start.authorizeUrl, 'mismatch@studio.example');
      const forged = new URL(redirectTo);
      forged.searchParams.set('state', 'x'.repeat(43));
      expectFailure(await consoleCallback(t, forged, start.flowCookie), 'invalid_state');
      // The genuine answer cannot be used afterwards: the pending record was consumed once.
      expectFailure(await consoleCallback(t, redirectTo, start.flowCookie), 'invalid_state');
    });

    it('refuses a replay of a completed callback', async () => {
      const start = await consoleStart(t);
      const redirectTo = await signInAtAuthHost(t, start.authorizeUrl, 'replay@studio.example');
      await consoleCallback(t, redirectTo, start.flowCookie).expect(303).expect('Location', '/');
      expectFailure(await consoleCallback(t, redirectTo, start.flowCookie), 'invalid_state');
    });

    it("refuses the flow cookie of another sign-in (state bound to that cookie's record)", async () => {
      const mine = await consoleStart(t);
      const other = await consoleStart(t);
      const redirectTo = await signInAtAuthHost(t, mine.authorizeUrl, 'swap@studio.example');
      expectFailure(await consoleCallback(t, redirectTo, other.flowCookie), 'invalid_state');
    });

    it('refuses a missing or forged flow cookie value', async () => {
      const start = await consoleStart(t);
      const redirectTo = await signInAtAuthHost(t, start.authorizeUrl, 'forged@studio.example');
      expectFailure(await consoleCallback(t, redirectTo, `${FLOW_COOKIE}=${'A'.repeat(43)}`), 'invalid_state');
      expectFailure(await consoleCallback(t, redirectTo, `${FLOW_COOKIE}=not valid`), 'invalid_state');
    });

    it('reports an error the authorization server returned as sign_in_failed', async () => {
      const start = await consoleStart(t);
      const state = start.authorizeUrl.searchParams.get('state') as string;
      const url = new URL(`${t.consoleOrigin}/api/auth/callback`);
      url.searchParams.set('error', 'access_denied');
      url.searchParams.set('state', state);
      url.searchParams.set('iss', `${t.authOrigin}/t/control-plane`);
      expectFailure(await consoleCallback(t, url, start.flowCookie), 'sign_in_failed');
    });

    it('refuses an answer with a wrong or missing iss (RFC 9207), without spending the code', async () => {
      const start = await consoleStart(t);
      const redirectTo = await signInAtAuthHost(t, start.authorizeUrl, 'iss@studio.example');
      const wrongIss = new URL(redirectTo);
      wrongIss.searchParams.set('iss', 'https://evil.example/t/control-plane');
      expectFailure(await consoleCallback(t, wrongIss, start.flowCookie), 'sign_in_failed');
      const again = await consoleStart(t);
      const redirect2 = await signInAtAuthHost(t, again.authorizeUrl, 'iss@studio.example');
      const noIss = new URL(redirect2);
      noIss.searchParams.delete('iss');
      expectFailure(await consoleCallback(t, noIss, again.flowCookie), 'sign_in_failed');
    });

    it('reports a code the token endpoint refuses as sign_in_failed', async () => {
      const start = await consoleStart(t);
      const redirectTo = await signInAtAuthHost(t, start.authorizeUrl, 'badcode@studio.example');
      const forged = new URL(redirectTo);
      forged.searchParams.set('code', 'B'.repeat(43));
      expectFailure(await consoleCallback(t, forged, start.flowCookie), 'sign_in_failed');
    });
  });
});
