import { LRUCache } from 'lru-cache';
import type { AppConfig } from '../config/config';

/**
 * Client rows as read a moment ago, so a hot path (guest creation, the console client's Basic
 * check) does not pay a PostgreSQL round trip per request. A row is trusted for
 * CLIENT_CACHE_TTL_MS after it was read, then read again: a disabled client, a rotated secret or a
 * re-seed takes effect within that time. Callers put only rows that resolved, so random ids
 * cannot flush the cache; what must be exact at once (a client created or edited in the console)
 * is never answered from here but from a read made after the question (ReloadedOnMiss), or
 * re-checked by the write that uses the row.
 */
export class ClientRowCache<V> {
  private readonly rows: LRUCache<string, { readonly value: V; readonly readAt: number }>;
  /** How long a read stays trusted: CLIENT_CACHE_TTL_MS. */
  readonly lifetimeMs: number;

  constructor(
    config: Pick<AppConfig, 'clientCacheTtlMs'>,
    max: number,
    /** The cache's clock (milliseconds), by which a caller stamps a read it starts. */
    readonly now: () => number = () => performance.now(),
  ) {
    this.lifetimeMs = config.clientCacheTtlMs;
    this.rows = new LRUCache({ max });
  }

  /** The row read within the lifetime, or undefined. */
  get(key: string): V | undefined {
    const entry = this.rows.get(key);
    if (entry === undefined) return undefined;
    if (this.isFresh(entry.readAt)) return entry.value;
    this.rows.delete(key);
    return undefined;
  }

  /** Remembers a row read now (or at `readAt`, when the read started earlier). */
  set(key: string, value: V, readAt: number = this.now()): void {
    this.rows.set(key, { value, readAt });
  }

  delete(key: string): void {
    this.rows.delete(key);
  }

  private isFresh(readAt: number): boolean {
    return this.now() - readAt < this.lifetimeMs;
  }
}
