import { addMember, createTenant } from '../../support/console-fixtures';
import { consoleSignIn } from '../../support/console-flow';
import { expectContractError, stateSnapshot } from '../../support/hostile-input';
import { rawExchange } from '../../support/raw-http';
import { loggedRequests, untilRequestLogged } from '../../support/request-log';
import { CONSOLE_SCOPES, signIn, startFlow, tokenRequest, type ManagementTokens } from '../../support/management-flow';
import { consoleBasic, startTestApp, type TestApp } from '../../support/test-app';

/**
 * Conventions at the edge (contract sections 2 and 10): responses refused before any route
 * carry X-Request-Id and are logged once like every request; token endpoints judge grant_type
 * before the rest of the body; prototype keys in a body are unknown fields, and a body nested
 * deeper than any request shape is refused before validation.
 */
describe('edge conventions', () => {
  let t: TestApp;
  const lines: string[] = [];
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off', LOG_LEVEL: 'info' }, { logLines: lines });
  });
  afterAll(async () => {
    await t.close();
  });

  describe('requests refused before routing carry X-Request-Id and are logged exactly once', () => {
    const cases: Array<[string, (id: string) => Promise<{ status: number; headers: Record<string, string> }>, number]> =
      [
        [
          'a wrong host',
          (id) => t.auth().get('/t/acme/guest').set('Host', 'evil.example').set('X-Request-Id', id),
          404,
        ],
        [
          'a path on the wrong host',
          (id) => t.console().get('/management-auth/authorize').set('X-Request-Id', id),
          404,
        ],
        [
          'a wrong content type',
          (id) =>
            t.auth().post('/t/acme/guest').set('X-Request-Id', id).set('Content-Type', 'text/plain').send('hello'),
          400,
        ],
        [
          'a body over 16 KiB',
          (id) =>
            t
              .auth()
              .post('/t/acme/guest')
              .set('X-Request-Id', id)
              .send({ client_id: 'x'.repeat(17 * 1024) }),
          413,
        ],
        ['a JSON array body', (id) => t.auth().post('/t/acme/guest').set('X-Request-Id', id).send([1]), 400],
        [
          'a routed request',
          (id) => t.auth().get('/t/control-plane/.well-known/openid-configuration').set('X-Request-Id', id),
          200,
        ],
      ];

    it.each(cases)('%s', async (label, send, status) => {
      const id = `edge-${label.replace(/\W+/g, '-')}`;
      const res = await send(id);
      expect(res.status).toBe(status);
      expect(res.headers['x-request-id']).toBe(id);
      await untilRequestLogged(lines, id);
      expect(loggedRequests(lines, id)).toEqual([{ statusCode: status }]);
    });

    it('mints an id for a refused request that brings none', async () => {
      const res = await t.auth().get('/').set('Host', 'nobody.example').expect(404);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('token endpoints check grant_type before the rest of the body', () => {
    const unsupported = [
      ['client_credentials', { grant_type: 'client_credentials', scope: 'tenant:read', client_secret: 'x' }],
      ['password', { grant_type: 'password', username: 'a@b.example', password: 'hunter2', scope: 'x' }],
      ['an unknown grant', { grant_type: 'urn:example:grant', assertion: 'x', code: 'y' }],
    ] as const;

    it.each(unsupported)('/management-auth/token: %s with extra fields is unsupported_grant_type', async (_l, body) => {
      const form = await tokenRequest(t, { ...body }).expect(400);
      expect(form.body).toEqual({ error: 'unsupported_grant_type', error_description: expect.any(String) });
      const json = await t
        .auth()
        .post('/management-auth/token')
        .set('Authorization', consoleBasic(t))
        .send(body)
        .expect(400);
      expect(json.body.error).toBe('unsupported_grant_type');
    });

    it.each(unsupported)('/t/{t}/token: %s with extra fields is unsupported_grant_type', async (_l, body) => {
      const res = await t
        .auth()
        .post('/t/acme/token')
        .type('form')
        .send({ ...body, client_id: 'cli_game' })
        .expect(400);
      expect(res.body).toEqual({ error: 'unsupported_grant_type', error_description: expect.any(String) });
    });

    it('authenticates the client first: a password grant with a wrong secret is invalid_client', async () => {
      const res = await tokenRequest(
        t,
        { grant_type: 'password', username: 'a@b.example', password: 'x' },
        `Basic ${Buffer.from('cli_console:wrong').toString('base64')}`,
      ).expect(401);
      expect(res.body.error).toBe('invalid_client');
    });

    it('still refuses unknown fields of a supported grant with invalid_request', async () => {
      const res = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'x', scope: 'y' }).expect(400);
      expect(res.body.error).toBe('invalid_request');
    });
  });

  describe('prototype keys are unknown fields', () => {
    it.each([
      [
        '__proto__ at the top',
        '{"client_id":"cli_game","browser_flow_id":"flw_ProtoKeyFlow00000001","__proto__":{"x":1}}',
      ],
      [
        'constructor at the top',
        '{"client_id":"cli_game","browser_flow_id":"flw_ProtoKeyFlow00000002","constructor":{"prototype":{"x":1}}}',
      ],
      [
        '__proto__ nested',
        '{"client_id":"cli_game","browser_flow_id":"flw_ProtoKeyFlow00000003","a":[{"b":{"__proto__":{}}}]}',
      ],
      ['__proto__ with nothing else', '{"__proto__":null}'],
    ])('JSON with %s is 400 invalid_request', async (_l, raw) => {
      const res = await t.auth().post('/t/acme/guest').set('Content-Type', 'application/json').send(raw).expect(400);
      expect(res.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    });

    it('a value (not a key) named __proto__ is fine', async () => {
      const res = await t
        .auth()
        .post('/t/acme/guest')
        .send({ client_id: 'cli_game', browser_flow_id: 'flw___proto__constructor0' });
      expect(res.body.error).not.toBe('invalid_request');
    });
  });

  describe('deeply nested bodies', () => {
    // Under the 16 KiB limit, thousands of levels deep: deep enough to exhaust the stack of a
    // recursive walk (class-transformer's) if one ever saw the body.
    const deepObject = `${'{"a":'.repeat(2500)}1${'}'.repeat(2500)}`;
    const deepArray = `{"email":${'['.repeat(7000)}${']'.repeat(7000)}}`;
    const shapes = { 'an object chain': deepObject, 'an array chain': deepArray };
    const routes = {
      'POST /t/{t}/guest': '/t/acme/guest',
      'a management write': '/management/tenants/deep-co/members',
    };
    const cases = Object.entries(routes).flatMap(([route, path]) =>
      Object.entries(shapes).map(([shape, raw]) => [route, shape, path, raw] as const),
    );
    let owner: ManagementTokens;
    beforeAll(async () => {
      await createTenant(t, 'deep-co', 'Deep Co');
      await addMember(t, 'deep-co', 'deep-owner@studio.example', 'owner');
      owner = await signIn(t, 'deep-owner@studio.example', CONSOLE_SCOPES);
    });
    // Rows a refused request could have written, the members table included.
    const state = async () =>
      `${await stateSnapshot(t)} ${JSON.stringify((await t.pg.query('SELECT count(*) FROM memberships')).rows)}`;

    it.each(cases)('%s with %s is 400 invalid_request and changes nothing', async (route, shape, path, raw) => {
      const id = `deep-${`${route} ${shape}`.replace(/\W+/g, '-')}`;
      const before = await state();
      const res = await t
        .auth()
        .post(path)
        .set('Authorization', `Bearer ${owner.access_token}`)
        .set('X-Request-Id', id)
        .set('Content-Type', 'application/json')
        .send(raw);
      expectContractError(res, 400);
      expect(res.body.error).toBe('invalid_request');
      expect(res.headers['x-request-id']).toBe(id);
      expect(await state()).toBe(before);
      // And the service goes on serving.
      await t
        .auth()
        .get('/management/tenants/deep-co/members')
        .set('Authorization', `Bearer ${owner.access_token}`)
        .expect(200);
    });

    it('still accepts the deepest shape a route takes: an object of string lists', async () => {
      await t
        .auth()
        .post('/management/tenants/deep-co/clients')
        .set('Authorization', `Bearer ${owner.access_token}`)
        .send({
          name: 'Deep Web',
          type: 'browser',
          scopes: ['openid'],
          redirect_uris: ['https://play.deep.example/auth'],
          web_origins: ['https://portal.deep.example'],
        })
        .expect(201);
    });
  });

  describe("requests Node's HTTP parser refuses answer in the contract's shape", () => {
    const host = () => new URL(t.authOrigin).host;
    const cases: Array<[string, () => string, number, string]> = [
      [
        'headers over the 16 KiB limit',
        () => `GET / HTTP/1.1\r\nHost: ${host()}\r\nX-Padding: ${'p'.repeat(17 * 1024)}\r\n\r\n`,
        431,
        'HPE_HEADER_OVERFLOW',
      ],
      ['a malformed request line', () => 'GARBAGE\r\n\r\n', 400, 'HPE_INVALID_METHOD'],
      [
        'a header line without a colon',
        () => `GET / HTTP/1.1\r\nHost: ${host()}\r\nSecretWithoutColon\r\n\r\n`,
        400,
        'HPE_INVALID_HEADER_TOKEN',
      ],
    ];

    it.each(cases)('%s', async (_label, bytes, status, parserError) => {
      const res = await rawExchange(t.port, bytes());
      expect(res.status).toBe(status);
      expect(res.statusLine).toMatch(new RegExp(`^HTTP/1\\.1 ${status} \\S`));
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['connection']).toBe('close');
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
      expect(JSON.parse(res.body)).toEqual({ error: 'invalid_request', error_description: expect.any(String) });

      const id = res.headers['x-request-id'] ?? '';
      await untilRequestLogged(lines, id);
      expect(loggedRequests(lines, id)).toEqual([{ statusCode: status }]);
      const logged = lines.filter((l) => l.includes(id)).join('');
      expect(logged).toContain(parserError);
      // Never the bytes the client sent: not the padding, not the broken lines.
      expect(logged).not.toMatch(/ppppp|GARBAGE|SecretWithoutColon/);

      await t.auth().get('/t/control-plane/.well-known/openid-configuration').expect(200);
    });
  });

  describe('an Expect header other than 100-continue', () => {
    it('is 417 in the error shape, with the request id, and logged once', async () => {
      const id = 'edge-odd-expectation';
      const res = await rawExchange(
        t.port,
        `GET /t/control-plane/.well-known/openid-configuration HTTP/1.1\r\nHost: ${new URL(t.authOrigin).host}\r\n` +
          `Expect: something-else\r\nX-Request-Id: ${id}\r\n\r\n`,
      );
      expect(res.status).toBe(417);
      expect(res.headers['x-request-id']).toBe(id);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(JSON.parse(res.body)).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
      await untilRequestLogged(lines, id);
      expect(loggedRequests(lines, id)).toEqual([{ statusCode: 417 }]);
      expect(lines.filter((l) => l.includes(id)).join('')).not.toContain('something-else');
      await t.auth().get('/t/control-plane/.well-known/openid-configuration').expect(200);
    });
  });

  describe('a large Cookie header', () => {
    // Many cookies of other scripts on the host: 12 KiB in all, under Node's 16 KiB header limit.
    const others = Array.from({ length: 48 }, (_, i) => `other_${i}=${'v'.repeat(240)}`).join('; ');

    it('still carries the flow cookie to email/start', async () => {
      const flow = await startFlow(t);
      expect(others.length).toBeGreaterThan(12 * 1024 - 512);
      await t
        .auth()
        .post('/management-auth/email/start')
        .set('Origin', t.authOrigin)
        .set('Cookie', `${others}; ${flow.cookie}`)
        .send({ flow_id: flow.flowId, email: 'many-cookies@studio.example' })
        .expect(202);
    });

    it('still carries the console session cookie', async () => {
      const s = await consoleSignIn(t, 'many-cookies-console@studio.example');
      await t.console().get('/api/auth/current').set('Cookie', `${others}; ${s.cookie}`).expect(200);
    });

    it('still refuses two cookies of the flow name', async () => {
      const flow = await startFlow(t);
      await t
        .auth()
        .post('/management-auth/email/start')
        .set('Origin', t.authOrigin)
        .set('Cookie', `${flow.cookie}; ${others}; ${flow.cookie}`)
        .send({ flow_id: flow.flowId, email: 'two-cookies@studio.example' })
        .expect(403);
    });
  });
});
