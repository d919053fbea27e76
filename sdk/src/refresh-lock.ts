/**
 * How the clients that share one refresh-token store take turns (contract section 13): a refresh,
 * and any call that writes a new token set, runs alone, so two of them never present the same
 * refresh token. In a browser the store is the origin's Web Storage, shared by its tabs, so the
 * turn is an origin-wide Web Lock; elsewhere it is a queue in this process.
 */
export interface RefreshLock {
  run<T>(name: string, task: () => Promise<T>): Promise<T>;
}

/** One task at a time per name, in this process (one page, one Node process, one native shell). */
export function processLock(): RefreshLock {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run<T>(name: string, task: () => Promise<T>): Promise<T> {
      const before = tails.get(name) ?? Promise.resolve();
      const result = before.then(task, task);
      const tail = result.catch(() => undefined);
      tails.set(name, tail);
      // Forget the name once nothing waits behind this task, so the map stays small.
      void tail.then(() => {
        if (tails.get(name) === tail) tails.delete(name);
      });
      return result;
    },
  };
}

/** The subset of the Web Locks API this client uses (`navigator.locks`; `webLocks(navigator.locks)`). */
export interface LockManagerLike {
  request<T>(name: string, options: { mode: 'exclusive' }, task: () => Promise<T>): Promise<T>;
}

/**
 * Web Storage reaches other tabs asynchronously (Chromium copies each write to the other renderer
 * processes by message), so a tab granted the lock the instant another released it can still read
 * the token the other just replaced. The holder therefore keeps the lock this long after its task
 * is done; its caller has the result at once.
 */
const SETTLE_MS = 100;

/** Runs `task`, answering the caller as soon as it is done while the turn lasts `settleMs` more. */
function answerThenSettle<T>(
  task: () => Promise<T>,
  settleMs: number,
): { turn: () => Promise<void>; result: Promise<T> } {
  let settle!: (outcome: Promise<T>) => void;
  const result = new Promise<T>((resolve) => (settle = resolve));
  const turn = async () => {
    const outcome = task();
    settle(outcome);
    await outcome.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, settleMs));
  };
  return { turn, result };
}

/** Tabs, workers and frames of one origin take turns through the browser's Web Locks. */
export function webLocks(locks: LockManagerLike, settleMs = SETTLE_MS): RefreshLock {
  return {
    run<T>(name: string, task: () => Promise<T>): Promise<T> {
      const { turn, result } = answerThenSettle(task, settleMs);
      // A refused lock request (a document being torn down) fails the caller too.
      return Promise.race([result, locks.request(name, { mode: 'exclusive' }, turn).then(() => result)]);
    },
  };
}

/** The Web Storage methods the lease uses. */
export interface LeaseStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

/**
 * The fallback for browsers without Web Locks (Safari before 15.4, some embedded web views): a
 * lease in `localStorage` with an expiry. A tab writes its claim, waits a moment for a racing
 * tab's write to land, and proceeds only if its claim is the one that stayed; a tab that closes
 * while holding the lease blocks the others for at most `leaseMs`. Web Storage has no
 * compare-and-set, so two tabs can still, rarely, both proceed: then the service's reuse interval
 * answers both with the same token, and the client's re-read of storage after `invalid_grant`
 * covers the rest. A page that goes away (reload, close) gives its claims up on `pagehide`.
 */
export function storageLease(storage: LeaseStorage, opts: { leaseMs?: number; settleMs?: number } = {}): RefreshLock {
  const leaseMs = opts.leaseMs ?? 40_000;
  const settleMs = opts.settleMs ?? 50;
  const local = processLock();
  const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  const holder = (key: string): { owner: string; until: number } | null => {
    try {
      const value = JSON.parse(storage.getItem(key) ?? 'null') as unknown;
      if (typeof value !== 'object' || value === null) return null;
      const { owner, until } = value as Record<string, unknown>;
      return typeof owner === 'string' && typeof until === 'number' ? { owner, until } : null;
    } catch {
      return null;
    }
  };
  // This page's claims, given up when the page goes away, so a reload does not wait out the lease.
  const claims = new Map<string, string>();
  const giveUp = (key: string, me: string) => {
    if (holder(key)?.owner === me) storage.removeItem(key);
    if (claims.get(key) === me) claims.delete(key);
  };
  (globalThis as { addEventListener?: (type: string, listener: () => void) => void }).addEventListener?.(
    'pagehide',
    () => {
      for (const [key, me] of [...claims]) giveUp(key, me);
    },
  );
  async function acquire(key: string, me: string): Promise<void> {
    claims.set(key, me);
    for (;;) {
      const held = holder(key);
      if (held === null || held.until < Date.now()) {
        try {
          storage.setItem(key, JSON.stringify({ owner: me, until: Date.now() + leaseMs }));
        } catch {
          // Storage full or refused: no claim can be written, and waiting would never end. The
          // in-page queue still holds, and the service's reuse interval covers the other tabs.
          return;
        }
        await wait(settleMs);
        if (holder(key)?.owner === me) return;
      }
      await wait(settleMs + Math.random() * settleMs * 4);
    }
  }
  return {
    // The process queue first: the tab's own callers never compete with each other for the lease.
    run: (name, task) =>
      local.run(name, async () => {
        const key = `${name}:lease`;
        const me = Math.random().toString(36).slice(2) + Date.now().toString(36);
        await acquire(key, me);
        try {
          return await task();
        } finally {
          // As with Web Locks, the release waits until the task's writes have reached other tabs.
          void wait(settleMs * 2).then(() => giveUp(key, me));
        }
      }),
  };
}

/** Web Locks where the browser has them, else the lease in the same Web Storage. */
export function originLock(storage: LeaseStorage): RefreshLock {
  const locks = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;
  return locks ? webLocks(locks) : storageLease(storage);
}
