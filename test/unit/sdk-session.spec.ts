import { GuestApiError, GuestClient, type GuestClientOptions, type TokenSet } from '../../sdk/src/guest-client';
import { processLock, storageLease, webLocks } from '../../sdk/src/refresh-lock';
import { backoffDelay, DEFAULT_RETRY, parseRetryAfter } from '../../sdk/src/retry';
import { MemorySecureStorage, webStorage, type SecureStorage } from '../../sdk/src/secure-storage';
import type { SessionChange, PersistenceChange } from '../../sdk/src/session-events';

/**
 * The SDK's rules of contract section 13 against a fake service: one refresh in flight, turns
 * taken between clients of one storage, retries that honour Retry-After, the token kept on
 * anything but invalid_grant, and the events a game listens to.
 */

const KEY = 'svc-auth:acme:cli_game:refresh_token';

interface Call {
  readonly method: string;
  readonly path: string;
  readonly body: Record<string, string>;
  readonly authorization: string | null;
}

type Answer = Response | Promise<Response> | 'network';

/** An unsigned JWT: the SDK only reads the claims of tokens it got over TLS. */
function jwt(claims: Record<string, unknown>): string {
  const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'ES256' })}.${part(claims)}.sig`;
}

let serial = 0;
function tokens(opts: { sub?: string; guest?: boolean; session?: string; expiresIn?: number } = {}): TokenSet {
  serial += 1;
  return {
    access_token: jwt({ sub: opts.sub ?? 'usr_1', guest: opts.guest ?? true, n: serial }),
    token_type: 'Bearer',
    expires_in: opts.expiresIn ?? 300,
    refresh_token: `rt_${serial}`,
    scope: 'openid offline_access',
    session_id: opts.session ?? 'ses_1',
  };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json', ...headers } });

/** The service's side: every call is recorded and answered by the test's script. */
class FakeService {
  readonly calls: Call[] = [];
  constructor(private readonly answer: (call: Call) => Answer) {}

  // The SDK calls fetch with a URL string and a JSON string body.
  readonly fetch = async (url: string, init?: RequestInit & { body?: string }): Promise<Response> => {
    const headers = new Headers(init?.headers);
    const call: Call = {
      method: init?.method ?? 'GET',
      path: new URL(url).pathname.replace('/t/acme/', ''),
      body: init?.body ? JSON.parse(init.body) : {},
      authorization: headers.get('Authorization'),
    };
    this.calls.push(call);
    const answer = await this.answer(call);
    if (answer === 'network') throw new TypeError('fetch failed');
    return answer;
  };

  /** The refresh tokens presented to the token endpoint, in order. */
  presented(): string[] {
    return this.calls.filter((c) => c.path === 'token').map((c) => c.body.refresh_token ?? '');
  }
}

/** A 200 whose body stops after its first bytes: a mobile network dropped it after the headers. */
function cutOff(): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"access_tok'));
      controller.error(new TypeError('network connection lost'));
    },
  });
  return new Response(body, { status: 200, headers: { 'Content-Type': 'application/json' } });
}

function client(service: FakeService, opts: Partial<GuestClientOptions> = {}): GuestClient {
  return new GuestClient({
    baseUrl: 'https://auth.example',
    tenantId: 'acme',
    clientId: 'cli_game',
    storage: new MemorySecureStorage(),
    fetch: service.fetch as unknown as typeof fetch,
    autoRefresh: false,
    ...opts,
  });
}

/** One origin's Web Storage, as its tabs share it. */
function originStorage() {
  const backing = new Map<string, string>();
  const local = {
    getItem: (k: string) => backing.get(k) ?? null,
    setItem: (k: string, v: string) => void backing.set(k, v),
    removeItem: (k: string) => void backing.delete(k),
  };
  return { backing, local };
}

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Every event of the three kinds: `kind:reason` for the session and the player, `persistence:saved`
 * or `persistence:refused`; with storage that keeps every write, no `persistence` event at all.
 */
function record(c: GuestClient): { seen: string[]; changes: SessionChange[]; persistence: PersistenceChange[] } {
  const seen: string[] = [];
  const changes: SessionChange[] = [];
  const persistence: PersistenceChange[] = [];
  for (const kind of ['session', 'user'] as const)
    c.on(kind, (change) => {
      seen.push(`${kind}:${change.reason}`);
      changes.push(change);
    });
  c.on('persistence', (change) => {
    seen.push(`persistence:${change.saved ? 'saved' : 'refused'}`);
    persistence.push(change);
  });
  return { seen, changes, persistence };
}

/** A keystore (or a full localStorage) whose writes fail while `full`. */
class FullStorage extends MemorySecureStorage {
  full = false;
  override set(key: string, value: string): Promise<void> {
    if (this.full) return Promise.reject(new DOMException('quota', 'QuotaExceededError'));
    return super.set(key, value);
  }
}

describe('the SDK keeps one refresh in flight', () => {
  it('shares one token request between concurrent refresh() and getAccessToken() callers', async () => {
    const first = tokens();
    const next = tokens();
    const gate = deferred<Response>();
    const service = new FakeService((call) =>
      call.path === 'guest' ? json(201, { ...first, user_id: 'usr_1' }) : gate.promise,
    );
    const c = client(service);
    await c.createGuest();
    const all = Promise.all([c.refresh(), c.refresh(), c.refresh()]);
    await new Promise((r) => setTimeout(r, 10));
    expect(service.presented()).toEqual([first.refresh_token]);
    gate.resolve(json(200, next));
    const results = await all;
    expect(results.map((r) => r.refresh_token)).toEqual([next.refresh_token, next.refresh_token, next.refresh_token]);
    expect(service.presented()).toEqual([first.refresh_token]);
  });

  it('lets two clients of one storage (two tabs) refresh at once without presenting a token twice', async () => {
    const first = tokens();
    const issued: TokenSet[] = [];
    const service = new FakeService((call) => {
      if (call.path === 'guest') return json(201, { ...first, user_id: 'usr_1' });
      const set = tokens();
      issued.push(set);
      return new Promise((r) => setTimeout(() => r(json(200, set)), 20));
    });
    const storage = new MemorySecureStorage();
    const tabA = client(service, { storage });
    const tabB = client(service, { storage });
    await tabA.createGuest();
    // Tab B's page loads and proves the session with the stored token; tab A then takes B's set
    // over, so both hold the same refresh token.
    await tabB.refresh();
    expect(await tabA.getAccessToken()).toBe(tabB.accessToken);
    const before = service.presented().length;
    const [a, b] = await Promise.all([tabA.refresh(), tabB.refresh()]);
    const presented = service.presented();
    expect(new Set(presented).size).toBe(presented.length);
    // One rotation for both: the tab second in turn takes over the first one's fresh set.
    expect(presented.length - before).toBe(1);
    expect(a.refresh_token).toBe(b.refresh_token);
    expect(await storage.get(KEY)).toBe(a.refresh_token);
    expect(tabA.userId).toBe('usr_1');
    expect(tabB.userId).toBe('usr_1');
  });

  it('takes over the fresh token set another tab stored instead of rotating again', async () => {
    const first = tokens();
    const second = tokens();
    const service = new FakeService((call) =>
      call.path === 'guest' ? json(201, { ...first, user_id: 'usr_1' }) : json(200, second),
    );
    const storage = new MemorySecureStorage();
    const tabA = client(service, { storage });
    const tabB = client(service, { storage });
    await tabA.createGuest();
    // B held A's first token (as after an earlier takeover); A has rotated since.
    await tabB.getAccessToken().catch(() => undefined);
    await tabA.refresh();
    const before = service.presented().length;
    const token = await tabB.getAccessToken();
    expect(token).toBe(second.access_token);
    expect(service.presented().length).toBe(before);
  });

  it('falls back to a lease in Web Storage when Web Locks are missing: two tabs never overlap', async () => {
    const { backing, local } = originStorage();
    let inside = 0;
    let overlapped = false;
    const task = async () => {
      inside += 1;
      if (inside > 1) overlapped = true;
      await new Promise((r) => setTimeout(r, 15));
      inside -= 1;
    };
    // Two tabs: two leases (each with its own in-page queue) over one origin's storage.
    const tabs = [storageLease(local, { settleMs: 5 }), storageLease(local, { settleMs: 5 })];
    await Promise.all(tabs.flatMap((lease) => [lease.run('n', task), lease.run('n', task), lease.run('n', task)]));
    expect(overlapped).toBe(false);
    await new Promise((r) => setTimeout(r, 30));
    expect(backing.has('n:lease')).toBe(false);
  });
});

describe('the SDK retries transient failures and keeps the token', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['queueMicrotask'] }));
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  async function guestThen(answers: Answer[]) {
    const first = tokens();
    const queue = [...answers];
    const service = new FakeService((call) =>
      call.path === 'guest' ? json(201, { ...first, user_id: 'usr_1' }) : (queue.shift() ?? 'network'),
    );
    const storage = new MemorySecureStorage();
    const c = client(service, { storage, retry: { attempts: 4 } });
    await c.createGuest();
    return { c, service, storage, first };
  }

  it('waits the Retry-After of a 503 before trying again, with the same token', async () => {
    jest.spyOn(Math, 'random').mockReturnValue(0);
    const next = tokens();
    const { c, service, first } = await guestThen([
      json(503, { error: 'temporarily_unavailable' }, { 'Retry-After': '2' }),
      json(200, next),
    ]);
    const result = c.refresh();
    await jest.advanceTimersByTimeAsync(1_999);
    expect(service.presented()).toEqual([first.refresh_token]);
    await jest.advanceTimersByTimeAsync(1);
    expect((await result).refresh_token).toBe(next.refresh_token);
    expect(service.presented()).toEqual([first.refresh_token, first.refresh_token]);
  });

  it('backs off exponentially after network failures and 429s without Retry-After', async () => {
    jest.spyOn(Math, 'random').mockReturnValue(0);
    const next = tokens();
    const { c, service } = await guestThen([
      'network',
      json(429, { error: 'rate_limited' }),
      'network',
      json(200, next),
    ]);
    const result = c.refresh();
    await jest.advanceTimersByTimeAsync(0);
    expect(service.presented()).toHaveLength(1);
    const times: number[] = [];
    const start = Date.now();
    for (let t = 0; t < 2_000 && service.presented().length < 4; t += 10) {
      const count = service.presented().length;
      await jest.advanceTimersByTimeAsync(10);
      if (service.presented().length > count) times.push(Date.now() - start);
    }
    // Equal jitter with random() = 0: half of 300, 600, 1200 ms after each failure.
    expect(times).toEqual([150, 450, 1050]);
    expect((await result).refresh_token).toBe(next.refresh_token);
  });

  it('retries at once, with the same token, a refresh whose 200 is cut off or carries no token set', async () => {
    jest.spyOn(Math, 'random').mockReturnValue(0);
    const next = tokens();
    const { c, service, storage, first } = await guestThen([cutOff(), json(200, {}), json(200, next)]);
    const events = record(c);
    const result = c.refresh();
    // The usual backoff (150 ms, then 300 ms), well inside the reuse interval.
    await jest.advanceTimersByTimeAsync(450);
    expect((await result).refresh_token).toBe(next.refresh_token);
    expect(service.presented()).toEqual([first.refresh_token, first.refresh_token, first.refresh_token]);
    expect(await storage.get(KEY)).toBe(next.refresh_token);
    expect(c.sessionId).toBe('ses_1');
    expect(events.seen).toEqual([]);
  });

  it('reports a guest creation whose 201 is cut off as network_error, keeping nothing', async () => {
    const service = new FakeService(() => cutOff());
    const storage = new MemorySecureStorage();
    const c = client(service, { storage });
    const events = record(c);
    await expect(c.createGuest()).rejects.toMatchObject({ status: 0, code: 'network_error' });
    expect(c.sessionId).toBeNull();
    expect(await storage.get(KEY)).toBeNull();
    expect(events.seen).toEqual([]);
  });

  it('has every try of a refresh over by the retry deadline, inside the reuse interval', async () => {
    jest.spyOn(Math, 'random').mockReturnValue(1);
    const started = Date.now();
    const tries: { start: number; end: number }[] = [];
    // The service rotated on the first try and the answer was lost; every later try hangs until
    // the client gives up on it.
    const flaky = (async (_url: string, init?: RequestInit) => {
      const t = { start: Date.now() - started, end: Date.now() - started };
      tries.push(t);
      if (tries.length === 1) throw new TypeError('connection reset');
      return new Promise<Response>((_, reject) =>
        init?.signal?.addEventListener('abort', () => {
          t.end = Date.now() - started;
          reject(new Error('aborted'));
        }),
      );
    }) as typeof fetch;
    const storage = new MemorySecureStorage();
    await storage.set(KEY, 'rt_lost');
    const c = client(new FakeService(() => 'network'), { storage, fetch: flaky });
    const outcome = c.refresh().catch((e: unknown) => e);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(await outcome).toMatchObject({ status: 0, code: 'network_error' });
    expect(tries.length).toBeGreaterThan(2);
    expect(Math.max(...tries.map((t) => t.end))).toBeLessThanOrEqual(DEFAULT_RETRY.deadlineMs);
    expect(DEFAULT_RETRY.deadlineMs).toBeLessThan(30_000);
    expect(await storage.get(KEY)).toBe('rt_lost');
  });

  it('keeps the stored token and the session when every try answers 503', async () => {
    const unavailable = () => json(503, { error: 'temporarily_unavailable' }, { 'Retry-After': '1' });
    const { c, service, storage, first } = await guestThen([
      unavailable(),
      unavailable(),
      unavailable(),
      unavailable(),
    ]);
    const events = record(c);
    const outcome = c.refresh().catch((e: unknown) => e);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(await outcome).toMatchObject({ status: 503, code: 'temporarily_unavailable' });
    expect(await storage.get(KEY)).toBe(first.refresh_token);
    expect(service.presented()).toEqual(Array(4).fill(first.refresh_token));
    expect(c.userId).toBe('usr_1');
    expect(events.seen).toEqual([]);
  });

  it('gives up at once, keeping the token, when Retry-After passes the retry deadline', async () => {
    const { c, service, storage, first } = await guestThen([
      json(429, { error: 'rate_limited' }, { 'Retry-After': '120' }),
    ]);
    await expect(c.refresh()).rejects.toMatchObject({ status: 429, retryAfter: 120 });
    expect(service.presented()).toEqual([first.refresh_token]);
    expect(await storage.get(KEY)).toBe(first.refresh_token);
  });

  it('keeps the token on a refusal other than invalid_grant, without retrying it', async () => {
    const { c, service, storage, first } = await guestThen([json(404, { error: 'tenant_not_found' })]);
    await expect(c.refresh()).rejects.toMatchObject({ status: 404, code: 'tenant_not_found' });
    expect(service.presented()).toHaveLength(1);
    expect(await storage.get(KEY)).toBe(first.refresh_token);
  });

  it('refreshes by timer at 80 % of the access token’s life, and not after stop()', async () => {
    const first = tokens({ expiresIn: 300 });
    const service = new FakeService((call) =>
      call.path === 'guest' ? json(201, { ...first, user_id: 'usr_1' }) : json(200, tokens({ expiresIn: 300 })),
    );
    const c = client(service, { autoRefresh: true });
    await c.createGuest();
    await jest.advanceTimersByTimeAsync(239_000);
    expect(service.presented()).toEqual([]);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(service.presented()).toEqual([first.refresh_token]);
    c.stop();
    await jest.advanceTimersByTimeAsync(600_000);
    expect(service.presented()).toHaveLength(1);
  });

  it('keeps renewing by timer when the wall clock lags the timer (a timer firing early, a clock stepped back)', async () => {
    const first = tokens({ expiresIn: 300 });
    const service = new FakeService((call) =>
      call.path === 'guest' ? json(201, { ...first, user_id: 'usr_1' }) : json(200, tokens({ expiresIn: 300 })),
    );
    const c = client(service, { autoRefresh: true });
    await c.createGuest();
    jest.setSystemTime(Date.now() - 1);
    await jest.advanceTimersByTimeAsync(240_000);
    expect(service.presented()).toEqual([first.refresh_token]);
    // And the timer was set again for the renewed token.
    await jest.advanceTimersByTimeAsync(240_000);
    expect(service.presented()).toHaveLength(2);
    c.stop();
  });

  it('getAccessToken() hands out the held token, still valid, when its early renewal meets 503s', async () => {
    const first = tokens({ expiresIn: 300 });
    const service = new FakeService((call) =>
      call.path === 'guest'
        ? json(201, { ...first, user_id: 'usr_1' })
        : json(503, { error: 'temporarily_unavailable' }, { 'Retry-After': '1' }),
    );
    const c = client(service, { retry: { attempts: 3 } });
    await c.createGuest();
    // Past the early-renewal point (240 s), with a minute of the access token's life left.
    await jest.advanceTimersByTimeAsync(245_000);
    const token = c.getAccessToken().catch((e: unknown) => e);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(await token).toBe(first.access_token);
    expect(service.presented()).toEqual(Array(3).fill(first.refresh_token));
    // Once it expired there is nothing to hand out: the failure is the caller's.
    await jest.advanceTimersByTimeAsync(60_000);
    const late = c.getAccessToken().catch((e: unknown) => e);
    await jest.advanceTimersByTimeAsync(5_000);
    expect(await late).toMatchObject({ status: 503, code: 'temporarily_unavailable' });
    expect(c.userId).toBe('usr_1');
  });

  it('waits the Retry-After of a 503 before its timer tries again, when Retry-After passes the retry deadline (contract 13)', async () => {
    // The service is overloaded and asks for two minutes; the retry loop gives up at once (the
    // wait passes its deadline), and the SDK's own timer must still not come back before then.
    const first = tokens({ expiresIn: 300 });
    let refused = false;
    const service = new FakeService((call) => {
      if (call.path === 'guest') return json(201, { ...first, user_id: 'usr_1' });
      if (!refused) {
        refused = true;
        return json(
          503,
          { error: 'temporarily_unavailable', error_description: 'Try later.' },
          { 'Retry-After': '120' },
        );
      }
      return json(200, tokens({ expiresIn: 300 }));
    });
    const c = client(service, { autoRefresh: true });
    await c.createGuest();
    await jest.advanceTimersByTimeAsync(240_000);
    expect(service.presented()).toEqual([first.refresh_token]);
    // 119 s after the 503 asked for 120: nothing may have been sent again.
    await jest.advanceTimersByTimeAsync(119_000);
    expect(service.presented()).toEqual([first.refresh_token]);
    c.stop();
  });

  it('keeps the guest when a TLS proxy answers 502 to a refresh the service already rotated (a lost answer)', async () => {
    jest.spyOn(Math, 'random').mockReturnValue(0);
    const first = tokens({ expiresIn: 300 });
    // The service's side of contract 13: rotation, and the reuse interval (30 s) for the token
    // rotated last while its successor is unused; any other reuse is a replay that ends the session.
    let current = first.refresh_token;
    let previous: string | undefined;
    let successor: TokenSet | undefined;
    let rotatedAt = 0;
    let proxyLosesNext = true;
    const service = new FakeService((call) => {
      if (call.path === 'guest') return json(201, { ...first, user_id: 'usr_1' });
      const presented = call.body.refresh_token;
      if (presented === previous && successor && Date.now() - rotatedAt <= 30_000) return json(200, successor);
      if (presented !== current) return json(400, { error: 'invalid_grant', error_description: 'Replayed.' });
      const set = tokens({ expiresIn: 300 });
      previous = current;
      current = set.refresh_token;
      successor = set;
      rotatedAt = Date.now();
      if (!proxyLosesNext) return json(200, set);
      // The service rotated; the connection to it dropped before the answer, and the operator's
      // TLS proxy answers the player a second later with its own 502 page.
      proxyLosesNext = false;
      return new Promise<Response>((r) =>
        setTimeout(
          () =>
            r(
              new Response('<html><body>502 Bad Gateway</body></html>', {
                status: 502,
                headers: { 'Content-Type': 'text/html' },
              }),
            ),
          1_000,
        ),
      );
    });
    const c = client(service, { autoRefresh: true });
    const events = record(c);
    await c.createGuest();
    await jest.advanceTimersByTimeAsync(240_000);
    await jest.advanceTimersByTimeAsync(120_000);
    expect(events.seen).not.toContain('session:ended');
    expect(c.userId).toBe('usr_1');
    expect(c.sessionId).toBe('ses_1');
    c.stop();
  });

  it('renews on demand a token that expired while the device clock was stepped back (getAccessToken, no timer)', async () => {
    // A player sets the phone's clock back an hour (a common way to skip game timers), then plays
    // on: the access token's five minutes run out in real time all the same.
    const first = tokens({ expiresIn: 300 });
    const next = tokens({ expiresIn: 300 });
    const service = new FakeService((call) =>
      call.path === 'guest' ? json(201, { ...first, user_id: 'usr_1' }) : json(200, next),
    );
    const c = client(service);
    await c.createGuest();
    jest.setSystemTime(Date.now() - 3_600_000);
    await jest.advanceTimersByTimeAsync(400_000);
    // 400 s after it was issued the first token is expired at the service and at the game server.
    expect(await c.getAccessToken()).toBe(next.access_token);
    expect(service.presented()).toEqual([first.refresh_token]);
  });

  it('getAccessToken() renews a token about to expire and hands out a fresh one as is', async () => {
    const first = tokens({ expiresIn: 100 });
    const next = tokens({ expiresIn: 100 });
    const service = new FakeService((call) =>
      call.path === 'guest' ? json(201, { ...first, user_id: 'usr_1' }) : json(200, next),
    );
    const c = client(service);
    await c.createGuest();
    expect(await c.getAccessToken()).toBe(first.access_token);
    await jest.advanceTimersByTimeAsync(80_000);
    expect(await c.getAccessToken()).toBe(next.access_token);
    expect(service.presented()).toEqual([first.refresh_token]);
  });
});

describe('the SDK ends a session only on a definite invalid_grant', () => {
  it('uses a newer token another tab stored before giving up on invalid_grant', async () => {
    const first = tokens();
    const newer = tokens();
    const next = tokens();
    const storage = new MemorySecureStorage();
    const service = new FakeService(async (call) => {
      if (call.path === 'guest') return json(201, { ...first, user_id: 'usr_1' });
      if (call.body.refresh_token === first.refresh_token) {
        // A tab that does not share the lock rotated first and stored the successor.
        await storage.set(KEY, newer.refresh_token as string);
        return json(400, { error: 'invalid_grant' });
      }
      return json(200, next);
    });
    // A lock that lets everything through: the other tab is not coordinated.
    const c = client(service, { storage, lock: { run: (_name, task) => task() } });
    const events = record(c);
    await c.createGuest();
    const result = await c.refresh();
    expect(result.refresh_token).toBe(next.refresh_token);
    expect(service.presented()).toEqual([first.refresh_token, newer.refresh_token]);
    expect(await storage.get(KEY)).toBe(next.refresh_token);
    expect(events.seen).toEqual(['session:created', 'user:created']);
  });

  it('drops the token and reports the session ended when storage still holds the refused one', async () => {
    const first = tokens();
    const service = new FakeService((call) =>
      call.path === 'guest' ? json(201, { ...first, user_id: 'usr_1' }) : json(400, { error: 'invalid_grant' }),
    );
    const storage = new MemorySecureStorage();
    const c = client(service, { storage });
    await c.createGuest();
    const events = record(c);
    await expect(c.refresh()).rejects.toMatchObject({ status: 400, code: 'invalid_grant' });
    expect(await storage.get(KEY)).toBeNull();
    expect(c.userId).toBeNull();
    expect(events.seen).toEqual(['session:ended', 'user:ended']);
    expect(events.changes[0]).toMatchObject({
      userId: null,
      sessionId: null,
      previous: { userId: 'usr_1', sessionId: 'ses_1', guest: true },
    });
    await expect(c.refresh()).rejects.toMatchObject({ code: 'no_refresh_token' });
  });
});

describe('the SDK starts a fresh browser flow only when its own was claimed by a cookie it never got', () => {
  const foreignFlow = () =>
    json(403, {
      error: 'forbidden',
      error_description: 'The browser flow cookie is missing or does not belong to this flow.',
    });
  const flows = (service: FakeService) => service.calls.map((call) => call.body.browser_flow_id);

  it('creates the guest in a fresh flow when the answer that claimed the kept one was lost', async () => {
    const service = new FakeService((call) =>
      call.body.browser_flow_id === 'flw_lost' ? foreignFlow() : json(201, { ...tokens(), user_id: 'usr_1' }),
    );
    const c = client(service, { browserFlowId: 'flw_lost' });
    const created = await c.createGuest();
    expect(created.user_id).toBe('usr_1');
    expect(c.browserFlowId).toMatch(/^flw_[A-Za-z0-9_-]{24}$/);
    expect(flows(service)).toEqual(['flw_lost', c.browserFlowId]);
  });

  it('keeps any other 403, and a refusal in a flow it was answered in', async () => {
    const other = new FakeService(() =>
      json(403, { error: 'forbidden', error_description: 'The Origin is not a web origin of this client.' }),
    );
    const c1 = client(other, { browserFlowId: 'flw_1' });
    await expect(c1.createGuest()).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    expect(flows(other)).toEqual(['flw_1']);

    // The browser dropped the cookie it was given: a new flow would lose its cookie too.
    const dropped = new FakeService((call) =>
      call.path === 'guest' ? json(201, { ...tokens(), user_id: 'usr_1' }) : foreignFlow(),
    );
    const c2 = client(dropped, { browserFlowId: 'flw_2' });
    await c2.createGuest();
    await expect(c2.createLinkingIntent()).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    expect(c2.browserFlowId).toBe('flw_2');
    expect(flows(dropped)).toEqual(['flw_2', 'flw_2']);
  });

  it('tries the fresh flow once', async () => {
    const service = new FakeService(() => foreignFlow());
    const c = client(service, { browserFlowId: 'flw_1' });
    await expect(c.startEmail('a@example.com')).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    expect(flows(service)).toEqual(['flw_1', c.browserFlowId]);
  });
});

describe('the SDK tells the game when the session or the player changes', () => {
  it('emits on creation, a new session id, upgrade, another account, and erasure', async () => {
    const answers: Record<string, () => Response> = {
      guest: () => json(201, { ...tokens({ session: 'ses_1' }), user_id: 'usr_1' }),
      token: () => json(200, tokens({ session: 'ses_2' })),
      'guest/upgrade': () => json(200, { ...tokens({ session: 'ses_3', guest: false }), user_id: 'usr_1' }),
      'sign-in': () => json(200, { ...tokens({ session: 'ses_4', sub: 'usr_2', guest: false }), user_id: 'usr_2' }),
      me: () => json(200, { deleted: true }),
    };
    const service = new FakeService((call) => (answers[call.path] as () => Response)());
    const storage = new MemorySecureStorage();
    const c = client(service, { storage });
    const events = record(c);
    await c.createGuest();
    await c.refresh();
    await c.upgrade('prf_x');
    await c.signIn('prf_y');
    const bearer = c.accessToken;
    await c.deleteAccount();
    expect(events.seen).toEqual([
      'session:created',
      'user:created',
      'session:refreshed',
      'session:upgraded',
      'user:upgraded',
      'session:signed_in',
      'user:signed_in',
      'session:deleted',
      'user:deleted',
    ]);
    expect(events.changes.at(-1)).toMatchObject({ userId: null, previous: { userId: 'usr_2', guest: false } });
    const erase = service.calls.at(-1) as Call;
    expect(erase).toMatchObject({ method: 'DELETE', path: 'me', authorization: `Bearer ${bearer}` });
    expect(await storage.get(KEY)).toBeNull();
    expect(c.accessToken).toBeNull();
  });

  it('stays silent when a refresh keeps the session and the player', async () => {
    const service = new FakeService((call) =>
      call.path === 'guest' ? json(201, { ...tokens(), user_id: 'usr_1' }) : json(200, tokens()),
    );
    const c = client(service);
    await c.createGuest();
    const events = record(c);
    await c.refresh();
    await c.refresh();
    expect(events.seen).toEqual([]);
  });

  it('reports the session ended when another tab erased it (storage emptied)', async () => {
    const service = new FakeService(() => json(201, { ...tokens({ expiresIn: 1 }), user_id: 'usr_1' }));
    const storage = new MemorySecureStorage();
    const c = client(service, { storage });
    await c.createGuest();
    const events = record(c);
    await storage.delete(KEY);
    await expect(c.refresh()).rejects.toMatchObject({ code: 'no_refresh_token' });
    expect(events.seen).toEqual(['session:ended', 'user:ended']);
  });

  it('reads the player with me(), retrying a 503', async () => {
    const user = { id: 'usr_1', guest: true, created_at: '2026-01-01T00:00:00.000Z', identities: [] };
    let meCalls = 0;
    const service = new FakeService((call) => {
      if (call.path === 'guest') return json(201, { ...tokens(), user_id: 'usr_1' });
      meCalls += 1;
      return meCalls === 1
        ? json(503, { error: 'temporarily_unavailable' }, { 'Retry-After': '0' })
        : json(200, { user });
    });
    const c = client(service);
    await c.createGuest();
    expect(await c.me()).toEqual(user);
    expect(service.calls.filter((x) => x.path === 'me').map((x) => x.method)).toEqual(['GET', 'GET']);
  });
});

describe('retry arithmetic', () => {
  it('doubles the step up to the cap, with jitter in its upper half', () => {
    const policy = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1_000 };
    const low = [0, 1, 2, 3, 4, 5].map((a) => backoffDelay({ status: 0 }, a, policy, () => 0));
    const high = [0, 1, 2, 3, 4, 5].map((a) => backoffDelay({ status: 0 }, a, policy, () => 1));
    expect(low).toEqual([50, 100, 200, 400, 500, 500]);
    expect(high).toEqual([100, 200, 400, 800, 1000, 1000]);
    expect(backoffDelay({ status: 503, retryAfter: 3 }, 0, policy, () => 0)).toBe(3_000);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('7')).toBe(7);
    expect(
      parseRetryAfter(new Date(Date.parse('2026-01-01T00:00:10Z')).toUTCString(), Date.parse('2026-01-01T00:00:00Z')),
    ).toBe(10);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
});

describe('storage and locks', () => {
  it('gives a MemorySecureStorage its own queue, and webStorage the origin’s lock', () => {
    expect(new MemorySecureStorage().lock).toBeDefined();
    const s: SecureStorage = webStorage({ getItem: () => null, setItem: () => undefined, removeItem: () => undefined });
    expect(s.lock).toBeDefined();
  });

  it('answers a Web Locks caller at once but holds the turn until other tabs can see its writes', async () => {
    const queue = processLock();
    const fake = { request: <T>(name: string, _o: unknown, task: () => Promise<T>) => queue.run(name, task) };
    const locks = webLocks(fake, 40);
    const started = Date.now();
    const first = await locks.run('n', () => Promise.resolve('first'));
    expect(first).toBe('first');
    expect(Date.now() - started).toBeLessThan(30);
    await locks.run('n', () => Promise.resolve('second'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(39);
    await expect(locks.run('n', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
  });

  describe('a turn another tab never gives back (a suspended or frozen tab)', () => {
    beforeEach(() => jest.useFakeTimers({ doNotFake: ['queueMicrotask'] }));
    afterEach(() => jest.useRealTimers());

    /** A guest made, then another tab rotates its token and stalls holding the turn. */
    async function refreshPastAStalledTurn(lock: GuestClientOptions['lock']) {
      const first = tokens();
      const service = new FakeService((call) =>
        call.path === 'guest' ? json(201, { ...first, user_id: 'usr_1' }) : json(200, tokens()),
      );
      const storage = new MemorySecureStorage();
      const c = client(service, { storage, lock });
      const created = c.createGuest();
      await jest.advanceTimersByTimeAsync(10_000);
      await created;
      // The other tab's rotation reached storage; the set beside it (the first token's) is stale.
      await storage.set(KEY, 'rt_other');
      const refreshed = c.refresh();
      await jest.advanceTimersByTimeAsync(9_999);
      expect(service.presented()).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      await refreshed;
      // The latest stored token, not the one this client last held.
      expect(service.presented()).toEqual(['rt_other']);
    }

    it('Web Locks: refreshes after 10 s without the lock, with the latest stored token', async () => {
      const signals: (AbortSignal | undefined)[] = [];
      const never = {
        request: <T>(_name: string, options: { signal?: AbortSignal }, _task: () => Promise<T>) => {
          signals.push(options.signal);
          // As a browser does: the request waits until its signal aborts it.
          return new Promise<T>((_resolve, reject) =>
            options.signal?.addEventListener('abort', () => reject(new DOMException('gave up', 'AbortError'))),
          );
        },
      };
      await refreshPastAStalledTurn(webLocks(never));
      expect(signals.every((signal) => signal?.aborted)).toBe(true);
    });

    it('the lease fallback: refreshes after 10 s although the lease has 30 s left', async () => {
      const { backing, local } = originStorage();
      const stalled = () => JSON.stringify({ owner: 'suspended-tab', until: Date.now() + 30_000 });
      const lease = storageLease(local, { settleMs: 5 });
      const run = lease.run.bind(lease);
      // The stalled tab claims the lease afresh before each turn of this one.
      const lock = {
        run: <T>(name: string, task: () => Promise<T>) => {
          backing.set(`${name}:lease`, stalled());
          return run(name, task);
        },
      };
      await refreshPastAStalledTurn(lock);
    });
  });

  it('storage mode: a rotated token storage refuses to keep is presented next, and written once it can be', async () => {
    const first = tokens();
    const service = new FakeService((call) =>
      call.path === 'guest' ? json(201, { ...first, user_id: 'usr_1' }) : json(200, tokens()),
    );
    const storage = new FullStorage();
    const c = client(service, { storage });
    await c.createGuest();
    storage.full = true;
    const second = await c.refresh();
    // The session goes on with the rotated token, although storage still holds the first one.
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(await storage.get(KEY)).toBe(first.refresh_token);
    const third = await c.refresh();
    expect(service.presented()).toEqual([first.refresh_token, second.refresh_token]);
    // Storage has room again: the next turn writes the token the service holds as newest.
    storage.full = false;
    const written = jest.spyOn(storage, 'set');
    const fourth = await c.refresh();
    expect(service.presented()).toEqual([first.refresh_token, second.refresh_token, third.refresh_token]);
    expect(written.mock.calls[0]).toEqual([KEY, third.refresh_token]);
    expect(await storage.get(KEY)).toBe(fourth.refresh_token);
  });

  it('runs one task at a time per name in a process queue, and names apart in parallel', async () => {
    const lock = processLock();
    const order: string[] = [];
    const step = (label: string, ms: number) => async () => {
      order.push(`${label}+`);
      await new Promise((r) => setTimeout(r, ms));
      order.push(`${label}-`);
    };
    await Promise.all([lock.run('a', step('a1', 10)), lock.run('a', step('a2', 1)), lock.run('b', step('b1', 1))]);
    expect(order.indexOf('a2+')).toBeGreaterThan(order.indexOf('a1-'));
    expect(order.indexOf('b1+')).toBeLessThan(order.indexOf('a1-'));
  });

  it('surfaces a failure before any answer as GuestApiError network_error', async () => {
    const service = new FakeService(() => 'network');
    const err = await client(service)
      .startEmail('a@example.com')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GuestApiError);
    expect(err).toMatchObject({ status: 0, code: 'network_error' });
  });

  it('hands out the fresh access token it holds while storage cannot be read', async () => {
    // A keystore locked with the device (a game playing on in the background).
    class Locked extends MemorySecureStorage {
      locked = false;
      override get(key: string): Promise<string | null> {
        return this.locked ? Promise.reject(new Error('keystore locked')) : super.get(key);
      }
    }
    const service = new FakeService(() => json(201, { ...tokens(), user_id: 'usr_1' }));
    const storage = new Locked();
    const c = client(service, { storage });
    await c.createGuest();
    storage.locked = true;
    expect(await c.getAccessToken()).toBe(c.accessToken);
    expect(service.presented()).toEqual([]);
  });

  it('ends the session when storage refuses to delete it: sign-out, erasure, and a refused token', async () => {
    class NoDeletes extends MemorySecureStorage {
      override delete(): Promise<void> {
        return Promise.reject(new Error('keystore unavailable'));
      }
    }
    let refuse = false;
    const service = new FakeService((call) => {
      if (call.path === 'guest') return json(201, { ...tokens(), user_id: 'usr_1' });
      if (call.path === 'token' && refuse) return json(400, { error: 'invalid_grant' });
      return call.path === 'token' ? json(200, tokens()) : json(200, call.path === 'me' ? { deleted: true } : {});
    });
    const c = client(service, { storage: new NoDeletes() });
    const events = record(c);
    await c.createGuest();
    await c.revoke();
    await c.createGuest();
    await c.deleteAccount();
    await c.createGuest();
    refuse = true;
    // The game's "resume or create" needs the service's answer, not the storage's.
    await expect(c.refresh()).rejects.toMatchObject({ code: 'invalid_grant' });
    expect(c.userId).toBeNull();
    expect(events.seen.filter((e) => e.startsWith('session:'))).toEqual([
      'session:created',
      'session:revoked',
      'session:created',
      'session:deleted',
      'session:created',
      'session:ended',
    ]);
  });
});

describe('the SDK tells the game when storage refuses to keep the session', () => {
  /** A guest service: upgrade and sign-in answer full accounts, refresh rotates the latest session. */
  function guestService(): FakeService {
    const sessions: Record<string, { session: string; sub: string; guest: boolean }> = {
      guest: { session: 'ses_1', sub: 'usr_1', guest: true },
      'guest/upgrade': { session: 'ses_2', sub: 'usr_1', guest: false },
      'sign-in': { session: 'ses_3', sub: 'usr_2', guest: false },
    };
    let latest = sessions.guest as { session: string; sub: string; guest: boolean };
    return new FakeService((call) => {
      latest = sessions[call.path] ?? latest;
      const set = tokens(latest);
      return call.path === 'token'
        ? json(200, set)
        : json(call.path === 'guest' ? 201 : 200, { ...set, user_id: latest.sub });
    });
  }

  it('tells once that storage refused the new guest, and once that it keeps the session again', async () => {
    const storage = new FullStorage();
    const c = client(guestService(), { storage });
    const events = record(c);
    const heard: (string | null)[] = [];
    c.on('persistence', () => heard.push(c.userId));
    storage.full = true;
    await c.createGuest();
    await c.refresh();
    await c.refresh();
    expect(events.seen).toEqual(['session:created', 'user:created', 'persistence:refused']);
    expect(events.persistence).toEqual([
      { saved: false, item: 'refresh_token', error: expect.objectContaining({ name: 'QuotaExceededError' }) },
    ]);
    // The listener runs after the session events: it reads the guest the warning is about.
    expect(heard).toEqual(['usr_1']);
    storage.full = false;
    await c.refresh();
    const last = await c.refresh();
    expect(events.seen.slice(3)).toEqual(['persistence:saved']);
    expect(events.persistence[1]).toEqual({ saved: true, item: 'refresh_token' });
    expect(await storage.get(KEY)).toBe(last.refresh_token);
  });

  it.each([
    ['a rotated refresh token', (c: GuestClient) => c.refresh(), []],
    ['an upgrade', (c: GuestClient) => c.upgrade('prf_x'), ['session:upgraded', 'user:upgraded']],
    ['a sign-in', (c: GuestClient) => c.signIn('prf_y'), ['session:signed_in', 'user:signed_in']],
  ] as const)('tells once when storage refuses %s, and once when a later write succeeds', async (_, call, changes) => {
    const storage = new FullStorage();
    const c = client(guestService(), { storage });
    await c.createGuest();
    const events = record(c);
    storage.full = true;
    await call(c);
    await c.refresh();
    expect(events.seen).toEqual([...changes, 'persistence:refused']);
    storage.full = false;
    await c.refresh();
    await c.refresh();
    expect(events.seen).toEqual([...changes, 'persistence:refused', 'persistence:saved']);
  });

  it('tells the session is saved again once the kept token is written, though that refresh fails', async () => {
    let refusal: Response | null = null;
    const service = new FakeService((call) =>
      call.path === 'guest' ? json(201, { ...tokens(), user_id: 'usr_1' }) : (refusal ?? json(200, tokens())),
    );
    const storage = new FullStorage();
    const c = client(service, { storage });
    await c.createGuest();
    const events = record(c);
    storage.full = true;
    const kept = await c.refresh();
    storage.full = false;
    refusal = json(404, { error: 'tenant_not_found' });
    await expect(c.refresh()).rejects.toMatchObject({ status: 404 });
    expect(events.seen).toEqual(['persistence:refused', 'persistence:saved']);
    expect(await storage.get(KEY)).toBe(kept.refresh_token);
  });

  it('tells that the session is saved when the client takes over the one another tab stored', async () => {
    let guests = 0;
    const service = new FakeService(() => {
      guests += 1;
      return json(201, { ...tokens({ session: `ses_${guests}`, sub: `usr_${guests}` }), user_id: `usr_${guests}` });
    });
    const storage = new FullStorage();
    const tabA = client(service, { storage });
    const events = record(tabA);
    storage.full = true;
    await tabA.createGuest();
    storage.full = false;
    // Another tab found no stored session and started its own guest, which storage kept.
    const tabB = client(service, { storage });
    await tabB.createGuest();
    await tabA.getAccessToken();
    expect(tabA.sessionId).toBe(tabB.sessionId);
    expect(events.seen).toEqual([
      'session:created',
      'user:created',
      'persistence:refused',
      'session:adopted',
      'user:adopted',
      'persistence:saved',
    ]);
  });

  it('fails no call and says nothing when storage keeps the token but refuses the set beside it', async () => {
    // A quota the token fits in and the larger token set (with its access token) overruns.
    class NoRoomForTheSet extends MemorySecureStorage {
      override set(key: string, value: string): Promise<void> {
        if (key.endsWith(':session')) return Promise.reject(new DOMException('quota', 'QuotaExceededError'));
        return super.set(key, value);
      }
    }
    const storage = new NoRoomForTheSet();
    const service = guestService();
    const c = client(service, { storage });
    const events = record(c);
    const created = await c.createGuest();
    const refreshed = await c.refresh();
    expect(await storage.get(KEY)).toBe(refreshed.refresh_token);
    expect(service.presented()).toEqual([created.refresh_token]);
    // A page loaded later goes on with the stored token.
    const other = client(service, { storage });
    await other.refresh();
    expect(service.presented()).toEqual([created.refresh_token, refreshed.refresh_token]);
    expect(events.seen).toEqual(['session:created', 'user:created']);
  });

  it('goes on when a storage listener throws, and still tells the other listeners', async () => {
    const thrown: unknown[] = [];
    const original = globalThis.queueMicrotask;
    // The SDK rethrows a listener's error in a microtask, for the runtime's report: catch it there.
    const spy = jest.spyOn(globalThis, 'queueMicrotask').mockImplementation((task) =>
      original(() => {
        try {
          task();
        } catch (err) {
          thrown.push(err);
        }
      }),
    );
    try {
      const storage = new FullStorage();
      const c = client(guestService(), { storage });
      c.on('persistence', () => {
        throw new Error('the game’s bug');
      });
      const events = record(c);
      storage.full = true;
      const created = await c.createGuest();
      storage.full = false;
      await c.refresh();
      await new Promise((r) => setTimeout(r, 0));
      expect(c.userId).toBe(created.user_id);
      expect(events.seen).toEqual(['session:created', 'user:created', 'persistence:refused', 'persistence:saved']);
      expect(thrown).toEqual([new Error('the game’s bug'), new Error('the game’s bug')]);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('the redirect back to the game', () => {
  it('reads the proof, and names the sign-in that failed when there is none', () => {
    const back = 'https://play.example/auth';
    expect(GuestClient.providerRedirectResult(`${back}?proof_id=prf_1&expires_in=300`)).toEqual({
      proof_id: 'prf_1',
      expires_in: 300,
    });
    expect(() => GuestClient.providerRedirectResult(`${back}?error=access_denied`)).toThrow(
      expect.objectContaining({
        code: 'access_denied',
        description: 'The identity provider sign-in did not produce a proof.',
      }),
    );
    expect(() => GuestClient.chatRedirectResult(back)).toThrow(
      expect.objectContaining({
        code: 'invalid_redirect',
        description: 'The chat platform sign-in did not produce a proof.',
      }),
    );
  });
});

describe('the service origin as given', () => {
  it('takes an AUTH_ORIGIN pasted with a trailing slash', async () => {
    const urls: string[] = [];
    const service = new FakeService(() => json(201, { ...tokens(), user_id: 'usr_1' }));
    const c = client(service, {
      baseUrl: 'https://auth.example/',
      fetch: ((url: string, init?: RequestInit & { body?: string }) => {
        urls.push(url);
        return service.fetch(url, init);
      }) as unknown as typeof fetch,
    });
    await c.createGuest();
    expect(urls).toEqual(['https://auth.example/t/acme/guest']);
    expect(c.providerStartUrl('apple')).toMatch(/^https:\/\/auth\.example\/t\/acme\/providers\/apple\/start\?/);
  });
});
