import { DataSource, MigrationExecutor, type DataSourceOptions } from 'typeorm';

/**
 * Any fixed number, the same in every release: the key of the advisory lock `migrate` holds.
 * A release step often runs once per instance (init containers, a pipeline per node); without a
 * lock two runs both find every migration pending and race on the same DDL.
 */
const MIGRATE_LOCK_KEY = 7_364_100_025;

/**
 * How long a migration waits for a table lock before it gives up. DDL waiting on a busy table
 * queues every later request on that table behind it; failing after a while leaves the service
 * serving, and the release step can run again.
 */
export const MIGRATION_LOCK_TIMEOUT_MS = 10_000;

/**
 * The service's connection options for migrations: no statement or query timeout, which bound
 * requests (2 × DEPENDENCY_TIMEOUT_MS) and would cancel an index built over a year of audit rows,
 * but a lock timeout. The statement timeout is set to none for the session, over any a role or
 * database default sets (pg sends no `statement_timeout` of 0 itself).
 */
export function migrationOptions(options: DataSourceOptions): DataSourceOptions {
  const { query_timeout: _q, statement_timeout: _s, ...extra } = (options.extra ?? {}) as Record<string, unknown>;
  return {
    ...options,
    extra: { ...extra, max: 2, options: '-c statement_timeout=0', lock_timeout: MIGRATION_LOCK_TIMEOUT_MS },
  };
}

/**
 * Applies the pending migrations, each in its transaction, one `migrate` at a time: a second run
 * waits for the first, then finds nothing pending. A failure names the migration it stopped at.
 */
export async function runMigrationsOnce(ds: DataSource): Promise<string[]> {
  const lock = ds.createQueryRunner();
  await lock.connect();
  try {
    // The wait for the other run is not a table lock: it waits as long as that run takes.
    await lock.query('SET lock_timeout = 0');
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATE_LOCK_KEY]);
    try {
      return (await ds.runMigrations({ transaction: 'each' })).map((m) => m.name);
    } catch (err) {
      const [failed] = await new MigrationExecutor(ds).getPendingMigrations();
      const reason = err instanceof Error ? err.message : String(err);
      throw new Error(`migration ${failed?.name ?? '(unknown)'} failed: ${reason}`, { cause: err });
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATE_LOCK_KEY]);
    }
  } finally {
    await lock.release();
  }
}
