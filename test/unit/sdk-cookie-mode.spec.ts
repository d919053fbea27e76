import { GuestApiError, GuestClient, type GuestClientOptions } from '../../sdk/src/guest-client';
import { processLock } from '../../sdk/src/refresh-lock';
import { MemorySecureStorage } from '../../sdk/src/secure-storage';
import type { PersistenceChange } from '../../sdk/src/session-events';

/**
 * Issue 22 finding 7 in the SDK: in a browser the refresh token lives in the service's HttpOnly
 * cookie. The client keeps none in page storage and hands none to the game; the origin's tabs
 * share only the session id, take turns under one lock, and follow a session another tab replaced.
 */

const MARKER = 'svc-auth:acme:cli_game:cookie_session';

/** An unsigned JWT: the SDK only reads the claims of tokens it got over TLS. */
function jwt(claims: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'ES256' })}.${part(claims)}.sig`;
}

/** A page's Web Storage, shared by the tabs given the same one. */
class FakeWebStorage {
  readonly values = new Map<string, string>();
  getItem(key: string): string | null {
    return this.values.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.values.set(key, value);
  }
  removeItem(key: string): void {
    this.values.delete(key);
  }
}

interface Call {
  readonly path: string;
  readonly body: Record<string, string>;
  readonly credentials: RequestInit['credentials'];
  /** The refresh cookie the browser sent with the call. */
  readonly cookie: string | null;
}

/** The service and the browser's cookie store: the cookie rotates with every refresh. */
class CookieService {
  readonly calls: Call[] = [];
  readonly bearers: { path: string; authorization: string | null }[] = [];
  cookie: string | null = null;
  private serial = 0;
  refuse: 'invalid_grant' | null = null;
  /** The browser stores no cookie of the service (third-party cookies blocked). */
  refusesCookie = false;
  expiresIn = 300;
  session = 'ses_1';
  user = 'usr_1';

  readonly fetch = async (url: string, init?: RequestInit & { body?: string }): Promise<Response> => {
    const path = new URL(url).pathname.replace('/t/acme/', '');
    const body = init?.body ? (JSON.parse(init.body) as Record<string, string>) : {};
    this.calls.push({ path, body, credentials: init?.credentials, cookie: this.cookie });
    this.bearers.push({ path, authorization: new Headers(init?.headers).get('Authorization') });
    await new Promise((r) => setTimeout(r, 5));
    if (path === 'revoke') {
      this.cookie = null;
      return json(200, {});
    }
    if (path === 'token') {
      // The body's token wins over the cookie (src/guest/customer-refresh.grant.ts).
      if (!body.refresh_token && this.cookie === null) return json(400, { error: 'invalid_request' });
      if (this.refuse) {
        if (!body.refresh_token) this.cookie = null;
        return json(400, { error: 'invalid_grant', error_description: '' });
      }
    }
    return json(path === 'guest' ? 201 : 200, { ...this.issue(), ...(path === 'guest' ? { user_id: this.user } : {}) });
  };

  private issue() {
    this.serial += 1;
    const refresh = `rt_${this.serial}`;
    if (!this.refusesCookie) this.cookie = refresh;
    return {
      access_token: jwt({ sub: this.user, guest: true, n: this.serial }),
      token_type: 'Bearer',
      expires_in: this.expiresIn,
      refresh_token: refresh,
      scope: 'openid offline_access',
      session_id: this.session,
    };
  }

  tokenCalls(): Call[] {
    return this.calls.filter((c) => c.path === 'token');
  }
}

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

function tab(service: CookieService, page: FakeWebStorage, opts: Partial<GuestClientOptions> = {}): GuestClient {
  return new GuestClient({
    baseUrl: 'https://auth.example',
    tenantId: 'acme',
    clientId: 'cli_game',
    sharedStorage: page,
    fetch: service.fetch as unknown as typeof fetch,
    autoRefresh: false,
    ...opts,
  });
}

/** Two tabs of one origin: the first starts a guest, the second's page load proves the session. */
async function twoTabsOnOneGuest(opts: Partial<GuestClientOptions> = {}) {
  const service = new CookieService();
  const page = new FakeWebStorage();
  const one = tab(service, page, opts);
  const two = tab(service, page, opts);
  await one.createGuest();
  await two.refresh();
  return { service, page, one, two };
}

/** Nothing in page storage is, or contains, a refresh token the service issued. */
function noRefreshTokenIn(page: FakeWebStorage): void {
  for (const [key, value] of page.values) {
    expect(key).not.toMatch(/refresh_token/);
    expect(value).not.toMatch(/rt_\d+/);
  }
}

describe('the SDK in cookie mode (the default in a browser)', () => {
  it('is the default without storage and a jar, and not with either', () => {
    const service = new CookieService();
    expect(tab(service, new FakeWebStorage()).cookieMode).toBe(true);
    expect(
      tab(service, new FakeWebStorage(), { cookies: { header: () => undefined, store() {}, get: () => undefined } })
        .cookieMode,
    ).toBe(false);
    expect(
      tab(service, new FakeWebStorage(), {
        storage: new MemorySecureStorage(),
      }).cookieMode,
    ).toBe(false);
  });

  it('refreshes with the cookie: no token in the body, credentials included, none kept or handed out', async () => {
    const service = new CookieService();
    const page = new FakeWebStorage();
    const c = tab(service, page);
    const created = await c.createGuest();
    expect(created.refresh_token).toBeUndefined();
    expect(created.user_id).toBe('usr_1');
    const set = await c.refresh();
    expect(set.refresh_token).toBeUndefined();
    expect(service.tokenCalls()).toEqual([
      {
        path: 'token',
        body: { grant_type: 'refresh_token', client_id: 'cli_game' },
        credentials: 'include',
        cookie: 'rt_1',
      },
    ]);
    expect(page.getItem(MARKER)).toBe('ses_1');
    noRefreshTokenIn(page);
  });

  it('drops what an earlier release kept in page storage', async () => {
    const service = new CookieService();
    const page = new FakeWebStorage();
    page.setItem('svc-auth:acme:cli_game:refresh_token', 'rt_old');
    page.setItem('svc-auth:acme:cli_game:session', '{"v":1,"refresh_token":"rt_old"}');
    await tab(service, page).createGuest();
    expect([...page.values.keys()]).toEqual([MARKER]);
  });

  it('moves a refresh token an earlier release kept in localStorage into the cookie, once', async () => {
    const service = new CookieService();
    const page = new FakeWebStorage();
    page.setItem('svc-auth:acme:cli_game:refresh_token', 'rt_legacy');
    const c = tab(service, page);
    const set = await c.refresh();
    expect(set.refresh_token).toBeUndefined();
    expect(service.tokenCalls().map((call) => call.body.refresh_token)).toEqual(['rt_legacy']);
    expect([...page.values.keys()]).toEqual([MARKER]);
    await c.refresh();
    expect(service.tokenCalls().at(-1)?.body.refresh_token).toBeUndefined();
    noRefreshTokenIn(page);
  });

  it('answers no_refresh_token when neither page storage nor the browser holds a session', async () => {
    const service = new CookieService();
    const c = tab(service, new FakeWebStorage());
    await expect(c.refresh()).rejects.toMatchObject({ code: 'no_refresh_token' });
    expect(service.tokenCalls().map((call) => call.cookie)).toEqual([null]);
  });

  it('resumes the session from the cookie when page storage was cleared and the cookie lives on', async () => {
    // Safari deletes a site's script-written storage after seven days without a visit; the
    // service's HttpOnly cookie is not script-written and outlives it.
    const service = new CookieService();
    const before = tab(service, new FakeWebStorage());
    const created = await before.createGuest();
    const after = tab(service, new FakeWebStorage());
    const set = await after.refresh();
    expect(set.session_id).toBe(created.session_id);
    expect(after.userId).toBe(created.user_id);
    expect(service.tokenCalls().map((call) => call.cookie)).toEqual(['rt_1']);
  });

  it('keeps the session when page storage is full: the cookie holds it, the id stays in memory', async () => {
    const service = new CookieService();
    const page = new FakeWebStorage();
    // The game's own saves filled the origin's quota: every write of a new key is refused.
    page.setItem = (key: string) => {
      if (!page.values.has(key)) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    };
    const c = tab(service, page);
    const created = await c.createGuest();
    expect(c.userId).toBe(created.user_id);
    expect(await c.getAccessToken()).toBe(c.accessToken);
    await c.refresh();
    expect(c.sessionId).toBe(created.session_id);
    expect(service.tokenCalls()).toHaveLength(1);
    // A reload resumes the player from the cookie.
    const reloaded = tab(service, page);
    await reloaded.refresh();
    expect(reloaded.userId).toBe(created.user_id);
  });

  it('tells once that page storage refused the session id, and once that it keeps it again', async () => {
    const service = new CookieService();
    const page = new FakeWebStorage();
    let full = true;
    page.setItem = (key: string, value: string) => {
      if (full) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      page.values.set(key, value);
    };
    const c = tab(service, page);
    const heard: PersistenceChange[] = [];
    c.on('persistence', (change) => heard.push(change));
    await c.createGuest();
    await c.refresh();
    await c.refresh();
    expect(heard).toEqual([
      { saved: false, item: 'session_id', error: expect.objectContaining({ name: 'QuotaExceededError' }) },
    ]);
    full = false;
    await c.refresh();
    await c.refresh();
    expect(heard.slice(1)).toEqual([{ saved: true, item: 'session_id' }]);
    expect(page.values.get(MARKER)).toBe(c.sessionId);
  });

  it('says nothing of storage while page storage keeps every write, in every tab', async () => {
    const heard: string[] = [];
    const { service, one, two } = await twoTabsOnOneGuest();
    for (const c of [one, two]) c.on('persistence', (change) => heard.push(`${change.saved}`));
    await one.refresh();
    await two.refresh();
    service.session = 'ses_2';
    await one.createGuest();
    await two.getAccessToken();
    expect(two.sessionId).toBe('ses_2');
    expect(heard).toEqual([]);
  });

  it('keeps the session where the browser refuses page storage altogether, and tells the game', async () => {
    const service = new CookieService();
    const had = Object.getOwnPropertyDescriptor(globalThis, 'localStorage');
    // Storage blocked for the site: reading window.localStorage throws.
    Object.defineProperty(globalThis, 'localStorage', {
      configurable: true,
      get() {
        throw new DOMException('Access is denied for this document.', 'SecurityError');
      },
    });
    try {
      const c = new GuestClient({
        baseUrl: 'https://auth.example',
        tenantId: 'acme',
        clientId: 'cli_game',
        fetch: service.fetch as unknown as typeof fetch,
        autoRefresh: false,
      });
      const heard: PersistenceChange[] = [];
      c.on('persistence', (change) => heard.push(change));
      const created = await c.createGuest();
      await c.refresh();
      expect(c.userId).toBe(created.user_id);
      // The game can warn the player: the session is not saved beyond this page.
      expect(heard).toEqual([
        { saved: false, item: 'session_id', error: expect.objectContaining({ name: 'SecurityError' }) },
      ]);
    } finally {
      if (had) Object.defineProperty(globalThis, 'localStorage', had);
      else delete (globalThis as { localStorage?: unknown }).localStorage;
    }
  });

  it('lets two tabs refresh at once in turn: each presents the cookie as the other left it', async () => {
    // The origin's Web Lock, for tabs of one page in a test.
    const { service, page, one, two } = await twoTabsOnOneGuest({ lock: processLock() });
    await Promise.all([one.refresh(), two.refresh(), one.refresh()]);
    const presented = service.tokenCalls().map((c) => c.cookie);
    expect(presented).toEqual(['rt_1', 'rt_2', 'rt_3']);
    expect([one.userId, two.userId]).toEqual(['usr_1', 'usr_1']);
    noRefreshTokenIn(page);
  });

  it('keeps a fresh access token while only the session’s token rotated in another tab', async () => {
    const { service, one, two } = await twoTabsOnOneGuest();
    await one.refresh();
    const before = service.calls.length;
    expect(await two.getAccessToken()).toBe(two.accessToken);
    expect(service.calls.length).toBe(before);
  });

  it('follows a session another tab replaced (an upgrade, a sign-in): refreshes and reports it adopted', async () => {
    const { service, one, two } = await twoTabsOnOneGuest();
    const seen: string[] = [];
    two.on('session', (change) => seen.push(`${change.reason}:${change.sessionId}`));
    service.session = 'ses_2';
    await one.createGuest(); // another tab moved the origin to a new session
    await two.getAccessToken();
    expect(seen).toEqual(['adopted:ses_2']);
    expect(two.sessionId).toBe('ses_2');
  });

  it('erases only the player the tab showed: one another tab moved to is refused, nothing sent', async () => {
    const { service, one, two } = await twoTabsOnOneGuest();
    // Tab one moves the origin to another player ("sign in to that account instead").
    service.session = 'ses_2';
    service.user = 'usr_2';
    await one.createGuest();
    expect(two.userId).toBe('usr_1');
    const users: string[] = [];
    two.on('user', (change) => users.push(`${change.reason}:${change.userId}`));
    await expect(two.deleteAccount()).rejects.toMatchObject({ status: 409, code: 'player_changed' });
    expect(service.calls.filter((c) => c.path === 'me')).toEqual([]);
    expect(users).toEqual(['adopted:usr_2']);
    // Asked again, now for the player the tab shows.
    await two.deleteAccount();
    expect(service.bearers.filter((b) => b.path === 'me').map((b) => b.authorization)).toEqual([
      expect.stringContaining('Bearer '),
    ]);
  });

  it('does not take another tab’s sign-in for an upgrade whose answer was lost', async () => {
    const service = new CookieService();
    const page = new FakeWebStorage();
    // The upgrade's answer is lost, and meanwhile another tab signed in to another account: the
    // browser's cookie and the origin's session id are that account's.
    const through = (async (url: string, init?: RequestInit & { body?: string }) => {
      const path = new URL(url).pathname.replace('/t/acme/', '');
      if (path === 'guest/upgrade') {
        service.session = 'ses_2';
        service.user = 'usr_2';
        page.setItem(MARKER, 'ses_2');
        throw new TypeError('network connection lost');
      }
      if (path === 'me') {
        const identities = [{ provider: 'email', provider_subject: 'real@example.com', email: 'real@example.com' }];
        return json(200, { user: { id: service.user, guest: false, created_at: '2026-01-01T00:00:00Z', identities } });
      }
      return service.fetch(url, init);
    }) as unknown as typeof fetch;
    const c = tab(service, page, { fetch: through });
    await c.createGuest();
    await expect(c.upgrade('prf_x')).rejects.toMatchObject({ status: 0 });
  });

  it('ends the session on invalid_grant, and when the browser kept no cookie in a page given no token (invalid_request)', async () => {
    for (const refusal of ['invalid_grant', 'invalid_request'] as const) {
      const service = new CookieService();
      const page = new FakeWebStorage();
      await tab(service, page).createGuest();
      // A reload resumes the session by cookie: the cookie works, so the page keeps no token.
      const c = tab(service, page);
      await c.refresh();
      const ended: string[] = [];
      c.on('session', (change) => ended.push(change.reason));
      if (refusal === 'invalid_grant') service.refuse = 'invalid_grant';
      else service.cookie = null;
      const err = (await c.refresh().catch((e: unknown) => e)) as GuestApiError;
      expect(err.code).toBe(refusal);
      expect(ended).toEqual(['ended']);
      expect(page.getItem(MARKER)).toBeNull();
      expect(c.userId).toBeNull();
      expect(service.tokenCalls().filter((call) => call.body.refresh_token !== undefined)).toEqual([]);
    }
  });

  it('sends the session’s bearer from a page just back from a redirect, before it held any token', async () => {
    const service = new CookieService();
    const page = new FakeWebStorage();
    const before = tab(service, page);
    await before.createGuest();
    // Back from the provider or the chat platform: a new page, the same flow, the cookie in place.
    const after = tab(service, page, { browserFlowId: before.browserFlowId });
    await after.createLinkingIntent();
    await after.upgrade('prf_x');
    const bearers = service.bearers.filter((c) => c.path.startsWith('guest/')).map((c) => c.authorization);
    expect(bearers).toEqual([expect.stringMatching(/^Bearer \S+/), expect.stringMatching(/^Bearer \S+/)]);
  });

  it('sees another tab’s sign-out: the shared session id is gone', async () => {
    const { service, one, two } = await twoTabsOnOneGuest();
    await one.revoke();
    expect(service.calls.at(-1)).toMatchObject({ path: 'revoke', body: { client_id: 'cli_game' } });
    const ended: string[] = [];
    two.on('session', (change) => ended.push(change.reason));
    await expect(two.refresh()).rejects.toMatchObject({ code: 'no_refresh_token' });
    expect(ended).toEqual(['ended']);
  });
});

describe('the SDK in cookie mode where the browser refuses the refresh cookie (third-party cookies blocked)', () => {
  /** A game page on another site than the auth host, in a browser that stores none of its cookies. */
  function refusingBrowser(opts: Partial<GuestClientOptions> = {}) {
    const service = new CookieService();
    service.refusesCookie = true;
    const page = new FakeWebStorage();
    const c = tab(service, page, opts);
    const heard: PersistenceChange[] = [];
    c.on('persistence', (change) => heard.push(change));
    return { service, page, c, heard };
  }
  const bodyTokens = (service: CookieService) =>
    service.tokenCalls().map((call) => call.body.refresh_token ?? 'cookie');

  it('refreshes at once with the token of the last answer in the body, and tells the game once', async () => {
    const { service, page, c, heard } = refusingBrowser();
    const created = await c.createGuest();
    const set = await c.refresh();
    expect(c.userId).toBe(created.user_id);
    expect(set.session_id).toBe(created.session_id);
    // The cookie-only refresh found no cookie; the same refresh went on with the page's token.
    expect(service.tokenCalls().map((call) => [call.body.refresh_token, call.cookie])).toEqual([
      [undefined, null],
      ['rt_1', null],
    ]);
    // The game never holds the token, and page storage never does either.
    expect(created.refresh_token).toBeUndefined();
    expect(set.refresh_token).toBeUndefined();
    noRefreshTokenIn(page);
    // No other tab and no reload can resume a session without its cookie: its id is not shared.
    expect(page.getItem(MARKER)).toBeNull();
    expect(heard).toEqual([{ saved: false, item: 'refresh_cookie' }]);
  });

  it('goes on refreshing with the body token, rotating it with each answer, without asking the cookie again', async () => {
    const { service, page, c, heard } = refusingBrowser();
    await c.createGuest();
    await c.refresh();
    await c.refresh();
    await c.refresh();
    const before = service.calls.length;
    expect(await c.getAccessToken()).toBe(c.accessToken);
    expect(service.calls.length).toBe(before);
    expect(bodyTokens(service)).toEqual(['cookie', 'rt_1', 'rt_2', 'rt_3']);
    expect(c.userId).toBe('usr_1');
    expect(heard).toHaveLength(1);
    noRefreshTokenIn(page);
  });

  it('keeps the guest through the timed refresh, one access-token lifetime after creation', async () => {
    const { service, c, heard } = refusingBrowser({ autoRefresh: true });
    service.expiresIn = 1;
    const ended: string[] = [];
    c.on('session', (change) => ended.push(change.reason));
    await c.createGuest();
    // Renewed at 80 % of a 1-second token, then again.
    await new Promise((r) => setTimeout(r, 2_200));
    c.stop();
    expect(bodyTokens(service).slice(0, 3)).toEqual(['cookie', 'rt_1', 'rt_2']);
    expect(c.userId).toBe('usr_1');
    expect(ended).toEqual(['created']);
    expect(heard).toEqual([{ saved: false, item: 'refresh_cookie' }]);
  });

  it('keeps its player when another tab, which received no token, could not resume the session and dropped its id', async () => {
    const { service, page, c } = refusingBrowser();
    await c.createGuest();
    const other = tab(service, page);
    await expect(other.refresh()).rejects.toMatchObject({ code: 'invalid_request' });
    expect(page.getItem(MARKER)).toBeNull();
    await c.refresh();
    expect(c.userId).toBe('usr_1');
    expect(bodyTokens(service)).toEqual(['cookie', 'cookie', 'rt_1']);
  });

  it('signs out by revoking the token it holds, in the body', async () => {
    const { service, c } = refusingBrowser();
    await c.createGuest();
    await c.refresh();
    const seen: string[] = [];
    c.on('session', (change) => seen.push(change.reason));
    await c.revoke();
    expect(service.calls.filter((call) => call.path === 'revoke').map((call) => call.body)).toEqual([
      { token: 'rt_2', client_id: 'cli_game' },
    ]);
    expect(seen).toEqual(['revoked']);
    expect(c.userId).toBeNull();
    // Nothing is left to present: the next refresh starts from nothing.
    await expect(c.refresh()).rejects.toMatchObject({ code: 'no_refresh_token' });
  });

  it('still ends the session when the service refuses the body token (invalid_grant)', async () => {
    const { service, page, c } = refusingBrowser();
    await c.createGuest();
    await c.refresh();
    // Another tab's session, which this one must leave alone.
    page.setItem(MARKER, 'ses_other');
    const seen: string[] = [];
    c.on('session', (change) => seen.push(change.reason));
    service.refuse = 'invalid_grant';
    await expect(c.refresh()).rejects.toMatchObject({ code: 'invalid_grant' });
    expect(seen).toEqual(['ended']);
    expect(c.userId).toBeNull();
    expect(page.getItem(MARKER)).toBe('ses_other');
    expect(bodyTokens(service)).toEqual(['cookie', 'rt_1', 'rt_2']);
  });
});
