import type { TestApp } from './test-app';

/**
 * What a refused request must leave untouched: every Redis key of the app and the row counts of
 * the tables a request could write. Compare two snapshots as strings.
 */
export async function stateSnapshot(t: TestApp): Promise<string> {
  const keys = (await t.redisKeys()).sort();
  const rows = await t.pg.query(
    'SELECT (SELECT count(*) FROM users) u, (SELECT count(*) FROM identities) i, (SELECT count(*) FROM sessions) s, (SELECT count(*) FROM audit_events) a',
  );
  return JSON.stringify({ keys, rows: rows.rows });
}
