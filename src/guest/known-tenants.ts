import { setTimeout as sleep } from 'node:timers/promises';

/** The shortest interval between two reloads of a value reloaded on a miss, however many misses ask for one. */
export const RELOAD_ON_MISS_MIN_MS = 250;

/**
 * A small value read from PostgreSQL (a set of ids) and held in memory, so that a request naming an
 * unknown id costs no PostgreSQL read of its own (issue 22, point 6: CORS, discovery and the
 * refresh's client look-up read PostgreSQL before any budget).
 *
 * Why a set of every id rather than a per-id negative cache or a per-network budget: a negative
 * cache of the ids that missed does nothing against random ids, each of which is a new miss; a
 * budget needs the client's network where these look-ups happen (the CORS middleware, the
 * refresh), and would throttle a whole network's players for one script's typos. The set answers
 * any number of unknown ids with at most one load per RELOAD_ON_MISS_MIN_MS per instance, shared
 * by every miss, whatever networks they come from.
 *
 * A hit may be stale (the row may since have changed), so callers still read the row on a hit. A
 * miss is exact: it waits for a load that started after it was asked (at most
 * RELOAD_ON_MISS_MIN_MS), so a row created a moment ago, by the CLI in another process, is never
 * refused.
 */
export class ReloadedOnMiss<T> {
  private value: T;
  private lastStart = Number.NEGATIVE_INFINITY;
  /** The next load, joined by every miss asked before it starts its query. */
  private next: { started: boolean; readonly value: Promise<T> } | null = null;

  constructor(
    private readonly load: () => Promise<T>,
    initial: T,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.value = initial;
  }

  /** The value held when `hit` says it answers the question; else the value of a load started after this call. */
  async find(hit: (value: T) => boolean): Promise<T> {
    if (hit(this.value)) return this.value;
    return this.loadNotYetStarted();
  }

  private loadNotYetStarted(): Promise<T> {
    if (this.next !== null && !this.next.started) return this.next.value;
    const now = this.now();
    const startsAt = Math.max(now, this.lastStart + RELOAD_ON_MISS_MIN_MS);
    this.lastStart = startsAt;
    const next: { started: boolean; value: Promise<T> } = { started: false, value: Promise.resolve(this.value) };
    next.value = sleep(startsAt - now)
      .then(() => {
        next.started = true;
        return this.load();
      })
      .then((value) => {
        // Loads start one after another; should an older one finish last, a later miss just loads again.
        this.value = value;
        return value;
      });
    this.next = next;
    return next.value;
  }
}

/**
 * The ids of the active customer tenants (a ReloadedOnMiss set). An id in the set may since have
 * been deactivated, so `true` means only "ask PostgreSQL"; `false` is exact. Tenants are few (one
 * per game studio), so the set is small.
 */
export class KnownTenants {
  private readonly ids: ReloadedOnMiss<ReadonlySet<string>>;

  constructor(load: () => Promise<readonly string[]>, now?: () => number) {
    this.ids = new ReloadedOnMiss(async () => new Set(await load()), new Set<string>(), now);
  }

  /** False only when the tenant was not an active customer tenant at a moment after this call. */
  async mayBeActive(tenantId: string): Promise<boolean> {
    return (await this.ids.find((ids) => ids.has(tenantId))).has(tenantId);
  }
}
