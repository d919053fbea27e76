import { originLock, processLock, type RefreshLock } from './refresh-lock.js';

/**
 * Where refresh tokens are kept (spec 4.3 rule 4): the platform keystore in a native game
 * (Keychain, Android Keystore, a console's secure save area). The client never keeps a refresh
 * token anywhere else.
 */
export interface SecureStorage {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * How the clients sharing this store take turns to refresh (contract 13). Without one, each
   * client queues its own calls only: right for a store that one client uses.
   */
  readonly lock?: RefreshLock;
}

/** For tests and short-lived tools only: a process-memory store. */
export class MemorySecureStorage implements SecureStorage {
  private readonly values = new Map<string, string>();
  /** Clients given the same store share its tokens, so they share its queue too. */
  readonly lock: RefreshLock = processLock();

  get(key: string): Promise<string | null> {
    return Promise.resolve(this.values.get(key) ?? null);
  }

  set(key: string, value: string): Promise<void> {
    this.values.set(key, value);
    return Promise.resolve();
  }

  delete(key: string): Promise<void> {
    this.values.delete(key);
    return Promise.resolve();
  }
}

/**
 * Storage the browser refused altogether (its settings block the site's storage): nothing is kept,
 * and every write is refused with the browser's error, so that the session's keeper keeps what it
 * needs in memory and the game hears `persistence` say that the session is not saved.
 */
export function refusedStorage(error: Error): SecureStorage {
  return {
    get: () => Promise.resolve(null),
    set: () => Promise.reject(error),
    delete: () => Promise.resolve(),
    lock: processLock(),
  };
}

/**
 * A browser has no keystore. This adapter keeps the refresh token in Web Storage
 * (`localStorage` to survive a reload and a restart, `sessionStorage` for one tab), where any
 * script of the page's origin can read it: use it only on a page whose Content-Security-Policy
 * admits no third-party script, or keep no refresh token at all (omit `storage`).
 *
 * `localStorage` is shared by the origin's tabs, so they take turns to refresh through Web Locks
 * (or, where a browser lacks them, a lease kept in the same storage): two tabs never present the
 * same refresh token.
 */
export function webStorage(storage: {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}): SecureStorage {
  // A refused write (a full quota throws QuotaExceededError) is a rejected promise, not a throw.
  const settle = <T>(step: () => T): Promise<T> => new Promise<T>((resolve) => resolve(step()));
  return {
    get: (key) => settle(() => storage.getItem(key)),
    set: (key, value) => settle(() => storage.setItem(key, value)),
    delete: (key) => settle(() => storage.removeItem(key)),
    lock: originLock(storage),
  };
}
