import { ClientsRepository } from '../../../src/directory/clients.repository';
import { TenantsRepository } from '../../../src/directory/tenants.repository';
import { RELOAD_ON_MISS_MIN_MS } from '../../../src/guest/known-tenants';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

/**
 * Issue 22, point 6: requests naming unknown tenants (CORS, discovery, the refresh's client
 * look-up), or unknown clients of a real tenant (the refresh), cost no PostgreSQL read of their
 * own, from however many networks they come.
 */
describe('unknown tenants read nothing per request', () => {
  let w: GuestWorld;
  let perTenantReads: jest.Mock;
  const restore: Array<() => void> = [];
  beforeAll(async () => {
    w = await startGuestWorld();
  });
  afterAll(async () => {
    await w.close();
  });
  beforeEach(() => {
    perTenantReads = jest.fn();
    const watch = (repo: object, method: string): void => {
      const target = repo as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const original = target[method]?.bind(repo);
      if (!original) throw new Error(`no method ${method}`);
      target[method] = (...args: unknown[]) => {
        perTenantReads(method, ...args);
        return original(...args);
      };
      restore.push(() => {
        target[method] = original;
      });
    };
    watch(w.t.app.get(TenantsRepository), 'findActiveCustomer');
    watch(w.t.app.get(ClientsRepository), 'browserClientsOfActiveTenant');
    watch(w.t.app.get(ClientsRepository), 'findEnabledOfActiveTenant');
    watch(w.t.app.get(ClientsRepository), 'listOf');
  });
  afterEach(() => restore.splice(0).forEach((undo) => undo()));

  const many = 40;
  const ids = (label: string) => Array.from({ length: many }, (_, i) => `nope-${label}-${i}`);

  it('discovery of unknown tenants answers 404 without a read per tenant', async () => {
    const answers = await Promise.all(
      ids('disc').map((t) => w.t.auth().get(`/t/${t}/.well-known/openid-configuration`)),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(many).fill(404));
    expect(perTenantReads).not.toHaveBeenCalled();
  });

  it('CORS of unknown tenants answers without CORS headers and without a read per tenant', async () => {
    const answers = await Promise.all(
      ids('cors').map((t) =>
        w.t
          .auth()
          .options(`/t/${t}/guest`)
          .set('Origin', 'https://play.acme.example')
          .set('Access-Control-Request-Method', 'POST'),
      ),
    );
    expect(answers.every((r) => r.headers['access-control-allow-origin'] === undefined)).toBe(true);
    expect(perTenantReads).not.toHaveBeenCalled();
  });

  it('refreshes naming unknown tenants are refused without a client look-up', async () => {
    const answers = await Promise.all(
      ids('refresh').map((t) =>
        w.t
          .auth()
          .post(`/t/${t}/token`)
          .type('form')
          .send({ grant_type: 'refresh_token', refresh_token: 'x.y.z', client_id: 'cli_game' }),
      ),
    );
    expect(answers.every((r) => r.status >= 400 && r.status < 500)).toBe(true);
    expect(perTenantReads).not.toHaveBeenCalled();
  });

  const refresh = (tenantId: string, clientId: string) =>
    w.t
      .auth()
      .post(`/t/${tenantId}/token`)
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: 'x.y.z', client_id: clientId });

  it('refreshes naming random client ids of a real tenant are refused from memory, a bounded number of reads in all', async () => {
    const clientIds = Array.from({ length: 4 * many }, (_, i) => `cli_nope_${i}`);
    const started = performance.now();
    const answers = await Promise.all(clientIds.map((c) => refresh('acme', c)));
    const elapsed = performance.now() - started;
    expect(answers.map((r) => r.body.error)).toEqual(Array(clientIds.length).fill('invalid_client'));
    // One reload of the tenant's client ids (two queries) per 250 ms at most, shared by every miss,
    // plus one started before the first and one after the last of these intervals.
    const reloads = Math.floor(elapsed / RELOAD_ON_MISS_MIN_MS) + 2;
    expect(perTenantReads.mock.calls.length).toBeLessThanOrEqual(2 * reloads);
    // However slow the machine (each reload interval allows two reads), far fewer reads than
    // requests: a read per unknown client id would be 160.
    expect(perTenantReads.mock.calls.length).toBeLessThan(clientIds.length / 4);
  });

  it('still serves a client created a moment ago, right after a miss', async () => {
    await refresh('acme', 'cli_fresh').expect(400);
    await w.t.pg.query(
      `INSERT INTO clients (id, tenant_id, name, type, scopes) VALUES ('cli_fresh', 'acme', 'Fresh', 'native', '{openid,offline_access}')`,
    );
    const guest = await w.t
      .auth()
      .post('/t/acme/guest')
      .send({ client_id: 'cli_fresh', browser_flow_id: 'flw_fresh-client-000001' })
      .expect(201);
    const res = await w.t
      .auth()
      .post('/t/acme/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: guest.body.refresh_token, client_id: 'cli_fresh' });
    expect(res.status).toBe(200);
  });

  it('still serves a tenant created a moment ago', async () => {
    await w.t.auth().get('/t/nope-warm/.well-known/openid-configuration').expect(404);
    await w.t.pg.query(`INSERT INTO tenants (id, name, kind, status) VALUES ('fresh', 'Fresh', 'customer', 'active')`);
    await w.t.auth().get('/t/fresh/.well-known/openid-configuration').expect(200);
  });
});
