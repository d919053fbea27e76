import { rmSync } from 'node:fs';
import { Client } from 'pg';
import { PG_BASE, templateDb } from './database';

export default async function globalTeardown(): Promise<void> {
  const c = new Client({ connectionString: `${PG_BASE}/postgres` });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${templateDb()} WITH (FORCE)`).finally(() => c.end());
  if (process.env.SVC_TEST_SECRETS_FILE) rmSync(process.env.SVC_TEST_SECRETS_FILE, { force: true });
}
