import { DataSource, type QueryRunner } from 'typeorm';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

/** The service's pool size (src/platform/database/data-source-options.ts). */
const POOL_SIZE = 20;
const DEPENDENCY_TIMEOUT_MS = 500;

const countUsers = async (w: GuestWorld): Promise<number> =>
  (await w.t.pg.query('SELECT count(*)::int AS n FROM users')).rows[0].n as number;

/**
 * Spec 1.6 with the database reachable but every pooled connection busy (a slow query storm, a
 * leaked transaction): waiting for a connection is bounded like any other dependency call, the
 * answer is 503 and nothing is issued, and the service serves again as soon as connections free.
 */
describe('PostgreSQL pool exhausted', () => {
  let w: GuestWorld;
  let held: QueryRunner[] = [];
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off', DEPENDENCY_TIMEOUT_MS: String(DEPENDENCY_TIMEOUT_MS) });
  });
  afterAll(async () => {
    await Promise.all(held.map((q) => q.release()));
    await w.close();
  });

  /**
   * Takes every pooled connection. The service's own background work (the pending-revocations
   * worker) may hold one for a moment, and a connect that waits past the pool's timeout fails: it is
   * tried again until the test holds the whole pool.
   */
  async function exhaustPool(): Promise<void> {
    const ds = w.t.app.get(DataSource);
    const deadline = Date.now() + 15_000;
    while (held.length < POOL_SIZE) {
      if (Date.now() > deadline) throw new Error(`held ${held.length} of ${POOL_SIZE} pooled connections`);
      const runner = ds.createQueryRunner();
      try {
        await runner.connect();
        held.push(runner);
      } catch {
        await runner.release().catch(() => undefined);
      }
    }
  }

  it('answers 503 within a bounded time, issues no guest, reports it at /readyz, and recovers without a restart', async () => {
    const c = w.client();
    await c.createGuest();
    const users = await countUsers(w);

    await exhaustPool();
    const started = Date.now();
    const created = await w.t
      .auth()
      .post('/t/acme/guest')
      .send({ client_id: 'cli_game', browser_flow_id: 'flw_PoolExhaustedFlow0001' });
    const elapsed = Date.now() - started;
    expect({ status: created.status, error: created.body.error, token: created.body.access_token }).toEqual({
      status: 503,
      error: 'temporarily_unavailable',
      token: undefined,
    });
    // Bounded by the connect timeout (one dependency timeout per query), not by the held connections.
    expect(elapsed).toBeLessThan(DEPENDENCY_TIMEOUT_MS * 6);
    const ready = await w.t.auth().get('/readyz');
    expect({ status: ready.status, checks: ready.body.checks }).toEqual({
      status: 503,
      checks: { postgres: 'down', redis: 'up' },
    });

    const releasedAt = Date.now();
    await Promise.all(held.map((q) => q.release()));
    held = [];
    expect(await countUsers(w)).toBe(users);
    const again = await w.client().createGuest();
    expect(again.access_token).toEqual(expect.any(String));
    expect(Date.now() - releasedAt).toBeLessThan(10_000);
    expect((await w.t.auth().get('/readyz')).status).toBe(200);
  });
});
