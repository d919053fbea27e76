import { randomBytes } from 'node:crypto';
import type { Response } from 'supertest';
import { GuestClient } from '../../../sdk/src/guest-client';
import { MemoryCookieJar } from '../../../sdk/src/cookie-jar';
import { MemorySecureStorage } from '../../../sdk/src/secure-storage';
import { ClientsRepository } from '../../../src/directory/clients.repository';
import { emailProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

/**
 * Issue 22 finding 7: a browser client's refresh token also lives in an HttpOnly cookie, so a game
 * page need keep none where its scripts (ad SDKs included) can read it. Spec 4.3 rule 4 and
 * contract sections 6, 11 and 13.
 */
const IDLE_TTL = 86_400;
const GAME_ORIGIN = 'https://play.acme.example'; // the origin of cli_game's redirect URI
const COOKIE = '__Host-svc_refresh_acme.cli_game';
const flowId = (): string => `flw_${randomBytes(18).toString('base64url')}`;

const setCookies = (res: Response): string[] => ([] as string[]).concat(res.headers['set-cookie'] ?? []);
const refreshCookieOf = (lines: readonly string[], name = COOKIE): string | undefined =>
  lines.find((c) => c.startsWith(`${name}=`));
const valueOf = (line: string | undefined): string | undefined => line?.split(';')[0]?.split('=')[1];
/** The exact attributes, after the value: Max-Age, Path, Expires, HttpOnly, Secure, then SameSite. */
const LAX = new RegExp(`^${COOKIE}=[^;]+; Max-Age=${IDLE_TTL}; Path=/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$`);
const PARTITIONED = new RegExp(
  `^${COOKIE}=[^;]+; Max-Age=${IDLE_TTL}; Path=/; Expires=[^;]+; HttpOnly; Secure; Partitioned; SameSite=None$`,
);
const CLEARED_LAX = new RegExp(`^${COOKIE}=; Max-Age=0; Path=/; Expires=[^;]+; HttpOnly; Secure; SameSite=Lax$`);
const CLEARED_PARTITIONED = new RegExp(
  `^${COOKIE}=; Max-Age=0; Path=/; Expires=[^;]+; HttpOnly; Secure; Partitioned; SameSite=None$`,
);

describe('the HttpOnly refresh cookie of browser clients (issue 22 finding 7)', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off', CUSTOMER_SESSION_IDLE_TTL: String(IDLE_TTL) });
    // A native client that may refresh: it gets a refresh token in the body, never a cookie.
    await w.t.app.get(ClientsRepository).insert({
      id: 'cli_native_rt',
      tenantId: 'acme',
      name: 'native with refresh',
      type: 'native',
      enabled: true,
      scopes: ['openid', 'offline_access'],
      redirectUris: [],
      secretDigest: null,
    });
  });
  afterAll(async () => {
    await w.close();
  });

  const post = (path: string, body: Record<string, string>, opts: { origin?: string; cookie?: string } = {}) => {
    let req = w.t.auth().post(path);
    if (opts.origin !== undefined) req = req.set('Origin', opts.origin);
    if (opts.cookie !== undefined) req = req.set('Cookie', opts.cookie);
    return req.send(body);
  };
  const guest = async (opts: { origin?: string; clientId?: string; tenant?: string } = {}) => {
    const res = await post(
      `/t/${opts.tenant ?? 'acme'}/guest`,
      { client_id: opts.clientId ?? 'cli_game', browser_flow_id: flowId() },
      opts,
    ).expect(201);
    return res;
  };
  const refresh = (body: Record<string, string>, opts: { origin?: string; cookie?: string; tenant?: string } = {}) =>
    post(`/t/${opts.tenant ?? 'acme'}/token`, { grant_type: 'refresh_token', client_id: 'cli_game', ...body }, opts);

  describe('set with every token set for a browser client', () => {
    it('on guest creation without an Origin: SameSite=Lax, unpartitioned, the idle lifetime, the body’s token', async () => {
      const res = await guest();
      const cookie = refreshCookieOf(setCookies(res));
      expect(cookie).toMatch(LAX);
      expect(valueOf(cookie)).toBe(res.body.refresh_token);
      // The body still carries the token (contract 6 fixes the shape).
      expect(res.body.refresh_token).toEqual(expect.any(String));
    });

    it('on guest creation by CORS from a registered web origin: SameSite=None; Partitioned', async () => {
      const res = await guest({ origin: GAME_ORIGIN });
      expect(res.headers['access-control-allow-origin']).toBe(GAME_ORIGIN);
      const cookie = refreshCookieOf(setCookies(res));
      expect(cookie).toMatch(PARTITIONED);
      expect(valueOf(cookie)).toBe(res.body.refresh_token);
    });

    it('on refresh, renewed with the successor, in both modes', async () => {
      const g = await guest();
      const plain = await refresh({ refresh_token: g.body.refresh_token }).expect(200);
      expect(refreshCookieOf(setCookies(plain))).toMatch(LAX);
      expect(valueOf(refreshCookieOf(setCookies(plain)))).toBe(plain.body.refresh_token);
      const cross = await refresh({ refresh_token: plain.body.refresh_token }, { origin: GAME_ORIGIN }).expect(200);
      expect(refreshCookieOf(setCookies(cross))).toMatch(PARTITIONED);
      expect(valueOf(refreshCookieOf(setCookies(cross)))).toBe(cross.body.refresh_token);
    });

    it('on upgrade and on sign-in, holding the new session’s token', async () => {
      const seen: string[][] = [];
      const recording = (): GuestClient =>
        new GuestClient({
          baseUrl: w.t.authOrigin,
          tenantId: 'acme',
          clientId: 'cli_game',
          storage: new MemorySecureStorage(),
          cookies: new MemoryCookieJar(),
          autoRefresh: false,
          fetch: async (url, init) => {
            const res = await fetch(url, init);
            seen.push(res.headers.getSetCookie());
            return res;
          },
        });
      const owner = recording();
      await owner.createGuest();
      await owner.createLinkingIntent();
      const upgraded = await owner.upgrade(await emailProof(w, owner, 'cookie-owner@example.com'));
      const upgradeCookie = refreshCookieOf(seen.at(-1) ?? []);
      expect(upgradeCookie).toMatch(LAX);
      expect(valueOf(upgradeCookie)).toBe(upgraded.refresh_token);

      const other = recording();
      await other.createGuest();
      const signedIn = await other.signIn(await emailProof(w, other, 'cookie-owner@example.com'));
      expect(signedIn.user_id).toBe(upgraded.user_id);
      const signInCookie = refreshCookieOf(seen.at(-1) ?? []);
      expect(signInCookie).toMatch(LAX);
      expect(valueOf(signInCookie)).toBe(signedIn.refresh_token);
    });

    it('never for a native client, though its body carries a refresh token', async () => {
      const res = await guest({ clientId: 'cli_native_rt' });
      expect(res.body.refresh_token).toEqual(expect.any(String));
      expect(setCookies(res).filter((c) => c.startsWith('__Host-svc_refresh_'))).toEqual([]);
      const refreshed = await refresh({ refresh_token: res.body.refresh_token, client_id: 'cli_native_rt' }).expect(
        200,
      );
      expect(setCookies(refreshed)).toEqual([]);
    });

    it('not when the client has no offline_access (no refresh token at all)', async () => {
      const res = await guest({ clientId: 'cli_native' });
      expect(res.body.refresh_token).toBeUndefined();
      expect(setCookies(res).filter((c) => c.startsWith('__Host-svc_refresh_'))).toEqual([]);
    });
  });

  describe('used by the token endpoint', () => {
    it('refreshes with the cookie alone, and the successor replaces it', async () => {
      const g = await guest({ origin: GAME_ORIGIN });
      const res = await refresh({}, { origin: GAME_ORIGIN, cookie: `${COOKIE}=${g.body.refresh_token}` }).expect(200);
      expect(res.body.session_id).toBe(g.body.session_id);
      expect(res.body.refresh_token).not.toBe(g.body.refresh_token);
      expect(valueOf(refreshCookieOf(setCookies(res)))).toBe(res.body.refresh_token);
      // The cookie alone, as a form-encoded grant too (RFC 6749).
      const form = await w.t
        .auth()
        .post('/t/acme/token')
        .set('Cookie', `${COOKIE}=${res.body.refresh_token}`)
        .type('form')
        .send({ grant_type: 'refresh_token', client_id: 'cli_game' })
        .expect(200);
      expect(form.body.session_id).toBe(g.body.session_id);
    });

    it('lets a token in the body win over the cookie', async () => {
      const inBody = await guest();
      const inCookie = await guest();
      const res = await refresh(
        { refresh_token: inBody.body.refresh_token },
        { cookie: `${COOKIE}=${inCookie.body.refresh_token}` },
      ).expect(200);
      expect(res.body.session_id).toBe(inBody.body.session_id);
      // The cookie's session was not touched: its token still refreshes.
      const untouched = await refresh({ refresh_token: inCookie.body.refresh_token }).expect(200);
      expect(untouched.body.session_id).toBe(inCookie.body.session_id);
    });

    it('answers 400 invalid_request with neither a body token nor the cookie', async () => {
      const res = await refresh({}).expect(400);
      expect(res.body.error).toBe('invalid_request');
      expect(setCookies(res)).toEqual([]);
    });

    it.each([
      ['another client of the tenant', { client_id: 'cli_other_browser' }, {}],
      ['the same client id in another tenant', { client_id: 'cli_game' }, { tenant: 'beta' }],
    ])('never reads the cookie of %s', async (_, body, opts) => {
      await w.t.app
        .get(ClientsRepository)
        .insert({
          id: 'cli_other_browser',
          tenantId: 'acme',
          name: 'other browser',
          type: 'browser',
          enabled: true,
          scopes: ['openid', 'offline_access'],
          redirectUris: ['https://other.acme.example/cb'],
          secretDigest: null,
        })
        .catch(() => undefined); // inserted by the first case
      const g = await guest();
      const res = await refresh(body, { ...opts, cookie: `${COOKIE}=${g.body.refresh_token}` });
      expect([res.status, res.body.error]).toEqual([400, 'invalid_request']);
      // A tenant-beta cookie holding acme's token is refused by the session's binding anyway.
      const beta = await refresh(
        { client_id: 'cli_beta' },
        { tenant: 'beta', cookie: `__Host-svc_refresh_beta.cli_beta=${g.body.refresh_token}` },
      );
      expect([beta.status, beta.body.error]).toEqual([400, 'invalid_grant']);
      // The acme session is intact.
      await refresh({ refresh_token: g.body.refresh_token }).expect(200);
    });

    it('expires the cookie when it is refused (a dead session), partitioned as it was set', async () => {
      const g = await guest({ origin: GAME_ORIGIN });
      await post('/t/acme/revoke', { token: g.body.refresh_token, client_id: 'cli_game' }).expect(200);
      const cross = await refresh({}, { origin: GAME_ORIGIN, cookie: `${COOKIE}=${g.body.refresh_token}` });
      expect([cross.status, cross.body.error]).toEqual([400, 'invalid_grant']);
      expect(setCookies(cross)).toEqual([expect.stringMatching(CLEARED_PARTITIONED)]);
      const plain = await refresh({}, { cookie: `${COOKIE}=${g.body.refresh_token}` });
      expect([plain.status, plain.body.error]).toEqual([400, 'invalid_grant']);
      expect(setCookies(plain)).toEqual([expect.stringMatching(CLEARED_LAX)]);
    });

    it('keeps a live cookie when a stale token in the body is refused', async () => {
      const dead = await guest();
      await post('/t/acme/revoke', { token: dead.body.refresh_token, client_id: 'cli_game' }).expect(200);
      const live = await guest();
      const res = await refresh(
        { refresh_token: dead.body.refresh_token },
        { cookie: `${COOKIE}=${live.body.refresh_token}` },
      ).expect(400);
      expect(res.body.error).toBe('invalid_grant');
      expect(setCookies(res)).toEqual([]);
      await refresh({}, { cookie: `${COOKIE}=${live.body.refresh_token}` }).expect(200);
    });
  });

  it('serves the SDK in cookie mode end to end: it never holds the token, refresh and sign-out work', async () => {
    const jar = new MemoryCookieJar(); // stands in for the browser's cookie store
    const page = new Map<string, string>();
    const c = new GuestClient({
      baseUrl: w.t.authOrigin,
      tenantId: 'acme',
      clientId: 'cli_game',
      cookies: jar,
      refreshTokenIn: 'cookie',
      sharedStorage: {
        getItem: (k) => page.get(k) ?? null,
        setItem: (k, v) => void page.set(k, v),
        removeItem: (k) => void page.delete(k),
      },
      autoRefresh: false,
    });
    const created = await c.createGuest();
    expect(created.refresh_token).toBeUndefined();
    const first = jar.get(COOKIE) as string;
    expect(first).toEqual(expect.any(String));
    const refreshed = await c.refresh();
    expect(refreshed.session_id).toBe(created.session_id);
    expect(jar.get(COOKIE)).not.toBe(first);
    expect([...page.values()].join(' ')).not.toContain(jar.get(COOKIE) as string);
    const live = jar.get(COOKIE) as string;
    await c.revoke();
    expect(jar.get(COOKIE)).toBeUndefined();
    const after = await refresh({ refresh_token: live });
    expect([after.status, after.body.error]).toEqual([400, 'invalid_grant']);
  });

  describe('revocation and erasure', () => {
    it('revokes the cookie’s session without a token in the body, and expires the cookie', async () => {
      const g = await guest({ origin: GAME_ORIGIN });
      const res = await post(
        '/t/acme/revoke',
        { client_id: 'cli_game' },
        { origin: GAME_ORIGIN, cookie: `${COOKIE}=${g.body.refresh_token}` },
      ).expect(200);
      expect(res.body).toEqual({});
      expect(setCookies(res)).toEqual([expect.stringMatching(CLEARED_PARTITIONED)]);
      const after = await refresh({ refresh_token: g.body.refresh_token });
      expect([after.status, after.body.error]).toEqual([400, 'invalid_grant']);
    });

    it('leaves the cookie alone when the body revokes another token', async () => {
      const other = await guest();
      const kept = await guest();
      const res = await post(
        '/t/acme/revoke',
        { token: other.body.refresh_token, client_id: 'cli_game' },
        { cookie: `${COOKIE}=${kept.body.refresh_token}` },
      ).expect(200);
      expect(setCookies(res)).toEqual([]);
      await refresh({}, { cookie: `${COOKIE}=${kept.body.refresh_token}` }).expect(200);
    });

    it('answers 400 invalid_request to a revocation with neither a token nor the cookie', async () => {
      const res = await post('/t/acme/revoke', { client_id: 'cli_game' }).expect(400);
      expect(res.body.error).toBe('invalid_request');
    });

    it('expires the cookie when the player erases the account (DELETE /me)', async () => {
      const g = await guest({ origin: GAME_ORIGIN });
      const res = await w.t
        .auth()
        .delete('/t/acme/me')
        .set('Origin', GAME_ORIGIN)
        .set('Authorization', `Bearer ${g.body.access_token}`)
        .set('Cookie', `${COOKIE}=${g.body.refresh_token}`)
        .expect(200);
      expect(setCookies(res)).toEqual([expect.stringMatching(CLEARED_PARTITIONED)]);
    });

    it('leaves alone a cookie that holds another guest by then, which keeps its session (DELETE /me)', async () => {
      // Two pages of the game's site (play.example and www.play.example share the site's cookie,
      // not localStorage): the other page started a guest since, and the cookie is that guest's only
      // credential (contract 13), as a revocation of another token already leaves it alone.
      const erased = await guest({ origin: GAME_ORIGIN });
      const other = await guest({ origin: GAME_ORIGIN });
      const res = await w.t
        .auth()
        .delete('/t/acme/me')
        .set('Origin', GAME_ORIGIN)
        .set('Authorization', `Bearer ${erased.body.access_token}`)
        .set('Cookie', `${COOKIE}=${other.body.refresh_token}`)
        .expect(200);
      expect(setCookies(res)).toEqual([]);
      await refresh({}, { cookie: `${COOKIE}=${other.body.refresh_token}` }).expect(200);
    });
  });
});
