import type { TestApp } from './test-app';

/**
 * What a refused request must leave untouched: every Redis key of the app and the row counts of
 * the tables a request could write. Compare two snapshots as strings.
 */
export async function stateSnapshot(t: TestApp): Promise<string> {
  const keys = await t.redisKeys();
  const rows = await t.pg.query(
    'SELECT (SELECT count(*) FROM users) u, (SELECT count(*) FROM identities) i, (SELECT count(*) FROM sessions) s, (SELECT count(*) FROM audit_events) a',
  );
  return JSON.stringify({ keys, rows: rows.rows });
}

/** Whether a generated value can travel as an HTTP header value at all (the client refuses the rest). */
export function headerSafe(v: string): boolean {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(v);
}

/** The contract's error answer: JSON `{error, error_description}` with the given status, or any 4xx. */
export function expectContractError(
  res: { status: number; body: unknown; headers: Record<string, string> },
  status?: number,
): void {
  if (status === undefined) {
    expect(res.status).toBeLessThan(500);
    expect(res.status).toBeGreaterThanOrEqual(400);
  } else {
    expect(res.status).toBe(status);
  }
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.body).toEqual({ error: expect.stringMatching(/^[a-z_]+$/), error_description: expect.any(String) });
}
