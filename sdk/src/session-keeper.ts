import { decodeStoredSession, encodeStoredSession, type StoredSession } from './stored-session.js';
import { processLock, type RefreshLock } from './refresh-lock.js';
import type { SecureStorage } from './secure-storage.js';
import {
  SessionEvents,
  type SessionChangeReason,
  type SessionState,
  type PersistenceChange,
} from './session-events.js';
import { GuestApiError, noRefreshToken, type TokenSet } from './tokens.js';

/** The session a client holds: its access token and what the token says about the player. */
export interface HeldSession {
  readonly accessToken: string;
  readonly sessionId: string;
  readonly userId: string;
  readonly guest: boolean;
  readonly scope: string;
  readonly idToken?: string;
  /** Epoch milliseconds. */
  readonly expiresAt: number;
  /** Epoch milliseconds: from here on the access token is renewed before it is handed out. */
  readonly refreshAt: number;
  /** When this client took the session, by the wall clock and by the monotonic clock (`clockNow`). */
  readonly takenAt: { readonly wall: number; readonly monotonic: number };
}

export interface SessionKeeperOptions {
  /**
   * Storage mode: where the refresh token (and the token set beside it) is kept. Cookie mode:
   * where the origin's tabs share the id of the session the cookie belongs to, which is no secret.
   */
  readonly storage?: SecureStorage;
  /**
   * Cookie mode (issue 22 finding 7): the refresh token lives in the service's HttpOnly cookie,
   * which the browser (or a jar) presents by itself; this client keeps it in no storage, and holds
   * it in memory only for a browser that refuses the cookie (see `pageToken`).
   */
  readonly cookie?: boolean;
  /** Prefix of this client's storage keys and name of its lock: one per tenant and client. */
  readonly name: string;
  readonly lock?: RefreshLock;
  readonly autoRefresh: boolean;
  /** One refresh grant over HTTP (retries of transient failures included); none: the cookie's. */
  readonly grant: (refreshToken: string | undefined) => Promise<TokenSet>;
}

/**
 * If a timed refresh fails for a while (offline), the next try, or later when the service's
 * `Retry-After` asks for more; the session is kept meanwhile.
 */
const RETRY_LATER_MS = 30_000;

const monotonicNow = (): number => globalThis.performance?.now() ?? Date.now();

/**
 * Now, for a session held since `h.takenAt`: the later of what the wall clock and the monotonic
 * clock say has passed since then. A player who sets the device's clock back (to skip a game's
 * timers) moves only the wall clock; a device asleep may stop only the monotonic one. Either way
 * the access token's minutes run out at the service all the same.
 */
export function clockNow(h: HeldSession): number {
  return h.takenAt.wall + Math.max(Date.now() - h.takenAt.wall, monotonicNow() - h.takenAt.monotonic);
}
/**
 * When to renew a token that lives `expiresIn` seconds: at 80 %, and never more than a minute
 * ahead, so a 5-minute token is renewed after 4 minutes with time left for retries.
 */
export function refreshLead(expiresIn: number): number {
  return Math.min(60, expiresIn * 0.2);
}

/** The unverified payload of a JWT this client received over TLS from the service. */
function claimsOf(jwt: string): Record<string, unknown> {
  const part = jwt.split('.')[1] ?? '';
  try {
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/'));
    const bytes = Uint8Array.from(json, (c) => c.charCodeAt(0));
    return JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** What the client holds of a token set: the player as its access token names them. */
function heldSession(
  t: { access_token: string; session_id: string; scope: string; id_token?: string },
  expiresAt: number,
  refreshAt: number,
): HeldSession {
  const claims = claimsOf(t.access_token);
  return {
    accessToken: t.access_token,
    sessionId: t.session_id,
    userId: typeof claims.sub === 'string' ? claims.sub : '',
    guest: claims.guest === true,
    scope: t.scope,
    ...(t.id_token ? { idToken: t.id_token } : {}),
    expiresAt,
    refreshAt,
    takenAt: { wall: Date.now(), monotonic: monotonicNow() },
  };
}

/**
 * Keeps a client's tokens by the rules of contract section 13: one refresh in flight per client,
 * turns taken with every other client of the same storage (the origin's tabs), the refresh token
 * kept on anything but a definite `invalid_grant`, an early refresh by timer, and an event
 * whenever the session or the player changes.
 */
export class SessionKeeper {
  private held: HeldSession | null = null;
  /**
   * The refresh token this client last presented or received (in cookie mode, the id of the
   * session whose cookie it last used or received). Storage holding another one means another tab
   * rotated it (or replaced the session) since: this client must not present its own.
   */
  private known: string | null = null;
  /**
   * Cookie mode: storage refused the session id (full, or refused by the browser). The cookie
   * holds the session all the same, so this client goes on with the id it knows.
   */
  private unshared = false;
  /**
   * Storage mode: the rotated refresh token storage refused to keep (a full quota, a failing
   * keystore write), and the token storage held when it refused. The service already rotated, so
   * once the reuse interval is over the stored one is a replay that revokes the session: this
   * client presents the rotated one instead for as long as it lives, and writes it again in its
   * next turn.
   */
  private unsaved: { token: string; over: string | null } | null = null;
  /**
   * Cookie mode: the refresh token of the token set this client received last, in memory only
   * (never in storage, which every script of the page reads), until a refresh by cookie shows that
   * the browser keeps the cookie. A browser that refuses third-party cookies (Safari's default) on
   * a game page of another site than the auth host never stores the cookie, and its first refresh
   * by cookie is refused as invalid_request: without this token the guest would be lost after one
   * access-token lifetime. Once the cookie works, other tabs rotate it, and a token kept here could
   * be a rotated one whose presentation is a replay that revokes the session (contract 13).
   */
  private pageToken: string | null = null;
  /**
   * Cookie mode: the browser refused the cookie, so this client refreshes with `pageToken` in the
   * body (the service takes the body's token over the cookie). Its session then lives in this
   * page alone: no other tab or reload can refresh it, so storage's session id is not its concern.
   */
  private cookieRefused = false;
  private inflight: Promise<TokenSet> | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private autoRefresh: boolean;
  private readonly lock: RefreshLock;
  /** What the game hears: the client adds its listeners here. */
  readonly events = new SessionEvents();

  constructor(private readonly opts: SessionKeeperOptions) {
    this.lock = opts.lock ?? opts.storage?.lock ?? processLock();
    this.autoRefresh = opts.autoRefresh;
  }

  get session(): HeldSession | null {
    return this.held;
  }

  /** Stops the early-refresh timer for good; `accessToken()` still refreshes when needed. */
  stop(): void {
    this.autoRefresh = false;
    clearTimeout(this.timer);
  }

  /**
   * A usable access token: the one held while it is fresh and storage still holds this client's
   * refresh token; otherwise what another tab left, or a refresh.
   */
  async accessToken(): Promise<string> {
    const held = this.held;
    if (held && clockNow(held) < held.refreshAt) {
      // No other tab can rotate a session that lives in this page alone: nothing to check.
      if (this.cookieRefused) return held.accessToken;
      // Storage that cannot be read now (a keystore locked with the device) cannot show what
      // another client did; the token held is fresh, and the game's calls need it more than the
      // check, which the refresh at `refreshAt` makes again.
      const stored = this.opts.storage ? await this.stored().catch(() => this.known) : this.known;
      if (stored === this.known) return held.accessToken;
    }
    if (!this.opts.storage) {
      if (held && clockNow(held) < held.expiresAt) return held.accessToken;
      throw noRefreshToken();
    }
    try {
      return (await this.shared(false)).access_token;
    } catch (err) {
      // The early renewal failed (offline, 503, 429 after the retries) and kept the session: the
      // token held has up to a minute left, and the game's calls need it more than the failure.
      const still = this.held;
      if (still && still === held && clockNow(still) < still.expiresAt) return still.accessToken;
      throw err;
    }
  }

  /**
   * Renews the session now. Callers at the same time share one refresh; if another tab rotated the
   * token meanwhile, its fresh token set is taken over instead of rotating again.
   */
  refresh(): Promise<TokenSet> {
    return this.shared(true);
  }

  /**
   * Runs a call that yields a new token set (guest creation, sign-in, upgrade) in this storage's
   * turn, so that no refresh of the session it replaces interleaves, and keeps its result.
   */
  replace<T extends TokenSet>(reason: SessionChangeReason, call: () => Promise<T>): Promise<T> {
    return this.lock.run(this.opts.name, async () => {
      const tokens = await call();
      await this.keep(tokens, reason);
      return this.handedOut(tokens);
    });
  }

  /** Forgets the session and drops the stored tokens (sign-out, erasure). */
  async clear(reason: SessionChangeReason): Promise<void> {
    // A session the cookie does not hold has no id in storage (see `refuseCookie`): what storage
    // names then is another tab's session.
    await this.lock.run(this.opts.name, () => (this.cookieRefused ? Promise.resolve() : this.dropStored()));
    this.end(reason);
  }

  /**
   * The refresh token to revoke: the stored one; in cookie mode none (the cookie names the
   * session), but the one held in memory while the browser refuses the cookie.
   */
  async storedRefreshToken(): Promise<string | null> {
    if (this.opts.cookie) return this.cookieRefused ? this.pageToken : null;
    return this.stored();
  }

  private shared(force: boolean): Promise<TokenSet> {
    this.inflight ??= this.lock
      .run(this.opts.name, () => this.refreshInTurn(force))
      .finally(() => {
        this.inflight = null;
      });
    return this.inflight;
  }

  private async refreshInTurn(force: boolean): Promise<TokenSet> {
    if (!this.opts.storage) throw noRefreshToken();
    if (this.cookieRefused) {
      // The session lives in this page alone (see `cookieRefused`): the service alone says whether
      // it goes on.
      if (!force && this.held && clockNow(this.held) < this.held.refreshAt) return this.tokenSet(this.held, '');
      return this.rotate(this.known ?? '', 'refreshed');
    }
    await this.saveUnsaved();
    const stored = await this.stored();
    if (stored === null) {
      // This client had a token and it is gone: another tab signed out, erased the account, or
      // saw the session end. Or, where the browser refuses the cookie, another tab could not
      // resume the session without it and dropped its id: a client that still holds its token in
      // memory asks the service, which refuses the token of a session that ended.
      if (this.known !== null && this.pageToken !== null) return this.rotate(this.known, 'refreshed');
      if (this.known !== null) {
        this.end('ended');
        throw noRefreshToken();
      }
      if (!this.opts.cookie) throw noRefreshToken();
      const legacy = await this.legacyToken();
      return legacy !== null ? this.migrate(legacy) : this.resumeFromCookie();
    }
    if (stored !== this.known) {
      // Another tab rotated or replaced it while this one waited: take over its fresh token set.
      // A client that never held a token (a page just loaded) proves the session with a refresh.
      // In cookie mode another tab replaced the session (its set is not shared: an access token
      // is a credential too), and the cookie now holds the new session's token: refresh with it.
      if (this.opts.cookie) return this.rotate(stored, this.known !== null ? 'adopted' : 'refreshed');
      const adopted = this.known !== null ? await this.adopt(stored) : null;
      if (adopted) return adopted;
    } else if (!force && this.held && clockNow(this.held) < this.held.refreshAt) {
      return this.tokenSet(this.held, stored);
    }
    return this.rotate(stored, 'refreshed');
  }

  /**
   * Presents `token` (in cookie mode: the cookie of session `token`, which the browser sends).
   * In cookie mode tabs never present a stale token: the cookie is shared and always the latest,
   * so the turn alone keeps two tabs from presenting one token at once (contract 13).
   */
  private async rotate(token: string, reason: SessionChangeReason): Promise<TokenSet> {
    let presented = token;
    for (let takeovers = 0; ; takeovers++) {
      this.known = presented;
      const byCookie = this.opts.cookie === true && !this.cookieRefused;
      try {
        const inBody = !this.opts.cookie ? presented : byCookie ? undefined : (this.pageToken ?? undefined);
        const tokens = await this.opts.grant(inBody);
        await this.keep(tokens, reason, byCookie);
        return this.handedOut(tokens);
      } catch (err) {
        // Network failures, 503, 429 (after the grant's retries) and any other answer keep the
        // token: only the service's definite refusal ends a session. In cookie mode, a refresh
        // without the cookie (expired, or refused by the browser) is refused as invalid_request.
        if (!(err instanceof GuestApiError) || !this.ends(err)) throw err;
        if (byCookie && err.code === 'invalid_request' && this.pageToken !== null) {
          // No cookie came with the refresh, yet this page received the session's token: the
          // browser refused the cookie. The token goes in the body at once, and from now on.
          await this.refuseCookie();
          continue;
        }
        if (this.cookieRefused) {
          // The service refused the token this page held: the session ended. Storage names
          // other tabs' session, if any, and stays.
          this.end('ended');
          throw err;
        }
        const now = await this.stored();
        if (now !== null && now !== presented && takeovers < 2) {
          // A client that does not share this lock (an older SDK, a lock-less browser) rotated
          // first and stored its successor: that token, not this dead one, is the session's.
          const adopted = this.opts.cookie ? null : await this.adopt(now);
          if (adopted) return adopted;
          presented = now;
          continue;
        }
        if (now === presented) await this.dropStored();
        this.end('ended');
        throw err;
      }
    }
  }

  /**
   * The browser refused the refresh cookie: this client refreshes with its in-memory token from
   * now on. Storage's id of this client's session goes (another tab's stays): no other tab and no
   * reload can resume a session without its cookie.
   */
  private async refuseCookie(): Promise<void> {
    this.cookieRefused = true;
    const own = this.held?.sessionId;
    if (own !== undefined && (await this.stored().catch(() => null)) === own) await this.dropStored();
  }

  /** A refresh token an earlier release kept in the page's storage (before cookie mode). */
  private async legacyToken(): Promise<string | null> {
    return (await this.opts.storage?.get(`${this.opts.name}:refresh_token`)) ?? null;
  }

  /**
   * Cookie mode on a page that kept its refresh token in storage until now: presented once in the
   * body, it rotates into the cookie, and `keep` deletes it from storage, so the switch costs no
   * guest its session (contract 13). A refused one is deleted too.
   */
  private async migrate(legacy: string): Promise<TokenSet> {
    try {
      const tokens = await this.opts.grant(legacy);
      await this.keep(tokens, 'refreshed');
      return this.handedOut(tokens);
    } catch (err) {
      if (err instanceof GuestApiError && this.ends(err)) await this.dropStored();
      throw err;
    }
  }

  /**
   * Cookie mode on a page whose storage names no session, in a client that never held one: the
   * origin's storage may have been cleared (Safari deletes a site's script-written storage after
   * seven days without a visit; players and quotas clear it too) while the HttpOnly cookie, which
   * the service set, lives on for the session's idle lifetime. Only the service can tell, so the
   * cookie is presented; without one (`invalid_request`) there is no session to resume.
   */
  private async resumeFromCookie(): Promise<TokenSet> {
    try {
      const tokens = await this.opts.grant(undefined);
      await this.keep(tokens, 'refreshed', true);
      return this.handedOut(tokens);
    } catch (err) {
      if (err instanceof GuestApiError && err.code === 'invalid_request') throw noRefreshToken();
      throw err;
    }
  }

  /** Takes over the token set another tab stored with `refreshToken`, if it is still fresh. */
  private async adopt(refreshToken: string): Promise<TokenSet | null> {
    const s = decodeStoredSession((await this.opts.storage?.get(this.sessionKey())) ?? null);
    if (!s || s.refresh_token !== refreshToken || Date.now() >= s.refresh_at) return null;
    this.known = refreshToken;
    // Storage holds the session taken over: a token an earlier refusal left unsaved is of no use.
    this.unsaved = null;
    this.hold(heldSession(s, s.expires_at, s.refresh_at), 'adopted');
    this.events.stored({ saved: true, item: 'refresh_token' });
    return this.tokenSet(this.held as HeldSession, refreshToken);
  }

  private ends(err: GuestApiError): boolean {
    return err.code === 'invalid_grant' || (this.opts.cookie === true && err.code === 'invalid_request');
  }

  /** What the game is given: in cookie mode never the refresh token, so it cannot keep it. */
  private handedOut<T extends TokenSet>(tokens: T): T {
    if (!this.opts.cookie || tokens.refresh_token === undefined) return tokens;
    const { refresh_token: _kept, ...rest } = tokens;
    return rest as T;
  }

  /** `byCookie`: the answer to a refresh by cookie alone, which shows the browser keeps the cookie. */
  private async keep(tokens: TokenSet, reason: SessionChangeReason, byCookie = false): Promise<void> {
    const now = Date.now();
    const held = heldSession(
      tokens,
      now + tokens.expires_in * 1000,
      now + (tokens.expires_in - refreshLead(tokens.expires_in)) * 1000,
    );
    const storage = this.opts.storage;
    let written: PersistenceChange | null = null;
    if (this.opts.cookie) this.pageToken = byCookie ? null : (tokens.refresh_token ?? null);
    if (this.cookieRefused) {
      // The session lives in this page alone, and the game hears it (once): a guest is lost with
      // the page unless the player attaches a credential first.
      this.known = tokens.session_id;
      written = { saved: false, item: 'refresh_cookie' };
    } else if (storage && tokens.refresh_token && this.opts.cookie) {
      // The service set the cookie with this set; the tabs learn only which session it is. What an
      // earlier release kept in page storage (a refresh token, its set) goes.
      written = await this.write(storage, tokens.session_id, 'session_id');
      this.unshared = !written.saved;
      await storage.delete(`${this.opts.name}:refresh_token`);
      await storage.delete(this.sessionKey());
      this.known = tokens.session_id;
    } else if (storage && tokens.refresh_token) {
      // The refresh token first: the service rotated already, so once the reuse interval is over
      // only this token keeps the session. An app killed between the two writes then restarts with
      // it (the set beside it names the older token, so no tab takes that set over); with the set
      // first, it would restart with the older token, a replay that revokes the session. Tabs take
      // turns, so no tab reads storage between the two writes.
      // If storage refuses, the token is kept in memory (see `unsaved`) and the session goes on.
      // Storage holds the token this client knew, or the one an earlier refusal left there.
      const over = this.unsaved ? this.unsaved.over : this.known;
      written = await this.write(storage, tokens.refresh_token, 'refresh_token');
      this.known = tokens.refresh_token;
      this.unsaved = written.saved ? null : { token: tokens.refresh_token, over };
      // Without its token stored, the set beside it would name a token no tab can read. The set
      // only spares another tab a rotation: one storage refuses (a quota the token fits in and the
      // larger set overruns) costs no session, and the older set left names an older token, which
      // no tab takes over.
      if (written.saved)
        await storage
          .set(this.sessionKey(), encodeStoredSession(this.toStored(held, tokens.refresh_token)))
          .catch(() => undefined);
    } else if (reason !== 'refreshed') {
      // A new session without a refresh token (a client without offline_access): the stored one
      // belongs to the session it replaced.
      await this.dropStored();
    }
    this.hold(held, reason);
    // After the session events, so that a listener reads the player this session belongs to.
    if (written) this.events.stored(written);
  }

  /**
   * Writes what keeps the session beyond this client (the refresh token, or in cookie mode the
   * session id); a refusal is an answer for the `persistence` event, not a failure of the call.
   */
  private async write(
    storage: SecureStorage,
    value: string,
    item: PersistenceChange['item'],
  ): Promise<PersistenceChange> {
    try {
      await storage.set(this.refreshKey(), value);
      return { saved: true, item };
    } catch (error) {
      return { saved: false, item, error };
    }
  }

  private hold(next: HeldSession | null, reason: SessionChangeReason): void {
    const previous = this.state();
    this.held = next;
    if (next === null) {
      this.known = null;
      this.unsaved = null;
      this.pageToken = null;
      this.cookieRefused = false;
    }
    this.schedule();
    this.events.emit(reason, previous, this.state());
  }

  private end(reason: SessionChangeReason): void {
    this.hold(null, reason);
  }

  private state(): SessionState {
    const h = this.held;
    return { userId: h?.userId ?? null, sessionId: h?.sessionId ?? null, guest: h?.guest ?? null };
  }

  private schedule(delay?: number): void {
    clearTimeout(this.timer);
    const held = this.held;
    if (!this.autoRefresh || !held || !this.opts.storage || this.known === null) return;
    this.timer = setTimeout(
      () => {
        // The timer decides that it is time, not the wall clock: a timer firing a moment before
        // `refreshAt` by Date.now() (Node's timers may, and so does a clock stepped back) would find
        // the token fresh, refresh nothing, and never be scheduled again.
        this.shared(true).catch((err: unknown) => {
          // Still holding a session: the failure was transient (offline, 503); try again later.
          const asked = err instanceof GuestApiError && err.retryAfter !== undefined ? err.retryAfter * 1000 : 0;
          if (this.held) this.schedule(Math.max(RETRY_LATER_MS, asked));
        });
      },
      delay ?? Math.max(0, held.refreshAt - clockNow(held)),
    );
    // In Node, a pending refresh must not keep a finished program alive.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private async stored(): Promise<string | null> {
    const stored = (await this.opts.storage?.get(this.refreshKey())) ?? null;
    // Storage still holds what it held when it refused the rotated token: that one is the session's.
    if (this.unsaved && stored === this.unsaved.over) return this.unsaved.token;
    return stored ?? (this.unshared ? this.known : null);
  }

  /** Writes the rotated token storage refused before, while storage still holds the older one. */
  private async saveUnsaved(): Promise<void> {
    const unsaved = this.unsaved;
    if (!unsaved || !this.opts.storage) return;
    const stored = await this.opts.storage.get(this.refreshKey()).catch(() => unsaved.over);
    if (stored !== unsaved.over) return;
    const written = await this.write(this.opts.storage, unsaved.token, 'refresh_token');
    if (written.saved && this.unsaved === unsaved) this.unsaved = null;
    this.events.stored(written);
  }

  /**
   * Deletes the stored session, which the service ended or replaced. A delete storage refuses (a
   * failing keystore) leaves a token that a later refresh presents only to be refused with
   * invalid_grant, so it must not keep the session from ending here, nor stand in for the
   * service's answer that the game acts on.
   */
  private async dropStored(): Promise<void> {
    const keys = [
      this.refreshKey(),
      this.sessionKey(),
      ...(this.opts.cookie ? [`${this.opts.name}:refresh_token`] : []),
    ];
    for (const key of keys) await this.opts.storage?.delete(key).catch(() => undefined);
  }

  /** Cookie mode keeps the session id under its own key: no stored secret is ever mistaken for it. */
  private refreshKey(): string {
    return `${this.opts.name}:${this.opts.cookie ? 'cookie_session' : 'refresh_token'}`;
  }

  private sessionKey(): string {
    return `${this.opts.name}:session`;
  }

  private tokenSet(h: HeldSession, refreshToken: string): TokenSet {
    return {
      access_token: h.accessToken,
      token_type: 'Bearer',
      expires_in: Math.max(0, Math.floor((h.expiresAt - clockNow(h)) / 1000)),
      ...(this.opts.cookie ? {} : { refresh_token: refreshToken }),
      ...(h.idToken ? { id_token: h.idToken } : {}),
      scope: h.scope,
      session_id: h.sessionId,
    };
  }

  private toStored(h: HeldSession, refreshToken: string): StoredSession {
    return {
      refresh_token: refreshToken,
      access_token: h.accessToken,
      session_id: h.sessionId,
      scope: h.scope,
      ...(h.idToken ? { id_token: h.idToken } : {}),
      expires_at: h.expiresAt,
      refresh_at: h.refreshAt,
    };
  }
}
