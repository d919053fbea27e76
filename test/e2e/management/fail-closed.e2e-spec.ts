import { emailUserId } from '../../support/console-fixtures';
import { startConsoleTenant, type ConsoleTenant } from '../../support/console-tenant';
import { eventually } from '../../support/eventually';
import { PostgresOutage } from '../../support/postgres-outage';

const T = '/management/tenants/acme';
const NEW_CLIENT = {
  name: 'Acme Web',
  type: 'browser',
  scopes: ['openid'],
  redirect_uris: ['https://play.acme.example/auth'],
  web_origins: [],
};

/**
 * Spec 1.6 for the console's management API: with PostgreSQL refusing connections, reads and
 * writes answer 503 temporarily_unavailable (never a 401 that would sign the console out, never an
 * empty answer taken for "nobody found"), nothing changes, and the API serves again once it is back.
 */
describe('management API fails closed when PostgreSQL refuses connections', () => {
  let w: ConsoleTenant;
  let outage: PostgresOutage;
  beforeAll(async () => {
    w = await startConsoleTenant();
    outage = await PostgresOutage.of(w.t.databaseName);
  });
  afterAll(async () => {
    await outage.end();
    await w.close();
  });

  /** What the API's writes touch. */
  const state = (playerId: string) =>
    outage.fresh(async (pg) => {
      const one = async (sql: string, params: unknown[] = []) => (await pg.query(sql, params)).rows[0];
      return {
        clients: await one(`SELECT count(*)::int AS n FROM clients WHERE tenant_id = 'acme'`),
        audit: await one(`SELECT count(*)::int AS n FROM audit_events`),
        player: await one(`SELECT status FROM users WHERE id = $1`, [playerId]),
      };
    });

  it('answers reads and writes 503 while the database is away, changes nothing, and recovers', async () => {
    const player = await emailUserId(w.t, 'acme', 'steady@example.com');
    await w.as('developer').get(`${T}/users`).query({ q: 'steady@example.com' }).expect(200);
    const before = await state(player);

    await outage.cut();
    try {
      const answers = [
        await w.as('developer').get(`${T}/users`).query({ q: 'steady@example.com' }),
        await w.as('viewer').get(`${T}/clients`),
        await w.as('admin').post(`${T}/clients`, NEW_CLIENT),
        await w.as('admin').post(`${T}/users/${player}/deactivate`),
      ];
      expect(answers.map((r) => ({ status: r.status, error: r.body.error }))).toEqual(
        Array.from({ length: answers.length }, () => ({ status: 503, error: 'temporarily_unavailable' })),
      );
    } finally {
      await outage.restore();
    }
    await eventually(async () => (await w.t.auth().get('/readyz')).status === 200, 10_000);
    expect(await state(player)).toEqual(before);

    const found = await w.as('developer').get(`${T}/users`).query({ q: 'steady@example.com' }).expect(200);
    expect(found.body.users.map((u: { id: string }) => u.id)).toEqual([player]);
    await w.as('admin').post(`${T}/clients`, NEW_CLIENT).expect(201);
    expect((await state(player)).clients).toEqual({ n: before.clients.n + 1 });
  });
});
