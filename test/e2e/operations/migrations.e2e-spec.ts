import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../../src/platform/database/data-source-options';
import { admin } from '../../support/admin-cli';
import { dropSuiteDatabase, freshDatabase } from '../../support/database';

/**
 * Everything the migrations made, as catalogue rows: tables and columns, constraints, indexes,
 * enumerated types and functions of the public schema, without TypeORM's own bookkeeping.
 */
async function schema(ds: DataSource): Promise<Record<string, unknown[]>> {
  const rows = (sql: string) => ds.query<unknown[]>(sql);
  return {
    columns: await rows(
      `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
        WHERE table_schema = 'public' AND table_name <> 'migrations' ORDER BY table_name, column_name`,
    ),
    constraints: await rows(
      `SELECT c.conrelid::regclass::text AS table_name, c.conname, pg_get_constraintdef(c.oid) AS definition
         FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname = 'public' AND c.conrelid::regclass::text <> 'migrations' ORDER BY 1, 2`,
    ),
    indexes: await rows(
      `SELECT tablename, indexname, indexdef FROM pg_indexes
        WHERE schemaname = 'public' AND tablename <> 'migrations' ORDER BY 1, 2`,
    ),
    types: await rows(
      `SELECT t.typname, array_agg(e.enumlabel::text ORDER BY e.enumsortorder) AS labels
         FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE n.nspname = 'public' GROUP BY 1 ORDER BY 1`,
    ),
    functions: await rows(
      `SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args FROM pg_proc p
         JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY 1, 2`,
    ),
  };
}

/**
 * An operator rolls a release back with its migrations' `down` (docs/operations.md): each must
 * undo exactly what its `up` did. Checked step by step, since a later `down` that drops a table
 * would hide an index or a constraint an earlier one forgot.
 */
describe('migrations undo what they do', () => {
  const name = `svc_e2e_migrations_${randomBytes(6).toString('hex')}`;
  let url: string;
  const opened: DataSource[] = [];
  /** A data source knowing the first `n` migrations: running it applies exactly those not yet applied. */
  const upTo = async (n: number): Promise<DataSource> => {
    const ds = new DataSource({ type: 'postgres', url, migrations: MIGRATIONS.slice(0, n) });
    opened.push(await ds.initialize());
    return ds;
  };

  beforeAll(async () => {
    url = await freshDatabase(name);
  });
  afterAll(async () => {
    for (const ds of opened) await ds.destroy();
    await dropSuiteDatabase(name);
  });

  it('each down restores the schema its up found; after all of them, up again gives the same schema', async () => {
    const before: Array<Record<string, unknown[]>> = [];
    for (let n = 1; n <= MIGRATIONS.length; n++) {
      const ds = await upTo(n);
      before.push(await schema(ds));
      await ds.runMigrations({ transaction: 'each' });
    }
    const all = await upTo(MIGRATIONS.length);
    const migrated = await schema(all);

    for (let n = MIGRATIONS.length; n >= 1; n--) {
      await all.undoLastMigration({ transaction: 'each' });
      // Named, so a failure says which migration's down left something behind.
      expect({ migration: MIGRATIONS[n - 1]?.name, schema: await schema(all) }).toEqual({
        migration: MIGRATIONS[n - 1]?.name,
        schema: before[n - 1],
      });
    }
    expect(await all.query('SELECT name FROM migrations')).toEqual([]);

    await all.runMigrations({ transaction: 'each' });
    expect(await schema(all)).toEqual(migrated);
  });
});

/**
 * `migrate` is the release step (docs/operations.md), often run once per instance at the same
 * time, over tables that hold a year of audit rows while the service serves.
 */
describe('migrate as a release step', () => {
  const name = `svc_e2e_migrate_${randomBytes(6).toString('hex')}`;
  let url: string;
  const indexStep = MIGRATIONS.findIndex((m) => m.name === 'ErasureRequestsIndex1764000022000');

  /** A fresh database holding the schema of the release before the audit index. */
  async function releaseBeforeIndex(): Promise<void> {
    await dropSuiteDatabase(name);
    url = await freshDatabase(name);
    const ds = await new DataSource({ type: 'postgres', url, migrations: MIGRATIONS.slice(0, indexStep) }).initialize();
    await ds.runMigrations({ transaction: 'each' });
    await ds.destroy();
  }

  afterAll(async () => {
    await dropSuiteDatabase(name);
  });

  it('runs one migrate at a time: two at once both succeed, each migration applied once', async () => {
    await dropSuiteDatabase(name);
    url = await freshDatabase(name);
    const runs = await Promise.all([admin({ DATABASE_URL: url }, 'migrate'), admin({ DATABASE_URL: url }, 'migrate')]);
    expect(runs.map((r) => ({ status: r.status, stderr: r.stderr }))).toEqual([
      { status: 0, stderr: '' },
      { status: 0, stderr: '' },
    ]);
    const applied = runs.flatMap((r) => r.out.migrated as string[]);
    expect(applied.sort()).toEqual(MIGRATIONS.map((m) => m.name).sort());
  });

  it('is not bound by a statement timeout: it waits out a table lock the service holds a while', async () => {
    await releaseBeforeIndex();
    // A database default as strict as the request path's, which migrate must not inherit either.
    const settings = await new DataSource({ type: 'postgres', url }).initialize();
    await settings.query(`ALTER DATABASE ${name} SET statement_timeout = '200ms'`);
    await settings.destroy();
    const busy = await new DataSource({ type: 'postgres', url }).initialize();
    const runner = busy.createQueryRunner();
    await runner.startTransaction();
    // A request writing to audit_events holds a lock the index build must wait for.
    await runner.query(`INSERT INTO tenants (id, name, kind) VALUES ('busy', 'Busy', 'customer')`);
    await runner.query(
      `INSERT INTO audit_events (type, tenant_id, subject, data) VALUES ('session.revoked', 'busy', 's', '{}')`,
    );
    const released = new Promise((r) => setTimeout(r, 1_500)).then(() => runner.commitTransaction());
    // 100 ms: the request path's statement timeout is then 200 ms.
    const run = await admin({ DATABASE_URL: url, DEPENDENCY_TIMEOUT_MS: '100' }, 'migrate');
    await released;
    await runner.release();
    await busy.destroy();
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    expect(run.out.migrated).toContain('ErasureRequestsIndex1764000022000');
  });

  it('names the migration that failed', async () => {
    await releaseBeforeIndex();
    const ds = await new DataSource({ type: 'postgres', url }).initialize();
    await ds.query('CREATE INDEX audit_events_erasure_requests_idx ON audit_events (id)');
    await ds.destroy();
    const run = await admin({ DATABASE_URL: url }, 'migrate');
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('migration ErasureRequestsIndex1764000022000 failed');
  });
});
