import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../src/platform/database/data-source-options';

export const PG_BASE = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432';
/** One template per test run (the global setup names it), so concurrent runs never collide. */
export function templateDb(): string {
  const run = process.env.SVC_TEST_RUN_ID;
  if (!run || !/^[0-9a-z]+$/.test(run))
    throw new Error('SVC_TEST_RUN_ID is not set: run the tests through jest with the e2e config');
  return `svc_test_template_${run}`;
}

const STALE_AFTER_MS = 3 * 60 * 60 * 1000;

/** The run id starts with the run's start time (8 base-36 digits, see global-setup.ts). */
function runStartedAt(template: string): number {
  const started = parseInt(template.slice('svc_test_template_'.length, 'svc_test_template_'.length + 8), 36);
  return Number.isFinite(started) ? started : 0;
}

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: `${PG_BASE}/postgres` });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Builds the template database by running the real migrations once per test run. */
export async function createTemplateDatabase(): Promise<void> {
  const template = templateDb();
  await admin(async (c) => {
    // Templates of earlier runs that ended abruptly are removed too, once they are old enough
    // that no run still in progress can be copying from them.
    const others = await c.query<{ datname: string }>(
      `SELECT datname FROM pg_database WHERE datname LIKE 'svc_test_template_%' AND datname <> $1`,
      [template],
    );
    for (const { datname } of others.rows.filter((row) => runStartedAt(row.datname) < Date.now() - STALE_AFTER_MS)) {
      await c.query(`DROP DATABASE IF EXISTS ${datname}`).catch(() => undefined);
    }
    await c.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${template}`);
  });
  const ds = new DataSource({ type: 'postgres', url: `${PG_BASE}/${template}`, migrations: MIGRATIONS });
  await ds.initialize();
  await ds.runMigrations({ transaction: 'each' });
  await ds.destroy();
}

/** A fresh database per suite, copied from the template: suites never see each other's rows. */
export async function createSuiteDatabase(): Promise<string> {
  const name = `svc_e2e_${randomBytes(6).toString('hex')}`;
  for (let attempt = 0; ; attempt++) {
    try {
      await admin((c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${templateDb()}`));
      return name;
    } catch (err) {
      // Two suites copying the template at once: PostgreSQL refuses the second; retry.
      if (attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, 100 + attempt * 50));
    }
  }
}

/** An empty database `name`, dropped first if an earlier run left it (the bench's); returns its URL. */
export async function freshDatabase(name: string): Promise<string> {
  await admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${name}`);
  });
  return `${PG_BASE}/${name}`;
}

export async function dropSuiteDatabase(name: string): Promise<void> {
  await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}
