import { randomBytes } from 'node:crypto';
import { consoleSignIn, type ConsoleSession } from '../../support/console-flow';
import { addMember, createClient, createTenant } from '../../support/console-fixtures';
import { UpstreamSwitch } from '../../support/console-upstream';
import { startTestApp, type TestApp } from '../../support/test-app';

type Method = 'get' | 'post' | 'patch' | 'delete';

/**
 * Contract 15 with contract 4: the BFF proxies exactly the console's management routes, each to
 * the same path on the API with the session's bearer; state-changing calls need the exact console
 * Origin; nothing else under /api/management/ is reachable.
 */
describe('console BFF: the proxied management routes of contract 15', () => {
  let sw: UpstreamSwitch;
  let t: TestApp;
  let s: ConsoleSession;
  let guest: { user_id: string; session_id: string };
  let erasable: { user_id: string };
  let memberId: string;
  let clientId: string;

  const call = (method: Method, path: string, origin: string | null = null) => {
    const req = t.console()[method](path).set('Cookie', s.cookie);
    return origin === null ? req : req.set('Origin', origin);
  };
  const newGuest = async (): Promise<{ user_id: string; session_id: string }> =>
    (
      await t
        .auth()
        .post('/t/acme/guest')
        .send({ client_id: 'cli_acme_web', browser_flow_id: `flw_${randomBytes(18).toString('base64url')}` })
        .expect(201)
    ).body as { user_id: string; session_id: string };
  const upstreamSince = (mark: number): string[] =>
    sw.seen
      .slice(mark)
      .filter((r) => r.path.startsWith('/management/'))
      .map((r) => `${r.method} ${r.path}`);

  beforeAll(async () => {
    sw = await UpstreamSwitch.start();
    t = await startTestApp({ RATE_LIMITS: 'off', AUTH_ORIGIN: sw.origin });
    sw.target = t.port;
    await createTenant(t, 'acme', 'Acme');
    await addMember(t, 'acme', 'owner@studio.example', 'owner');
    memberId = await addMember(t, 'acme', 'leaving@studio.example', 'viewer');
    await createClient(t, 'acme', { id: 'cli_acme_web', name: 'Acme Web', scopes: ['openid', 'offline_access'] });
    s = await consoleSignIn(t, 'owner@studio.example');
    guest = await newGuest();
    erasable = await newGuest();
  });
  afterAll(async () => {
    await t.close();
    await sw.stop();
  });

  const T = '/management/tenants/acme';
  // Each route once, in an order where every write has its target: method, path (with query), body, status.
  interface ProxiedRoute {
    readonly name: string;
    readonly method: Method;
    readonly path: () => string;
    readonly body?: object;
    readonly status: number;
  }
  // Each route once, in an order where every write has its target.
  const ROUTES: ProxiedRoute[] = [
    { name: 'GET tenants', method: 'get', path: () => '/management/tenants', status: 200 },
    { name: 'GET tenants/{id}', method: 'get', path: () => T, status: 200 },
    { name: 'GET clients', method: 'get', path: () => `${T}/clients`, status: 200 },
    {
      name: 'POST clients',
      method: 'post',
      path: () => `${T}/clients`,
      body: {
        name: 'Web',
        type: 'browser',
        scopes: ['openid'],
        redirect_uris: ['https://g.example/cb'],
        web_origins: [],
      },
      status: 201,
    },
    {
      name: 'PATCH clients/{clientId}',
      method: 'patch',
      path: () => `${T}/clients/${clientId}`,
      body: { name: 'Renamed' },
      status: 200,
    },
    { name: 'GET users?q=', method: 'get', path: () => `${T}/users?q=${guest.user_id}`, status: 200 },
    { name: 'GET users/{userId}', method: 'get', path: () => `${T}/users/${guest.user_id}`, status: 200 },
    {
      name: 'POST sessions/{sessionId}/revoke',
      method: 'post',
      path: () => `${T}/sessions/${guest.session_id}/revoke`,
      status: 200,
    },
    {
      name: 'POST users/{userId}/deactivate',
      method: 'post',
      path: () => `${T}/users/${guest.user_id}/deactivate`,
      status: 200,
    },
    { name: 'DELETE users/{userId}', method: 'delete', path: () => `${T}/users/${erasable.user_id}`, status: 200 },
    { name: 'GET audit?type=', method: 'get', path: () => `${T}/audit?type=console.client.create`, status: 200 },
    { name: 'GET stats?days=', method: 'get', path: () => `${T}/stats?days=7`, status: 200 },
    { name: 'GET members', method: 'get', path: () => `${T}/members`, status: 200 },
    {
      name: 'POST members',
      method: 'post',
      path: () => `${T}/members`,
      body: { email: 'new@studio.example', role: 'developer' },
      status: 201,
    },
    { name: 'DELETE members/{userId}', method: 'delete', path: () => `${T}/members/${memberId}`, status: 200 },
  ];
  const send = (r: ProxiedRoute, origin: string | null) => {
    const req = call(r.method, `/api${r.path()}`, origin);
    return r.body === undefined ? req : req.send(r.body);
  };

  it.each(ROUTES.map((r) => [r.name, r] as const))(
    '%s is proxied to the same path on the API, once, and answers as the API does',
    async (_name, r) => {
      const mark = sw.seen.length;
      const res = await send(r, r.method === 'get' ? null : t.consoleOrigin);
      expect(res.status).toBe(r.status);
      expect(upstreamSince(mark)).toEqual([`${r.method.toUpperCase()} ${r.path()}`]);
      expect(res.headers['cache-control']).toBe('no-store');
      if (res.body.client?.client_id) clientId = res.body.client.client_id as string;
    },
  );

  it('passes the API’s own refusals through: an unknown field is 400 from the API, nothing created', async () => {
    const before = await t.pg.query(`SELECT count(*) FROM clients`);
    const res = await call('post', `/api${T}/clients`, t.consoleOrigin)
      .send({ name: 'X', type: 'native', scopes: [], redirect_uris: [], web_origins: [], secret: 'x' })
      .expect(400);
    expect(res.body.error).toBe('invalid_request');
    expect((await t.pg.query(`SELECT count(*) FROM clients`)).rows).toEqual(before.rows);
  });

  describe('state-changing calls need the exact console Origin', () => {
    const origins: Array<[string, string | null]> = [
      ['no Origin', null],
      ['another site', 'https://evil.example'],
      ['the auth host', 'AUTH'],
      ['the console host on another port', 'OTHER_PORT'],
      ['null', 'null'],
    ];
    const writes = ROUTES.filter((r) => r.method !== 'get');
    it.each(writes.flatMap((r) => origins.map(([label, origin]) => [r.name, label, r, origin] as const)))(
      '%s with %s: 403, and the API is never called',
      async (_name, _label, r, origin) => {
        const value =
          origin === 'AUTH' ? sw.origin : origin === 'OTHER_PORT' ? t.consoleOrigin.replace(/:(\d+)$/, ':1') : origin;
        const mark = sw.seen.length;
        const res = await send(r, value);
        expect(res.status).toBe(403);
        expect(res.body.error).toBe('forbidden');
        expect(upstreamSince(mark)).toEqual([]);
      },
    );
  });

  it('passes on only the query parameters each read takes, and refuses one given twice', async () => {
    const mark = sw.seen.length;
    await call('get', `/api${T}/stats?days=3&debug=1&include=secrets`).expect(200);
    expect(upstreamSince(mark)).toEqual([`GET ${T}/stats?days=3`]);
    const twice = await call('get', `/api${T}/audit?type=a.b&type=c.d`).expect(400);
    expect(twice.body.error).toBe('invalid_request');
  });

  it('reaches nothing else under /api/management/: 404 for every other method or path, the API never called', async () => {
    const unlisted = [
      ['get', '/api/management/tenants/acme/clients/cli_acme_web'],
      ['delete', '/api/management/tenants/acme/clients/cli_acme_web'],
      ['get', '/api/management/tenants/acme/users/usr_AAAAAAAAAAAAAAAAAAAAAA/sessions'],
      ['post', '/api/management/tenants/acme/users'],
      ['get', '/api/management/tenants/acme/sessions/ses_AAAAAAAAAAAAAAAAAAAAAA'],
      ['post', '/api/management/tenants/acme/audit'],
      ['get', '/api/management/tenants/acme/providers'],
      ['get', '/api/management/tenants/acme/users/..%2F..%2Fclients'],
      ['post', '/api/management/tenants/acme/users/not-a-user/deactivate'],
      ['patch', '/api/management/tenants/acme/clients/..%2Fclients'],
      ['delete', '/api/management/tenants/acme/members/usr_%2F..'],
      ['put', '/api/management/tenants/acme/members'],
      ['get', '/api/management-auth/current'],
    ] as const;
    const mark = sw.seen.length;
    const answers = [];
    for (const [method, path] of unlisted)
      answers.push([
        method,
        path,
        (await t.console()[method](path).set('Cookie', s.cookie).set('Origin', t.consoleOrigin).send({})).status,
      ]);
    expect(answers).toEqual(unlisted.map(([method, path]) => [method, path, 404]));
    expect(upstreamSince(mark)).toEqual([]);
  });
});
