import type { CookieJar } from './cookie-jar.js';
import { FlowClock } from './flow-clock.js';
import type { LeaseStorage, RefreshLock } from './refresh-lock.js';
import { DEFAULT_RETRY, parseRetryAfter, withRetry, type RetryPolicy } from './retry.js';
import { MemorySecureStorage, refusedStorage, webStorage, type SecureStorage } from './secure-storage.js';
import type { SessionEventName, SessionListener, PersistenceListener } from './session-events.js';
import { SessionKeeper } from './session-keeper.js';
import { GuestApiError, isTokenSet, playerChanged, type TokenSet } from './tokens.js';

export { GuestApiError, type TokenSet } from './tokens.js';

/**
 * A typed client of the guest API (contract sections 6, 11 and 13) that runs unchanged in browsers
 * (fetch with `credentials: 'include'`, Web Crypto, Web Locks, no Node built-ins; the refresh token
 * in the service's HttpOnly cookie) and in Node or native shells (an explicit cookie jar; refresh
 * tokens only through a SecureStorage adapter).
 */

export interface GuestCreated extends TokenSet {
  readonly user_id: string;
  readonly upgrade_proof: { readonly proof_id: string; readonly expires_in: number };
}

export interface Proof {
  readonly proof_id: string;
  readonly expires_in: number;
}

/** `provider`: `email`, `chat_platform` or the id of one of the tenant's OpenID Connect providers. */
export interface LinkedIdentity {
  readonly provider: string;
  readonly provider_subject: string;
  readonly email: string | null;
}

export interface Upgraded extends TokenSet {
  readonly user_id: string;
  readonly linked_identity: LinkedIdentity;
}

/** A credential linked to a full account (`POST me/identities`). */
export interface Linked {
  readonly user_id: string;
  readonly linked_identity: LinkedIdentity;
}

/** The signed-in player as the service knows it (`GET /t/{tenantId}/me`, contract 13). */
export interface Player {
  readonly id: string;
  readonly guest: boolean;
  readonly created_at: string;
  readonly identities: readonly {
    /** `email`, `chat_platform`, or the id of an OpenID Connect provider of the tenant. */
    readonly provider: string;
    readonly provider_subject: string;
    readonly email?: string;
  }[];
}

export interface GuestClientOptions {
  /** The service's AUTH_ORIGIN, e.g. `https://auth.example`. */
  readonly baseUrl: string;
  readonly tenantId: string;
  readonly clientId: string;
  /**
   * Where refresh tokens are kept in a native shell or Node (the platform keystore). In a browser
   * leave it out: the service keeps the refresh token in an HttpOnly cookie (see `refreshTokenIn`).
   */
  readonly storage?: SecureStorage;
  /**
   * Where the refresh token lives (issue 22 finding 7):
   * - `'cookie'`, the default when neither `storage` nor `cookies` is given (a browser page): in
   *   the service's HttpOnly refresh cookie, which no script of the page can read; the client keeps
   *   no refresh token in any storage, and never hands one to the game. The origin's tabs share only
   *   the session's id (no secret) through `sharedStorage`, and take turns to refresh under its lock.
   *   A browser that refuses the cookie (third-party cookies blocked, on a page of another site than
   *   the auth host) is detected at the first refresh: the client then refreshes with the token it
   *   holds in memory, for as long as the page lives, and tells the game (`persistence`).
   * - `'storage'`, the default when `storage` is given: in that adapter (native shells, Node).
   * With a jar and no `storage` nothing is kept unless `'cookie'` is asked for (the jar keeps it).
   */
  readonly refreshTokenIn?: 'cookie' | 'storage';
  /**
   * Cookie mode: the Web Storage the origin's tabs share the session id through, and whose lock
   * (Web Locks, else a lease in it) they take turns under. Default `localStorage` where there is
   * one, else process memory.
   */
  readonly sharedStorage?: LeaseStorage;
  /**
   * Outside a browser: the jar that keeps the flow cookie. In a browser leave it out: the browser
   * keeps the cookie (partitioned for a cross-site page) and sends it with `credentials: 'include'`.
   */
  readonly cookies?: CookieJar;
  /** Continue a flow (after a redirect or a reload); a new one is made otherwise. */
  readonly browserFlowId?: string;
  readonly fetch?: typeof fetch;
  /**
   * Renew the access token shortly before it expires, by timer (default true). `stop()` ends it;
   * `getAccessToken()` renews on demand either way.
   */
  readonly autoRefresh?: boolean;
  /**
   * How clients sharing the storage take turns to refresh. Default: the storage's own (Web Locks
   * for `webStorage`, one queue per `MemorySecureStorage`), else one queue for this client.
   */
  readonly lock?: RefreshLock;
  /** Retries of the refresh grant and `me()` on network failures, 503 and 429. */
  readonly retry?: Partial<RetryPolicy>;
}

/** A fresh `flw_` id from Web Crypto: 18 random bytes, base64url (contract section 2). */
export function newBrowserFlowId(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(18));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `flw_${btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

type Method = 'GET' | 'POST' | 'DELETE';

/**
 * How long a sign-in that leaves the page for the chat platform or a provider may hold something
 * in the flow: its one-time bounce lives ten minutes, the state the platform must come back with
 * ten more, and the proof it brings back five (the service's default PROVIDER_PROOF_TTL).
 */
const REDIRECT_SECONDS = 600 + 600 + 300;

/**
 * What the service answers (src/guest/browser-flows.ts) when a known flow is asked for without its
 * cookie: the flow id is claimed by a cookie this client does not hold.
 */
const FOREIGN_FLOW = 'The browser flow cookie is missing or does not belong to this flow.';

/** A 2xx whose body did not arrive whole (cut off after the headers) is no answer, like a dropped connection. */
function unreadableAnswer(): GuestApiError {
  return new GuestApiError(0, 'network_error', 'The answer arrived incomplete or unreadable.');
}

/** The proof (or the `error`) a sign-in redirect back to the game carries in its query. */
function redirectResult(redirectedTo: string, failure: string): Proof {
  const q = new URL(redirectedTo).searchParams;
  const proofId = q.get('proof_id');
  const expiresIn = Number(q.get('expires_in'));
  if (proofId && Number.isInteger(expiresIn) && expiresIn > 0) return { proof_id: proofId, expires_in: expiresIn };
  throw new GuestApiError(0, q.get('error') ?? 'invalid_redirect', failure);
}

/**
 * Cookie mode's store of the session id: the page's `localStorage` (shared by its tabs), or memory
 * where there is none (Node, a native shell). A browser that refuses the site storage (blocked by
 * the player's settings) throws on reading `localStorage`; the session then lives in the cookie
 * alone, if the browser keeps that one, and the refusal reaches the game as a `persistence` event.
 */
function sharedStorage(given: LeaseStorage | undefined): SecureStorage {
  let local: LeaseStorage | null | undefined = given;
  try {
    local ??= (globalThis as { localStorage?: LeaseStorage | null }).localStorage;
  } catch (err) {
    // A DOMException (SecurityError), passed on as the browser threw it.
    return refusedStorage(err as Error);
  }
  return local ? webStorage(local) : new MemorySecureStorage();
}

export class GuestClient {
  private readonly tenantBase: string;
  private flowId: string;
  /** The flow a call was last answered in: its cookie was this client's. */
  private answeredFlow: string | null = null;
  private readonly flowClock: FlowClock;
  /** The refresh token is in the service's HttpOnly cookie, not in this client's storage. */
  readonly cookieMode: boolean;
  private readonly keeper: SessionKeeper;
  private readonly retry: RetryPolicy;

  constructor(private readonly opts: GuestClientOptions) {
    // `https://auth.example/` is how an origin is often pasted; `//t/...` would be a 404 on every call.
    this.tenantBase = `${opts.baseUrl.replace(/\/+$/, '')}/t/${opts.tenantId}`;
    this.flowId = opts.browserFlowId ?? newBrowserFlowId();
    this.flowClock = new FlowClock(`svc-auth:${opts.tenantId}:${opts.clientId}:flow`);
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.cookieMode = (opts.refreshTokenIn ?? (opts.storage || opts.cookies ? 'storage' : 'cookie')) === 'cookie';
    const storage = this.cookieMode ? sharedStorage(opts.sharedStorage) : opts.storage;
    this.keeper = new SessionKeeper({
      name: `svc-auth:${opts.tenantId}:${opts.clientId}`,
      ...(storage ? { storage } : {}),
      cookie: this.cookieMode,
      ...(opts.lock ? { lock: opts.lock } : {}),
      autoRefresh: opts.autoRefresh ?? true,
      grant: (refreshToken) => this.grant(refreshToken),
    });
  }

  /**
   * The flow's id, to keep across redirects and reloads. It changes when a call that can start a
   * flow finds this one claimed by a cookie the client never received: keep the id read last.
   */
  get browserFlowId(): string {
    return this.flowId;
  }

  get accessToken(): string | null {
    return this.keeper.session?.accessToken ?? null;
  }

  get userId(): string | null {
    return this.keeper.session?.userId ?? null;
  }

  get sessionId(): string | null {
    return this.keeper.session?.sessionId ?? null;
  }

  /** The token's `guest` claim: true until the player attaches a credential or signs in. */
  get isGuest(): boolean | null {
    return this.keeper.session?.guest ?? null;
  }

  /**
   * `session`: the session id changed (created, upgraded, signed in, ended, erased, or taken over
   * from another tab). `user`: the player changed (another user id, or `guest` flipped).
   * `persistence`: storage refused to keep the session (`saved` false: the player is lost when the
   * page or app closes; `item` `refresh_cookie`: the browser refused the refresh cookie), or keeps
   * it again (`saved` true); told once each way, never at every refresh.
   * Returns a function that removes the listener.
   */
  on(event: SessionEventName, listener: SessionListener): () => void;
  on(event: 'persistence', listener: PersistenceListener): () => void;
  on(event: SessionEventName | 'persistence', listener: SessionListener | PersistenceListener): () => void {
    return event === 'persistence'
      ? this.keeper.events.on(event, listener as PersistenceListener)
      : this.keeper.events.on(event, listener as SessionListener);
  }

  /** Stops the early-refresh timer (a discarded client, a finished tool). */
  stop(): void {
    this.keeper.stop();
  }

  /** An access token to send to the game's own server: renewed first when it is about to expire. */
  getAccessToken(): Promise<string> {
    return this.keeper.accessToken();
  }

  /** The flow cookie in the jar (Node and native shells; a browser never shows it to scripts). */
  flowCookie(): string | undefined {
    return this.opts.cookies?.get(`__Host-svc_flow_${this.browserFlowId}`);
  }

  createGuest(): Promise<GuestCreated> {
    return this.keeper.replace('created', () =>
      this.startingFlow(() => this.tokenRequest<GuestCreated>('POST', 'guest', this.flowBody())),
    );
  }

  startEmail(email: string): Promise<{ expires_in: number }> {
    this.freshFlowForNewSteps();
    return this.holding(this.startingFlow(() => this.request('POST', 'email/start', { ...this.flowBody(), email })));
  }

  verifyEmail(email: string, code: string): Promise<Proof> {
    return this.holding(this.request('POST', 'email/verify', { ...this.flowBody(), email, code }));
  }

  /** The URL a top-level navigation opens to prove a chat-platform account (`GET chat/start`). */
  chatStartUrl(): string {
    this.flowClock.holds(this.flowId, REDIRECT_SECONDS);
    const q = new URLSearchParams(this.flowBody());
    return `${this.tenantBase}/chat/start?${q.toString()}`;
  }

  /**
   * For a page that opens the platform in a popup or a redirect (`POST chat/start`): a one-time
   * bounce on the auth host, to open once, in this browser, within ten minutes; it goes on to the
   * platform. The flow must be under way (after `createGuest`).
   */
  async chatAuthorizeUrl(): Promise<string> {
    const answer = await this.request<{ authorize_url: string }>('POST', 'chat/start', this.flowBody());
    this.flowClock.holds(this.flowId, REDIRECT_SECONDS);
    return answer.authorize_url;
  }

  /**
   * Reads the chat-platform callback's redirect to the game's registered URI: the provider proof,
   * or a GuestApiError (status 0) with `access_denied` when the player declined. Both arrive as
   * query parameters (`?proof_id=…&expires_in=…` or `?error=…`). The proof is bound to the flow's
   * HttpOnly cookie; a page should still take it off its address at once (`history.replaceState`).
   */
  static chatRedirectResult(redirectedTo: string): Proof {
    return redirectResult(redirectedTo, 'The chat platform sign-in did not produce a proof.');
  }

  /** The URL a top-level navigation opens to sign in at an OpenID Connect provider (`GET providers/{id}/start`). */
  providerStartUrl(providerId: string): string {
    this.flowClock.holds(this.flowId, REDIRECT_SECONDS);
    const q = new URLSearchParams(this.flowBody());
    return `${this.tenantBase}/providers/${encodeURIComponent(providerId)}/start?${q.toString()}`;
  }

  /** The provider's authorize URL for a page that opens it in a popup or a redirect (`POST providers/{id}/start`). */
  async providerAuthorizeUrl(providerId: string): Promise<string> {
    const path = `providers/${encodeURIComponent(providerId)}/start`;
    const answer = await this.request<{ authorize_url: string }>('POST', path, this.flowBody());
    this.flowClock.holds(this.flowId, REDIRECT_SECONDS);
    return answer.authorize_url;
  }

  /**
   * Native sign-in (`POST providers/{id}/token`): the ID token the platform's own SDK obtained
   * (Sign in with Apple on iOS, Google's Credential Manager on Android), and the nonce the app gave
   * that SDK, if any. Answers a provider proof for `upgrade`, `signIn` or `linkIdentity`.
   */
  providerToken(providerId: string, idToken: string, nonce?: string): Promise<Proof> {
    this.freshFlowForNewSteps();
    return this.holding(
      this.startingFlow(() =>
        this.request('POST', `providers/${encodeURIComponent(providerId)}/token`, {
          ...this.flowBody(),
          id_token: idToken,
          ...(nonce === undefined ? {} : { nonce }),
        }),
      ),
    );
  }

  /** Reads the provider callback's redirect to the game: a proof, or a GuestApiError with `error`. */
  static providerRedirectResult(redirectedTo: string): Proof {
    return redirectResult(redirectedTo, 'The identity provider sign-in did not produce a proof.');
  }

  /** A full account's linking intent (`POST me/linking-intent`), before `linkIdentity`. */
  async createAccountLinkingIntent(): Promise<{ intent_id: string; expires_in: number }> {
    const bearer = await this.getAccessToken();
    this.freshFlowForNewSteps();
    return this.holding(this.startingFlow(() => this.request('POST', 'me/linking-intent', this.flowBody(), bearer)));
  }

  /**
   * Links a proven credential to the signed-in full account (`POST me/identities`); the session
   * stays. The link spends the proof, so should its answer be lost (no answer, a cut-off body, a
   * gateway's 5xx) asking again would only be refused: the client compares the account's
   * credentials with those it read before the call, and one that appeared is the one linked, as if
   * the answer had arrived. Otherwise the call rejects as it came (a 503 before the service
   * committed spends nothing, and the retry links).
   */
  async linkIdentity(proofId: string): Promise<Linked> {
    const bearer = await this.getAccessToken();
    const before = await this.me().catch(() => null);
    try {
      return await this.request('POST', 'me/identities', { ...this.flowBody(), proof_id: proofId }, bearer);
    } catch (err) {
      if (before === null || !(err instanceof GuestApiError) || (err.status !== 0 && err.status < 500)) throw err;
      const after = await this.me().catch(() => null);
      const known = new Set(before.identities.map((i) => JSON.stringify([i.provider, i.provider_subject])));
      const added = after?.identities.filter((i) => !known.has(JSON.stringify([i.provider, i.provider_subject])));
      const [linked] = added ?? [];
      if (after === null || added?.length !== 1 || linked === undefined) throw err;
      const { provider, provider_subject, email } = linked;
      return { user_id: after.id, linked_identity: { provider, provider_subject, email: email ?? null } };
    }
  }

  /**
   * Removes one credential of the account; never the last one that can sign in (409
   * `last_identity`): a credential of a provider the tenant removed does not count.
   */
  async unlinkIdentity(provider: string, providerSubject: string): Promise<{ unlinked: true }> {
    return this.request(
      'DELETE',
      `me/identities/${encodeURIComponent(provider)}/${encodeURIComponent(providerSubject)}`,
      undefined,
      await this.getAccessToken(),
    );
  }

  async createLinkingIntent(
    opts: { upgradeProofId?: string } = {},
  ): Promise<{ intent_id: string; expires_in: number }> {
    const extra: Record<string, string> = opts.upgradeProofId ? { upgrade_proof_id: opts.upgradeProofId } : {};
    const bearer = await this.bearer();
    // The guest's upgrade proof lives in the flow that created the guest.
    if (!opts.upgradeProofId) this.freshFlowForNewSteps();
    return this.holding(
      this.startingFlow(() => this.request('POST', 'guest/linking-intent', { ...this.flowBody(), ...extra }, bearer)),
    );
  }

  /**
   * Attaches a proven credential. The upgrade replaces the guest's session, so should its answer be
   * lost (no answer, a cut-off body, a gateway's 5xx) the client refreshes: within its reuse
   * interval the service answers the guest's token with the replacement session (contract 13), and
   * the upgrade resolves as if its answer had arrived (the session events say `refreshed`). A 5xx
   * before the service committed refreshes the guest's own session and rejects as it came.
   */
  async upgrade(proofId: string): Promise<Upgraded> {
    const bearer = await this.bearer();
    const before = this.sessionId;
    const guestId = this.userId;
    try {
      return await this.keeper.replace('upgraded', () =>
        this.tokenRequest<Upgraded>('POST', 'guest/upgrade', { ...this.flowBody(), proof_id: proofId }, bearer),
      );
    } catch (err) {
      if (!(err instanceof GuestApiError) || (err.status !== 0 && err.status < 500)) throw err;
      const renewed = await this.refresh().catch(() => null);
      if (renewed === null || renewed.session_id === before) throw err;
      const player = await this.me();
      // A guest holds no credential, so the one its upgrade attached is the account's only one. An
      // upgrade keeps the user id: another player means another tab's sign-in was taken over.
      const [attached] = player.identities;
      if (player.guest || attached === undefined || player.id !== guestId) throw err;
      const { provider, provider_subject, email } = attached;
      return { ...renewed, user_id: player.id, linked_identity: { provider, provider_subject, email: email ?? null } };
    }
  }

  signIn(proofId: string): Promise<TokenSet & { user_id: string }> {
    return this.keeper.replace('signed_in', () =>
      this.tokenRequest<TokenSet & { user_id: string }>('POST', 'sign-in', { ...this.flowBody(), proof_id: proofId }),
    );
  }

  /**
   * Renews the session now and returns the new token set. Callers at the same time share one
   * refresh, and tabs of one origin take turns: a tab that finds the token rotated by another
   * takes over that tab's fresh set. Network failures, 503 and 429 are retried and never cost the
   * stored token; only `invalid_grant` (revoked, replayed, expired) ends the session, drops the
   * token and emits `session` and `user` with reason `ended`.
   */
  refresh(): Promise<TokenSet> {
    return this.keeper.refresh();
  }

  /** The player's account: id, whether a guest, creation time and attached credentials. */
  async me(): Promise<Player> {
    const bearer = await this.getAccessToken();
    return (await this.retrying((limit) => this.request<{ user: Player }>('GET', 'me', undefined, bearer, limit))).user;
  }

  /**
   * Erases the player's account (app stores require in-app deletion, guests included): every
   * session ends, the stored tokens are dropped, and `session` and `user` fire with `deleted`.
   * Should the answer be lost (no answer, a gateway's 5xx), the service is asked with the same
   * token whether it still knows the player: a 401 means the erasure went through, and the call
   * resolves as if its answer had arrived; otherwise it rejects as it came.
   */
  async deleteAccount(): Promise<void> {
    const shown = this.userId;
    const bearer = await this.getAccessToken();
    // Taking a fresh token may take over another tab's new player: never erase that one instead.
    if (shown !== null && this.userId !== shown) throw playerChanged();
    try {
      await this.request<{ deleted: true }>('DELETE', 'me', undefined, bearer);
    } catch (err) {
      if (!(err instanceof GuestApiError) || (err.status !== 0 && err.status < 500)) throw err;
      const gone = await this.request('GET', 'me', undefined, bearer).then(
        () => false,
        (check: unknown) => check instanceof GuestApiError && check.status === 401,
      );
      if (!gone) throw err;
    }
    await this.keeper.clear('deleted');
  }

  /**
   * Signs the player out (RFC 7009 revocation) and drops the stored tokens. In cookie mode the
   * service revokes the cookie's session and expires the cookie; where the browser kept no cookie,
   * the access token names the session instead. A client that refreshes with its in-memory token
   * (the browser refused the cookie) revokes that token: a cookie the browser may hold by now
   * could name another session.
   */
  async revoke(): Promise<void> {
    const clientId = this.opts.clientId;
    const refreshToken = await this.keeper.storedRefreshToken();
    const token = refreshToken ?? this.accessToken;
    if (this.cookieMode && refreshToken === null) {
      await this.request('POST', 'revoke', { client_id: clientId }).catch((err: unknown) => {
        if (!(err instanceof GuestApiError) || err.code !== 'invalid_request' || !token) throw err;
        return this.request('POST', 'revoke', { token, client_id: clientId });
      });
    } else if (token) {
      await this.request('POST', 'revoke', { token, client_id: clientId });
    }
    await this.keeper.clear('revoked');
  }

  /** Without a token, the service takes the client's refresh cookie (cookie mode). */
  private grant(refreshToken: string | undefined): Promise<TokenSet> {
    const body = {
      grant_type: 'refresh_token',
      ...(refreshToken === undefined ? {} : { refresh_token: refreshToken }),
      client_id: this.opts.clientId,
    };
    // A lost answer is retried with the same token: the service's reuse interval answers it with
    // the successor it already made (contract 13), so no retry burns the session.
    return this.retrying((limit) => this.tokenRequest<TokenSet>('POST', 'token', body, undefined, limit));
  }

  private retrying<T>(call: (timeLimitMs: number) => Promise<T>): Promise<T> {
    return withRetry(call, (err) => (err instanceof GuestApiError ? err : null), this.retry);
  }

  /**
   * The access token for a call that needs one; a dead session sends none and is refused. A client
   * that holds nothing yet (a page just back from the chat platform or a provider) proves the
   * stored session first, or its upgrade would go without a bearer.
   */
  private async bearer(): Promise<string | undefined> {
    return this.getAccessToken().catch(() => this.accessToken ?? undefined);
  }

  private flowBody(): { client_id: string; browser_flow_id: string } {
    return { client_id: this.opts.clientId, browser_flow_id: this.flowId };
  }

  /**
   * Where a new linking or sign-in begins: in a fresh flow once this one is past half its hour
   * with nothing of the page's still live in it, so its steps cannot outlast the flow (flow-clock.ts).
   */
  private freshFlowForNewSteps(): void {
    if (this.flowClock.spent(this.flowId)) this.flowId = newBrowserFlowId();
  }

  /** A step's answer: what it started (an intent, a code, a proof) lives `expires_in` in the flow. */
  private async holding<T extends { expires_in: number }>(step: Promise<T>): Promise<T> {
    const answer = await step;
    if (typeof answer.expires_in === 'number') this.flowClock.holds(this.flowId, answer.expires_in);
    return answer;
  }

  /**
   * Runs a call that starts its flow when the flow is new. A flow whose creating answer was lost
   * (with its cookie) stays claimed for an hour, and nothing in it is usable without that cookie:
   * the call moves to a fresh flow, once. A flow this client was answered in keeps its refusal
   * (the browser dropped the cookie; a new flow would lose it too).
   */
  private async startingFlow<T>(call: () => Promise<T>): Promise<T> {
    const refused = this.flowId;
    try {
      return await call();
    } catch (err) {
      const foreign = err instanceof GuestApiError && err.status === 403 && err.description === FOREIGN_FLOW;
      if (!foreign || this.answeredFlow === refused) throw err;
      if (this.flowId === refused) this.flowId = newBrowserFlowId();
      return call();
    }
  }

  /** A call answering a token set: an answer without one is no answer (contract 13: retried, never kept). */
  private async tokenRequest<T extends TokenSet>(
    method: Method,
    path: string,
    body?: Record<string, string>,
    bearer?: string,
    timeLimitMs?: number,
  ): Promise<T> {
    const answer = await this.request<T>(method, path, body, bearer, timeLimitMs);
    if (!isTokenSet(answer)) throw unreadableAnswer();
    return answer;
  }

  private async request<T>(
    method: Method,
    path: string,
    body?: Record<string, string>,
    bearer?: string,
    timeLimitMs = this.retry.timeoutMs,
  ): Promise<T> {
    const headers: Record<string, string> = {};
    if (body) headers['Content-Type'] = 'application/json';
    if (bearer) headers.Authorization = `Bearer ${bearer}`;
    const jar = this.opts.cookies;
    const cookie = jar?.header();
    if (cookie !== undefined) headers.Cookie = cookie;
    const { res, json } = await this.exchange(
      `${this.tenantBase}/${path}`,
      {
        method,
        headers,
        ...(body ? { body: JSON.stringify(body) } : {}),
        // A browser sends and keeps the flow cookie itself; with a jar, this client does.
        credentials: jar ? 'omit' : 'include',
        // In cookie mode the browser also keeps the session's refresh cookie, which a refresh
        // rotates on every page load: should the tab close before the answer, the browser still
        // takes it and its cookie, or the next visit would present the one rotated away.
        ...(this.cookieMode ? { keepalive: true } : {}),
      },
      timeLimitMs,
    );
    if (!res.ok) {
      const text = (v: unknown, fallback: string): string => (typeof v === 'string' ? v : fallback);
      throw new GuestApiError(
        res.status,
        text(json?.error, 'unknown'),
        text(json?.error_description, ''),
        parseRetryAfter(res.headers.get('Retry-After')),
      );
    }
    if (json === undefined) throw unreadableAnswer();
    if (body?.browser_flow_id !== undefined) {
      this.answeredFlow = body.browser_flow_id;
      this.flowClock.answered(body.browser_flow_id);
    }
    return json as T;
  }

  /**
   * One fetch and its body within the time limit; no answer in time is a network failure (status
   * 0). The body is undefined when it did not arrive whole or is no JSON object.
   */
  private async exchange(
    url: string,
    init: RequestInit,
    timeLimitMs: number,
  ): Promise<{ res: Response; json: Record<string, unknown> | undefined }> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeLimitMs);
    try {
      const res = await (this.opts.fetch ?? globalThis.fetch)(url, { ...init, signal: abort.signal }).catch(
        (err: unknown) => {
          throw new GuestApiError(0, 'network_error', err instanceof Error ? err.message : String(err));
        },
      );
      this.opts.cookies?.store(res.headers.getSetCookie?.() ?? []);
      const json: unknown = await res.json().catch(() => undefined);
      return { res, json: typeof json === 'object' && json !== null ? (json as Record<string, unknown>) : undefined };
    } finally {
      clearTimeout(timer);
    }
  }
}
