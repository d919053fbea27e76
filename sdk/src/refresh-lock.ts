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
  request<T>(name: string, options: { mode: 'exclusive'; signal?: AbortSignal }, task: () => Promise<T>): Promise<T>;
}

/**
 * How long a refresh waits for its turn before it goes ahead without one. A tab that holds the
 * turn can stop without giving it back (iOS Safari suspends background tabs, a browser freezes
 * them), and waiting on it would stall every other tab's refresh for as long. Going ahead is safe
 * while the wait is well below the service's reuse interval (30 s, contract 13): the task re-reads
 * storage first, so it presents the latest stored token, and if the stalled holder presents the
 * same one, the service answers both with the same successor. 10 s also outlasts a healthy
 * holder's refresh with its retries in all but the worst networks.
 */
export const TURN_WAIT_MS = 10_000;

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
export function webLocks(locks: LockManagerLike, settleMs = SETTLE_MS, waitMs = TURN_WAIT_MS): RefreshLock {
  return {
    run<T>(name: string, task: () => Promise<T>): Promise<T> {
      const { turn, result } = answerThenSettle(task, settleMs);
      // The task runs once: under the lock if it is granted within `waitMs`, else without it.
      let started = false;
      const once = () => {
        if (started) return Promise.resolve();
        started = true;
        clearTimeout(timer);
        return turn();
      };
      const abort = typeof AbortController === 'function' ? new AbortController() : undefined;
      const timer = setTimeout(() => {
        // The signal takes the request out of the browser's queue; the task goes ahead unlocked.
        abort?.abort();
        void once();
      }, waitMs);
      const options = abort ? { mode: 'exclusive' as const, signal: abort.signal } : { mode: 'exclusive' as const };
      const granted = locks.request(name, options, once).then(
        () => result,
        (err: unknown) => {
          // Given up on after the wait: the task's own outcome answers the caller.
          if (abort?.signal.aborted) return result;
          // A refused lock request (a document being torn down) fails the caller too.
          clearTimeout(timer);
          throw err;
        },
      );
      return Promise.race([result, granted]);
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
 * or is suspended while holding the lease blocks the others for at most `waitMs` (TURN_WAIT_MS),
 * after which they go ahead without it. Web Storage has no compare-and-set, so two tabs can still, rarely, both proceed: then the service's reuse interval
 * answers both with the same token, and the client's re-read of storage after `invalid_grant`
 * covers the rest. A page that goes away (reload, close) gives its claims up on `pagehide`.
 */
export function storageLease(
  storage: LeaseStorage,
  opts: { leaseMs?: number; settleMs?: number; waitMs?: number } = {},
): RefreshLock {
  const leaseMs = opts.leaseMs ?? 40_000;
  const settleMs = opts.settleMs ?? 50;
  const waitMs = opts.waitMs ?? TURN_WAIT_MS;
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
    // A suspended tab keeps its lease until it expires (longer than the reuse interval): after
    // `waitMs` the task goes ahead without the lease, as with Web Locks (see TURN_WAIT_MS).
    const giveUpAt = Date.now() + waitMs;
    for (;;) {
      if (Date.now() >= giveUpAt) return;
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
      await wait(Math.min(settleMs + Math.random() * settleMs * 4, Math.max(0, giveUpAt - Date.now())));
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
