/**
 * What the game hears when the player's session or account changes (contract section 13), so it
 * can reload the player's data, or start a fresh guest after the session ended.
 */
export type SessionChangeReason =
  /** `createGuest()` made a new guest. */
  | 'created'
  /** `signIn()` switched to the account that owns a proven credential. */
  | 'signed_in'
  /** `upgrade()` attached a credential: same user, new session, `guest` now false. */
  | 'upgraded'
  /** A refresh answered with another session or user than this client held. */
  | 'refreshed'
  /** Another tab refreshed, signed in or started a guest, and this client took over its tokens. */
  | 'adopted'
  /** The service refused the refresh token (`invalid_grant`: revoked, replayed or expired), or another tab ended the session. */
  | 'ended'
  /** `revoke()` signed the player out. */
  | 'revoked'
  /** `deleteAccount()` erased the account. */
  | 'deleted';

/** Who the client is signed in as: all null when it holds no session. */
export interface SessionState {
  readonly userId: string | null;
  readonly sessionId: string | null;
  readonly guest: boolean | null;
}

export interface SessionChange extends SessionState {
  readonly reason: SessionChangeReason;
  readonly previous: SessionState;
}

/**
 * `session`: the session id changed (a new session, or none). `user`: the user id or its `guest`
 * flag changed, which is when a game reloads the player's data.
 */
export type SessionEventName = 'session' | 'user';

export type SessionListener = (change: SessionChange) => void;

/**
 * What the game hears on `persistence`: whether the session this client holds outlives it. A
 * session storage refused to keep (a full quota, storage blocked in private browsing, a failing
 * keystore write) goes on, but ends with the page or app; a guest is then lost unless the player
 * attaches a credential first.
 */
export interface PersistenceChange {
  /** false: storage (or the browser's cookie store) refused to keep the session; true: it keeps it again. */
  readonly saved: boolean;
  /**
   * What storage refused or keeps again. `refresh_token` (storage mode): without it the session
   * lives only as long as this client. `session_id` (cookie mode): the origin's other tabs and a
   * reload learn the session only from the refresh cookie, which a browser that refuses storage
   * usually refuses too. `refresh_cookie` (cookie mode): the browser refused the service's refresh
   * cookie (third-party cookies blocked, Safari's default for a game page on another site than the
   * auth host); the client keeps the session's refresh token in memory, so the session goes on
   * while the page lives, but no other tab and no reload can resume it.
   */
  readonly item: 'refresh_token' | 'session_id' | 'refresh_cookie';
  /** When `saved` is false: what storage refused with (QuotaExceededError, SecurityError, ...). */
  readonly error?: unknown;
}

export type PersistenceListener = (change: PersistenceChange) => void;

function subscribe<T>(listeners: Set<T>, listener: T): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export class SessionEvents {
  private readonly listeners: Record<SessionEventName, Set<SessionListener>> = { session: new Set(), user: new Set() };
  private readonly persistenceListeners = new Set<PersistenceListener>();
  /** What `persistence` last said: a client starts with nothing refused. */
  private saved = true;

  on(event: SessionEventName, listener: SessionListener): () => void;
  on(event: 'persistence', listener: PersistenceListener): () => void;
  on(event: SessionEventName | 'persistence', listener: SessionListener | PersistenceListener): () => void {
    // The overloads pair each event with its listener's type.
    if (event === 'persistence') return subscribe(this.persistenceListeners, listener as PersistenceListener);
    return subscribe(this.listeners[event], listener as SessionListener);
  }

  /** Tells the listeners of each kind of change that happened between two states. */
  emit(reason: SessionChangeReason, previous: SessionState, current: SessionState): void {
    const change: SessionChange = { reason, previous, ...current };
    if (previous.sessionId !== current.sessionId) this.notify(this.listeners.session, change);
    if (previous.userId !== current.userId || previous.guest !== current.guest)
      this.notify(this.listeners.user, change);
  }

  /**
   * Tells the `persistence` listeners what a write of the session came to, when it differs from
   * what they heard last: a refusal once, not at every refresh storage refuses, and its end once.
   */
  stored(change: PersistenceChange): void {
    if (change.saved === this.saved) return;
    this.saved = change.saved;
    this.notify(this.persistenceListeners, change);
  }

  private notify<T>(listeners: Set<(change: T) => void>, change: T): void {
    for (const listener of [...listeners]) {
      try {
        listener(change);
      } catch (err) {
        // A game's listener that throws must not break the refresh that called it; the error
        // still reaches the runtime's unhandled-error report.
        queueMicrotask(() => {
          throw err;
        });
      }
    }
  }
}
