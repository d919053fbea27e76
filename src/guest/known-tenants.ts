import { setTimeout as sleep } from 'node:timers/promises';

/** The shortest interval between two reloads of the id set, however many misses ask for one. */
export const KNOWN_TENANTS_MIN_RELOAD_MS = 250;

/**
 * The ids of the active customer tenants, held in memory so that a request naming an unknown
 * tenant costs no PostgreSQL read of its own (issue 22, point 6: CORS, discovery and the refresh's
 * client look-up read PostgreSQL before any budget).
 *
 * Why a set of every id rather than a per-id negative cache or a per-network budget: a negative
 * cache of the ids that missed does nothing against random ids, each of which is a new miss; a
 * budget needs the client's network where these look-ups happen (the CORS middleware, the
 * refresh), and would throttle a whole network's players for one script's typos. The set answers
 * any number of unknown ids with at most one query per KNOWN_TENANTS_MIN_RELOAD_MS per instance,
 * shared by every miss, whatever networks they come from.
 *
 * An id in the set may since have been deactivated, so `true` means only "ask PostgreSQL" (the
 * callers still read the row). `false` is exact: a miss waits for a load that started after it was
 * asked (at most KNOWN_TENANTS_MIN_RELOAD_MS), so a tenant created a moment ago, by the CLI in
 * another process, is never refused. Tenants are few (one per game studio), so the set is small.
 */
export class KnownTenants {
  private ids: ReadonlySet<string> = new Set();
  private lastStart = Number.NEGATIVE_INFINITY;
  /** The next load, joined by every miss asked before it starts its query. */
  private next: { started: boolean; readonly ids: Promise<ReadonlySet<string>> } | null = null;

  constructor(
    private readonly load: () => Promise<readonly string[]>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** False only when the tenant was not an active customer tenant at a moment after this call. */
  async mayBeActive(tenantId: string): Promise<boolean> {
    if (this.ids.has(tenantId)) return true;
    return (await this.loadNotYetStarted()).has(tenantId);
  }

  private loadNotYetStarted(): Promise<ReadonlySet<string>> {
    if (this.next !== null && !this.next.started) return this.next.ids;
    const now = this.now();
    const startsAt = Math.max(now, this.lastStart + KNOWN_TENANTS_MIN_RELOAD_MS);
    this.lastStart = startsAt;
    const next: { started: boolean; ids: Promise<ReadonlySet<string>> } = {
      started: false,
      ids: Promise.resolve(this.ids),
    };
    next.ids = sleep(startsAt - now)
      .then(() => {
        next.started = true;
        return this.load();
      })
      .then((list) => {
        const set = new Set(list);
        // Loads start one after another; should an older one finish last, a later miss just loads again.
        this.ids = set;
        return set;
      });
    this.next = next;
    return next.ids;
  }
}
