// The package's entry point: everything a game imports.
export { GuestApiError, GuestClient } from './guest-client.js';
export type {
  GuestClientOptions,
  GuestCreated,
  Linked,
  LinkedIdentity,
  Player,
  Proof,
  TokenSet,
  Upgraded,
} from './guest-client.js';
export type {
  SessionChange,
  SessionChangeReason,
  SessionEventName,
  SessionListener,
  SessionState,
  PersistenceChange,
  PersistenceListener,
} from './session-events.js';
export { processLock, storageLease, webLocks } from './refresh-lock.js';
export type { LeaseStorage, LockManagerLike, RefreshLock } from './refresh-lock.js';
export type { RetryPolicy } from './retry.js';
export { MemoryCookieJar } from './cookie-jar.js';
export type { CookieJar } from './cookie-jar.js';
export { MemorySecureStorage, webStorage } from './secure-storage.js';
export type { SecureStorage } from './secure-storage.js';
