import { Client } from 'pg';
import { PG_BASE } from './database';

/**
 * Takes a suite's database away as an outage would: new connections refused and every open one
 * (the service's pool, the suite's own t.pg) cut; then gives it back. Reads afterwards go through
 * `fresh`, since the suite's connection was cut with the rest.
 */
export class PostgresOutage {
  private constructor(
    private readonly admin: Client,
    private readonly databaseName: string,
  ) {}

  static async of(databaseName: string): Promise<PostgresOutage> {
    const admin = new Client({ connectionString: `${PG_BASE}/postgres` });
    await admin.connect();
    return new PostgresOutage(admin, databaseName);
  }

  async cut(): Promise<void> {
    await this.admin.query(`ALTER DATABASE ${this.databaseName} ALLOW_CONNECTIONS false`);
    await this.admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [this.databaseName],
    );
  }

  async restore(): Promise<void> {
    await this.admin.query(`ALTER DATABASE ${this.databaseName} ALLOW_CONNECTIONS true`);
  }

  /** Runs `read` on a new connection to the suite's database. */
  async fresh<T>(read: (pg: Client) => Promise<T>): Promise<T> {
    const pg = new Client({ connectionString: `${PG_BASE}/${this.databaseName}` });
    await pg.connect();
    try {
      return await read(pg);
    } finally {
      await pg.end();
    }
  }

  async end(): Promise<void> {
    await this.restore();
    await this.admin.end();
  }
}

/**
 * Runs `body` while PostgreSQL refuses to write (`on` INSERT or UPDATE) the identity row of
 * `providerSubject` with a serialization failure, a fault of the moment (contract 10: 503): the
 * request gets past every read and check before it, and what it took before the write is what the
 * test then looks at. The trigger is gone again when `body` settles.
 */
export function whileIdentityWriteRefused(
  pg: Pick<Client, 'query'>,
  on: 'INSERT' | 'UPDATE',
  providerSubject: string,
  body: () => Promise<void>,
): Promise<void> {
  return whileRowWriteRefused(
    pg,
    { table: 'identities', on, column: 'provider_subject', value: providerSubject },
    body,
  );
}

/** As whileIdentityWriteRefused, for a new session row of the user `userId` (a sign-in's). */
export function whileSessionInsertRefused(
  pg: Pick<Client, 'query'>,
  userId: string,
  body: () => Promise<void>,
): Promise<void> {
  return whileRowWriteRefused(pg, { table: 'sessions', on: 'INSERT', column: 'user_id', value: userId }, body);
}

async function whileRowWriteRefused(
  pg: Pick<Client, 'query'>,
  row: { table: 'identities' | 'sessions'; on: 'INSERT' | 'UPDATE'; column: string; value: string },
  body: () => Promise<void>,
): Promise<void> {
  await pg.query(`
    CREATE FUNCTION test_refuse_write() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'test: not now' USING ERRCODE = 'serialization_failure'; END $$`);
  await pg.query(
    `CREATE TRIGGER test_refuse_write BEFORE ${row.on} ON ${row.table} FOR EACH ROW
     WHEN (NEW.${row.column} = ${pgLiteral(row.value)}) EXECUTE FUNCTION test_refuse_write()`,
  );
  try {
    await body();
  } finally {
    await pg.query(`DROP TRIGGER test_refuse_write ON ${row.table}`);
    await pg.query('DROP FUNCTION test_refuse_write()');
  }
}

/** A trigger's WHEN takes no parameters: the subject as a quoted literal. */
const pgLiteral = (value: string): string => `'${value.replace(/'/g, "''")}'`;
