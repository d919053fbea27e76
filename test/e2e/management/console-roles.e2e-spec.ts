import type { Response } from 'supertest';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ConsoleWriteScope1764000016000 } from '../../../migrations/1764000016000-console-write-scope';
import { addMember, createClient } from '../../support/console-fixtures';
import { emailOf, ROLES, startConsoleTenant, type Caller, type ConsoleTenant } from '../../support/console-tenant';
import { CONSOLE_SCOPES, signIn } from '../../support/management-flow';
import { CONSOLE_CLIENT_ID } from '../../support/test-app';

const T = '/management/tenants/acme';
const browserClient = (name: string) => ({
  name,
  type: 'browser',
  scopes: ['openid'],
  redirect_uris: ['https://play.acme.example/auth'],
  web_origins: [],
});

interface RouteCase {
  readonly route: string;
  /** A valid request by `caller`; writes get fresh targets, so every role's attempt is a real one. */
  readonly call: (w: ConsoleTenant, caller: Caller) => Promise<Response>;
  /** Expected status for viewer, developer, admin, owner. */
  readonly expected: readonly [number, number, number, number];
}

/**
 * Contract 15's roles, every route × every role: viewer and developer read; developer also reads
 * players; admin also changes clients and players; owner also changes members. The expectations
 * are written here, not derived from src/management/tenant-roles.ts, so a change of the table
 * there shows up as a failing row here.
 */
const ROUTES: readonly RouteCase[] = [
  { route: 'GET tenant', call: (w, c) => w.as(c).get(T), expected: [200, 200, 200, 200] },
  { route: 'GET clients', call: (w, c) => w.as(c).get(`${T}/clients`), expected: [200, 200, 200, 200] },
  {
    route: 'POST clients',
    call: (w, c) => w.as(c).post(`${T}/clients`, browserClient(`by ${c}`)),
    expected: [403, 403, 201, 201],
  },
  {
    route: 'PATCH clients/{clientId}',
    call: (w, c) => w.as(c).patch(`${T}/clients/cli_acme_web`, { name: `renamed by ${c}` }),
    expected: [403, 403, 200, 200],
  },
  {
    route: 'GET users?q=',
    call: async (w, c) =>
      w
        .as(c)
        .get(`${T}/users`)
        .query({ q: (await newGuest(w)).user_id }),
    expected: [403, 200, 200, 200],
  },
  {
    route: 'GET users/{userId}',
    call: async (w, c) => w.as(c).get(`${T}/users/${(await newGuest(w)).user_id}`),
    expected: [403, 200, 200, 200],
  },
  {
    route: 'POST users/{userId}/deactivate',
    call: async (w, c) => w.as(c).post(`${T}/users/${(await newGuest(w)).user_id}/deactivate`),
    expected: [403, 403, 200, 200],
  },
  {
    route: 'DELETE users/{userId}',
    call: async (w, c) => w.as(c).delete(`${T}/users/${(await newGuest(w)).user_id}`),
    expected: [403, 403, 200, 200],
  },
  {
    route: 'POST sessions/{sessionId}/revoke',
    call: async (w, c) => w.as(c).post(`${T}/sessions/${(await newGuest(w)).session_id}/revoke`),
    expected: [403, 403, 200, 200],
  },
  { route: 'GET audit', call: (w, c) => w.as(c).get(`${T}/audit`), expected: [200, 200, 200, 200] },
  { route: 'GET stats', call: (w, c) => w.as(c).get(`${T}/stats`), expected: [200, 200, 200, 200] },
  { route: 'GET members', call: (w, c) => w.as(c).get(`${T}/members`), expected: [200, 200, 200, 200] },
  {
    route: 'POST members',
    call: (w, c) => w.as(c).post(`${T}/members`, { email: `added-by-${c}@studio.example`, role: 'viewer' }),
    expected: [403, 403, 403, 201],
  },
  {
    route: 'DELETE members/{userId}',
    call: async (w, c) =>
      w.as(c).delete(`${T}/members/${await addMember(w.t, 'acme', `leaving-${c}@studio.example`, 'viewer')}`),
    expected: [403, 403, 403, 200],
  },
];

/** A fresh guest of acme, so every role's write has a target of its own. */
async function newGuest(w: ConsoleTenant): Promise<{ user_id: string; session_id: string }> {
  const res = await w.t
    .auth()
    .post('/t/acme/guest')
    .send({ client_id: 'cli_acme_web', browser_flow_id: `flw_${randomBytes(18).toString('base64url')}` })
    .expect(201);
  return res.body as { user_id: string; session_id: string };
}

describe('console roles: every management route × every role (contract 15)', () => {
  let w: ConsoleTenant;
  beforeAll(async () => {
    w = await startConsoleTenant();
    await createClient(w.t, 'acme', { id: 'cli_acme_web', name: 'Acme Web', scopes: ['openid', 'offline_access'] });
  });
  afterAll(async () => {
    await w.close();
  });

  const table = ROUTES.flatMap((r) => ROLES.map((role, i) => [r.route, role, r.expected[i] as number, r] as const));

  it.each(table)('%s as %s → %i', async (_route, role, status, r) => {
    const res = await r.call(w, role);
    expect(res.status).toBe(status);
    if (status === 403) expect(res.body).toEqual({ error: 'forbidden', error_description: expect.any(String) });
  });

  it.each(ROUTES.map((r) => [r.route, r] as const))(
    '%s: a member of another tenant gets 403, as for no tenant',
    async (_route, r) => {
      const res = await r.call(w, 'outsider');
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', error_description: 'No access to this tenant.' });
    },
  );

  const writes = ROUTES.filter((r) => r.expected[2] !== 403 && !r.route.startsWith('GET'));
  it.each(writes.map((r) => [r.route, r] as const))(
    '%s: an admin whose token has tenant:read only gets 403, and nothing is audited',
    async (_route, r) => {
      const before = await w.t.pg.query(`SELECT count(*) FROM audit_events WHERE type LIKE 'console.%'`);
      const res = await r.call(w, 'read-only admin');
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', error_description: 'This change needs the tenant:write scope.' });
      expect((await w.t.pg.query(`SELECT count(*) FROM audit_events WHERE type LIKE 'console.%'`)).rows).toEqual(
        before.rows,
      );
    },
  );

  it('a console client row seeded before contract 15 gets tenant:write from the migration, then signs in with both scopes', async () => {
    await w.t.pg.query(`UPDATE clients SET scopes = '{tenant:read}' WHERE id = $1`, [CONSOLE_CLIENT_ID]);
    const runner = w.t.app.get(DataSource).createQueryRunner();
    try {
      await new ConsoleWriteScope1764000016000().up(runner);
      await new ConsoleWriteScope1764000016000().up(runner);
    } finally {
      await runner.release();
    }
    const { rows } = await w.t.pg.query('SELECT scopes FROM clients WHERE id = $1', [CONSOLE_CLIENT_ID]);
    expect(rows).toEqual([{ scopes: ['tenant:read', 'tenant:write'] }]);
    expect((await signIn(w.t, emailOf('owner'), CONSOLE_SCOPES)).scope).toBe(CONSOLE_SCOPES);
  });

  it('a refused role changes nothing: no console row names a viewer or a developer, no guest of theirs ended', async () => {
    const { rows: actors } = await w.t.pg.query<{ actor: string }>(
      `SELECT DISTINCT data->>'actor_id' AS actor FROM audit_events WHERE type LIKE 'console.%'`,
    );
    expect(actors.map((r) => r.actor).sort()).toEqual([w.userIds.admin, w.userIds.owner].sort());
    const { rows: ended } = await w.t.pg.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM users WHERE tenant_id = 'acme' AND status <> 'active'`,
    );
    expect(ended).toEqual([{ n: 2 }]);
  });

  it('the refused client writes left no client row', async () => {
    const { rows } = await w.t.pg.query(`SELECT name FROM clients WHERE tenant_id = 'acme' ORDER BY name`);
    expect(rows.map((r: { name: string }) => r.name)).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/by (viewer|developer)/)]),
    );
    expect(rows.map((r: { name: string }) => r.name)).toEqual(expect.arrayContaining(['by admin', 'by owner']));
  });
});
