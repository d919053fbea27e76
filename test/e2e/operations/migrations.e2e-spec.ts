import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../../src/platform/database/data-source-options';
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
