import {
  CONSOLE_COOKIE,
  consoleSignIn,
  expiresConsoleCookie,
  readConsoleRecord,
  setCookieLine,
  type ConsoleSession,
} from '../../support/console-flow';
import { addMember, createClient, createTenant } from '../../support/console-fixtures';
import { UpstreamSwitch } from '../../support/console-upstream';
import { startTestApp, type TestApp } from '../../support/test-app';

describe('console BFF proxy of fixed management paths (spec 4.1, contract section 4)', () => {
  let sw: UpstreamSwitch;
  let t: TestApp;
  let s: ConsoleSession;
  let accessToken: string;
  const get = (path: string, cookie: string = s.cookie) => t.console().get(path).set('Cookie', cookie);

  beforeAll(async () => {
    // Every call of the BFF to the API passes the switch: AUTH_ORIGIN names it.
    sw = await UpstreamSwitch.start();
    t = await startTestApp({ RATE_LIMITS: 'off', AUTH_ORIGIN: sw.origin });
    sw.target = t.port;
  });
  afterAll(async () => {
    await t.close();
    await sw.stop();
  });

  it('answers 503 while the API cannot be discovered, and discovers it once it is back', async () => {
    sw.mode = 'reset';
    const down = await t.console().post('/api/auth/start').set('Origin', t.consoleOrigin).expect(503);
    expect(down.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
    expect(sw.requestsTo('/t/control-plane/.well-known/openid-configuration').length).toBeGreaterThan(0);
    sw.mode = 'pass';
    await t.console().post('/api/auth/start').set('Origin', t.consoleOrigin).expect(303);
  });

  describe('with a signed-in developer', () => {
    beforeAll(async () => {
      await createTenant(t, 'acme', 'Acme');
      await createTenant(t, 'rival', 'Rival');
      await addMember(t, 'acme', 'proxy@studio.example', 'admin');
      await addMember(t, 'rival', 'rival@studio.example', 'owner');
      await createClient(t, 'acme', { id: 'cli_acme_web', name: 'Acme Web' });
      s = await consoleSignIn(t, 'proxy@studio.example');
      accessToken = (await readConsoleRecord(t, s))?.accessToken as string;
    });

    it.each([
      ['/api/management/tenants', '/management/tenants'],
      ['/api/management/tenants/acme', '/management/tenants/acme'],
      ['/api/management/tenants/acme/clients', '/management/tenants/acme/clients'],
    ])('maps %s to %s and passes the answer through, no-store', async (path, upstreamPath) => {
      const mark = sw.seen.length;
      const res = await get(path).expect(200);
      expect(sw.seen.slice(mark).map((r) => `${r.method} ${r.path}`)).toEqual([`GET ${upstreamPath}`]);
      const direct = await t.auth().get(upstreamPath).set('Authorization', `Bearer ${accessToken}`).expect(200);
      expect(res.body).toEqual(direct.body);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it('passes the membership rule through: 403 forbidden for a tenant of others', async () => {
      const res = await get('/api/management/tenants/rival/clients').expect(403);
      expect(res.body).toEqual({ error: 'forbidden', error_description: 'No access to this tenant.' });
      await get('/api/auth/current').expect(200);
    });

    it("builds the upstream request fresh: the server's bearer, never the browser's Cookie or Authorization", async () => {
      const mark = sw.seen.length;
      const res = await get('/api/management/tenants')
        .set('Authorization', 'Bearer browser-supplied-token')
        .set('X-Request-Id', 'req-console-proxy-1')
        .set('X-Forwarded-For', '203.0.113.7')
        .set('X-Custom', 'leak')
        .expect(200);
      const upstream = sw.seen.slice(mark).filter((r) => r.path === '/management/tenants');
      expect(upstream).toHaveLength(1);
      const headers = upstream[0]?.headers ?? {};
      expect(headers.authorization).toBe(`Bearer ${accessToken}`);
      expect(headers.cookie).toBeUndefined();
      expect(headers.origin).toBeUndefined();
      expect(headers['x-forwarded-for']).toBeUndefined();
      expect(headers['x-custom']).toBeUndefined();
      expect(headers['x-request-id']).toBe('req-console-proxy-1');
      expect(res.headers['x-request-id']).toBe('req-console-proxy-1');
    });

    it('relays only Content-Type, WWW-Authenticate and X-Request-Id of the upstream answer; never its Set-Cookie', async () => {
      sw.extraResponseHeaders = {
        'Set-Cookie': 'upstream_session=stolen; Path=/',
        'WWW-Authenticate': 'Bearer realm="svc"',
        'X-Upstream-Internal': 'secret',
        'Access-Control-Allow-Origin': '*',
        'Server-Timing': 'db;dur=3',
        'X-Powered-By': 'upstream',
        // Lower case, so it replaces the API's own (the echo of the BFF's id) in the switch's answer.
        'x-request-id': 'req-named-by-the-api',
      };
      try {
        const res = await get('/api/management/tenants/acme').expect(200);
        expect(res.headers['set-cookie']).toBeUndefined();
        expect(res.headers['www-authenticate']).toBe('Bearer realm="svc"');
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(res.headers['x-request-id']).toBe('req-named-by-the-api');
        for (const name of ['x-upstream-internal', 'access-control-allow-origin', 'server-timing', 'x-powered-by'])
          expect(res.headers[name]).toBeUndefined();
      } finally {
        sw.extraResponseHeaders = {};
      }
    });

    it('never shows a token or the client secret in a proxied body or header', async () => {
      const record = await readConsoleRecord(t, s);
      for (const path of [
        '/api/management/tenants',
        '/api/management/tenants/acme',
        '/api/management/tenants/acme/clients',
        '/api/auth/current',
      ]) {
        const res = await get(path).expect(200);
        const seen = `${res.text}${JSON.stringify(res.headers)}`;
        for (const secret of [
          record?.accessToken,
          record?.refreshToken,
          record?.sessionId,
          t.config.consoleClientSecret,
        ])
          expect(seen).not.toContain(secret);
      }
    });

    it.each([
      '/api/management/',
      '/api/management/users',
      '/api/management/tenants/acme/providers',
      '/api/management/tenants/acme/clients/cli_acme_web',
      '/api/management/tenants/acme%2Fclients',
      '/api/management/tenants/%2e%2e',
      '/api/management/tenants/..%2F..%2Fmanagement-auth%2Fcurrent',
      '/api/management/tenants/ACME',
      '/api/management/tenants/acme%00',
      '/api/management/management-auth/current',
    ])('answers 404 not_found for the unlisted path %s, without calling the API', async (path) => {
      const mark = sw.seen.length;
      const res = await get(path).expect(404);
      expect(res.body).toEqual({ error: 'not_found', error_description: expect.any(String) });
      expect(sw.seen.slice(mark).filter((r) => r.path.startsWith('/management'))).toEqual([]);
    });

    it.each(['post', 'put', 'patch', 'delete'] as const)(
      'has no %s operation on the tenant list or a tenant, even with the exact Origin: 404 (contract 15 adds only its own)',
      async (method) => {
        for (const path of ['/api/management/tenants', '/api/management/tenants/acme']) {
          const res = await t
            .console()
            [method](path)
            .set('Cookie', s.cookie)
            .set('Origin', t.consoleOrigin)
            .send({})
            .expect(404);
          expect(res.body.error).toBe('not_found');
        }
      },
    );

    it('answers 401 without a console session, without calling the API', async () => {
      const mark = sw.seen.length;
      const res = await t
        .console()
        .get('/api/management/tenants')
        .set('Authorization', `Bearer ${accessToken}`)
        .expect(401);
      expect(res.body.error).toBe('unauthorized');
      expect(sw.seen.length).toBe(mark);
    });

    it.each([['fail-503'], ['reset']] as const)(
      'keeps the session when the API fails (%s): 503 temporarily_unavailable, cookie kept',
      async (mode) => {
        sw.mode = mode;
        try {
          for (const path of ['/api/management/tenants', '/api/management/tenants/acme/clients', '/api/auth/current']) {
            const res = await get(path).expect(503);
            expect(res.body).toEqual({ error: 'temporarily_unavailable', error_description: expect.any(String) });
            expect(setCookieLine(res, CONSOLE_COOKIE)).toBeUndefined();
          }
          const signOut = await t
            .console()
            .post('/api/auth/sign-out')
            .set('Cookie', s.cookie)
            .set('Origin', t.consoleOrigin)
            .expect(503);
          expect(expiresConsoleCookie(signOut)).toBe(false);
        } finally {
          sw.mode = 'pass';
        }
        expect(await t.redis.exists(s.recordKey)).toBe(1);
        await get('/api/management/tenants').expect(200);
      },
    );
  });
});
