import { randomBytes } from 'node:crypto';
import { createClient } from '../../support/console-fixtures';
import { auditRows, startConsoleTenant, type ConsoleTenant } from '../../support/console-tenant';

const BASE = '/management/tenants/acme/clients';
const flowId = (): string => `flw_${randomBytes(18).toString('base64url')}`;

const NEW_BROWSER_CLIENT = {
  name: 'Acme Web',
  type: 'browser',
  scopes: ['openid', 'offline_access'],
  redirect_uris: ['https://play.acme.example/auth'],
  web_origins: ['https://portal.acme.example'],
};

/** Contract 15: the console creates and edits a tenant's clients under the admin CLI's rules. */
describe('management API: clients (contract 15)', () => {
  let w: ConsoleTenant;
  beforeAll(async () => {
    w = await startConsoleTenant();
    await createClient(w.t, 'other-team', { id: 'cli_other', name: 'Other' });
  });
  afterAll(async () => {
    await w.close();
  });

  const clientCount = async (): Promise<number> =>
    Number((await w.t.pg.query<{ n: string }>('SELECT count(*) AS n FROM clients')).rows[0]?.n);
  const auditCount = async (): Promise<number> =>
    Number((await w.t.pg.query<{ n: string }>('SELECT count(*) AS n FROM audit_events')).rows[0]?.n);

  it('creates a browser client with a fresh id, exactly the contract fields, and its audit row with the actor', async () => {
    const res = await w.as('admin').post(BASE, NEW_BROWSER_CLIENT).expect(201);
    expect(res.body).toEqual({
      client: {
        client_id: expect.stringMatching(/^cli_[A-Za-z0-9_-]{22}$/),
        name: 'Acme Web',
        type: 'browser',
        enabled: true,
        scopes: ['openid', 'offline_access'],
        redirect_uris: ['https://play.acme.example/auth'],
        web_origins: ['https://play.acme.example', 'https://portal.acme.example'],
      },
    });
    expect(res.headers['cache-control']).toBe('no-store');
    const id = res.body.client.client_id as string;
    expect(await auditRows(w.t, 'acme', 'console.client.create')).toEqual([
      { subject: id, data: { actor_id: w.userIds.admin, type: 'browser' } },
    ]);
    const list = await w.as('viewer').get(BASE).expect(200);
    expect(list.body.clients.map((c: { client_id: string }) => c.client_id)).toContain(id);
  });

  it('a new browser client with a web origin works at once for a game on that origin (no cache delay)', async () => {
    // Warm the tenant's web-origin cache first, so a stale cache would refuse the new origin.
    const first = await w.as('admin').post(BASE, { ...NEW_BROWSER_CLIENT, web_origins: ['https://one.acme.example'] });
    expect(first.status).toBe(201);
    await w.t
      .auth()
      .options('/t/acme/guest')
      .set('Origin', 'https://one.acme.example')
      .set('Access-Control-Request-Method', 'POST')
      .expect(204);
    const created = await w
      .as('owner')
      .post(BASE, { ...NEW_BROWSER_CLIENT, web_origins: ['https://two.acme.example'] })
      .expect(201);
    const clientId = created.body.client.client_id as string;
    const preflight = await w.t
      .auth()
      .options('/t/acme/guest')
      .set('Origin', 'https://two.acme.example')
      .set('Access-Control-Request-Method', 'POST')
      .expect(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('https://two.acme.example');
    const guest = await w.t
      .auth()
      .post('/t/acme/guest')
      .set('Origin', 'https://two.acme.example')
      .send({ client_id: clientId, browser_flow_id: flowId() })
      .expect(201);
    expect(guest.headers['access-control-allow-origin']).toBe('https://two.acme.example');
  });

  describe('the admin CLI’s rules refuse a client with 400 and write nothing', () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['a fragment in a redirect URI', { redirect_uris: ['https://play.acme.example/cb#x'] }, /fragment/],
      ['userinfo in a redirect URI', { redirect_uris: ['https://me:pw@play.acme.example/cb'] }, /userinfo/],
      ['another scheme', { redirect_uris: ['javascript:alert(1)'] }, /http\(s\)/],
      ['an unknown scope', { scopes: ['openid', 'tenant:write'] }, /scopes/],
      ['a repeated scope', { scopes: ['openid', 'openid'] }, /scopes/],
      ['a web origin with a path', { web_origins: ['https://portal.acme.example/x'] }, /origin/],
      ['a wildcard host in a redirect URI', { redirect_uris: ['https://*.acme.example/cb'] }, /wildcard/],
      ['a wildcard web origin', { web_origins: ['https://*'] }, /wildcard/],
      ['a confidential client', { type: 'confidential' }, /type/],
      ['a browser client without redirect URIs', { redirect_uris: [] }, /redirect/],
      ['web origins on a native client', { type: 'native' }, /only browser clients/],
      ['a blank name', { name: '  ' }, /name/],
      // PostgreSQL cannot store a NUL in text: refused here, never a 500 from the insert.
      ['a NUL in the name', { name: 'Acme\u0000Web' }, /name/],
      ['a line break in the name', { name: 'Acme\nWeb' }, /name/],
      // Lengths: a name of at most 100 characters, at most 10 redirect URIs of at most 2048.
      ['a name of 101 characters', { name: 'x'.repeat(101) }, /name/],
      [
        'eleven redirect URIs',
        { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://play.acme.example/cb${i}`) },
        /redirect_uris/,
      ],
      [
        'a redirect URI of 2049 characters',
        { redirect_uris: [`https://play.acme.example/${'a'.repeat(2049 - 26)}`] },
        /redirect_uris/,
      ],
      ['an unknown field', { secret: 'x' }, /./],
      ['a scopes string instead of a list', { scopes: 'openid' }, /./],
    ];
    it.each(cases)('%s', async (_label, change, description) => {
      const [clients, audit] = [await clientCount(), await auditCount()];
      const res = await w
        .as('admin')
        .post(BASE, { ...NEW_BROWSER_CLIENT, ...change })
        .expect(400);
      expect(res.body.error).toBe('invalid_request');
      expect(res.body.error_description).toMatch(description);
      expect(res.text).not.toContain('pw@');
      expect([await clientCount(), await auditCount()]).toEqual([clients, audit]);
    });
  });

  describe('PATCH', () => {
    let id: string;
    beforeAll(async () => {
      id = (
        await w
          .as('admin')
          .post(BASE, { ...NEW_BROWSER_CLIENT, name: 'To edit' })
          .expect(201)
      ).body.client.client_id as string;
    });

    it('changes the named fields only, under the same rules, and records which ones', async () => {
      const res = await w
        .as('admin')
        .patch(`${BASE}/${id}`, { web_origins: ['https://new.acme.example'], name: 'Edited' })
        .expect(200);
      expect(res.body.client).toEqual({
        client_id: id,
        name: 'Edited',
        type: 'browser',
        enabled: true,
        scopes: ['openid', 'offline_access'],
        redirect_uris: ['https://play.acme.example/auth'],
        web_origins: ['https://play.acme.example', 'https://new.acme.example'],
      });
      expect((await auditRows(w.t, 'acme', 'console.client.update')).at(-1)).toEqual({
        subject: id,
        data: { actor_id: w.userIds.admin, fields: 'name web_origins' },
      });
    });

    it('refuses a bad change, an unknown field or an empty body with 400 and changes nothing', async () => {
      const before = (await w.t.pg.query('SELECT * FROM clients WHERE id = $1', [id])).rows;
      const audit = await auditCount();
      for (const body of [
        { redirect_uris: ['https://play.acme.example/#x'] },
        { name: 'x', extra: 1 },
        { name: 'Edited\u0000' },
        {},
        { redirect_uris: [] },
        // null is no way to leave a field out: it would have answered 200 and recorded a change.
        { name: null },
        { enabled: null, scopes: null },
      ])
        expect((await w.as('owner').patch(`${BASE}/${id}`, body).expect(400)).body.error).toBe('invalid_request');
      expect((await w.t.pg.query('SELECT * FROM clients WHERE id = $1', [id])).rows).toEqual(before);
      expect(await auditCount()).toBe(audit);
    });

    it('disables a client: its guest creation is refused at once', async () => {
      await w.as('owner').patch(`${BASE}/${id}`, { enabled: false }).expect(200);
      const res = await w.t.auth().post('/t/acme/guest').send({ client_id: id, browser_flow_id: flowId() }).expect(400);
      expect(res.body.error).toBe('invalid_client');
      await w.as('owner').patch(`${BASE}/${id}`, { enabled: true }).expect(200);
      await w.t.auth().post('/t/acme/guest').send({ client_id: id, browser_flow_id: flowId() }).expect(201);
    });

    it('narrows a client’s scopes for its live sessions too: a refresh carries only what the client still allows', async () => {
      const created = await w
        .as('admin')
        .post(BASE, { ...NEW_BROWSER_CLIENT, name: 'Narrowed', scopes: ['openid', 'profile', 'offline_access'] })
        .expect(201);
      const clientId = created.body.client.client_id as string;
      const guest = await w.t
        .auth()
        .post('/t/acme/guest')
        .send({ client_id: clientId, browser_flow_id: flowId() })
        .expect(201);
      expect(guest.body.scope).toBe('openid profile offline_access');
      await w
        .as('admin')
        .patch(`${BASE}/${clientId}`, { scopes: ['offline_access'] })
        .expect(200);
      const refreshed = await w.t
        .auth()
        .post('/t/acme/token')
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: guest.body.refresh_token, client_id: clientId })
        .expect(200);
      expect(refreshed.body.scope).toBe('offline_access');
      expect(refreshed.body.id_token).toBeUndefined();
      const claims = JSON.parse(
        Buffer.from(String(refreshed.body.access_token).split('.')[1] ?? '', 'base64url').toString(),
      );
      expect(claims.scope).toBe('offline_access');
    });

    it('concurrent changes of different fields all land: the row is changed under a lock, never overwritten', async () => {
      for (let round = 0; round < 5; round++) {
        const origin = `https://round${round}.acme.example`;
        const [a, b] = await Promise.all([
          w.as('admin').patch(`${BASE}/${id}`, { name: `Round ${round}` }),
          w.as('owner').patch(`${BASE}/${id}`, { web_origins: [origin] }),
        ]);
        expect([a.status, b.status]).toEqual([200, 200]);
        const { rows } = await w.t.pg.query('SELECT name, web_origins FROM clients WHERE id = $1', [id]);
        expect(rows).toEqual([{ name: `Round ${round}`, web_origins: [origin] }]);
      }
    });

    it('takes a name of exactly 100 characters', async () => {
      const name = 'n'.repeat(100);
      expect((await w.as('admin').patch(`${BASE}/${id}`, { name }).expect(200)).body.client.name).toBe(name);
    });

    it('answers 404 for a client of another tenant or none, and changes nothing', async () => {
      for (const other of ['cli_other', 'cli_nope', 'not-a-client-id']) {
        const res = await w.as('admin').patch(`${BASE}/${other}`, { name: 'Mine now' }).expect(404);
        expect(res.body.error).toBe('not_found');
      }
      expect((await w.t.pg.query(`SELECT name FROM clients WHERE id = 'cli_other'`)).rows).toEqual([{ name: 'Other' }]);
    });
  });
});
