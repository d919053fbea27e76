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

export class SessionEvents {
  private readonly listeners: Record<SessionEventName, Set<SessionListener>> = { session: new Set(), user: new Set() };

  on(event: SessionEventName, listener: SessionListener): () => void {
    this.listeners[event].add(listener);
    return () => this.listeners[event].delete(listener);
  }

  /** Tells the listeners of each kind of change that happened between two states. */
  emit(reason: SessionChangeReason, previous: SessionState, current: SessionState): void {
    const change: SessionChange = { reason, previous, ...current };
    if (previous.sessionId !== current.sessionId) this.notify('session', change);
    if (previous.userId !== current.userId || previous.guest !== current.guest) this.notify('user', change);
  }

  private notify(event: SessionEventName, change: SessionChange): void {
    for (const listener of [...this.listeners[event]]) {
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
