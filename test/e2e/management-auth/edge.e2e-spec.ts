import { gzipSync } from 'node:zlib';
import { consoleBasic, startTestApp, type TestApp } from '../../support/test-app';
import request from 'supertest';

describe('the edge: hosts, request ids, bodies, health', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves API paths only on the auth host and answers 404 not_found elsewhere', async () => {
    const discovery = '/t/control-plane/.well-known/openid-configuration';
    await t.auth().get(discovery).expect(200);
    const onConsole = await t.console().get(discovery).expect(404);
    expect(onConsole.body).toEqual({ error: 'not_found', error_description: expect.any(String) });
    await request(t.app.getHttpServer()).get(discovery).set('Host', 'evil.example').expect(404);
    await request(t.app.getHttpServer())
      .get(discovery)
      .set('Host', `localhost:${t.port + 1}`)
      .expect(404);
    await t.auth().get('/api/auth/current').expect(404);
  });

  it('ignores X-Forwarded-Host unless TRUST_PROXY is set', async () => {
    await request(t.app.getHttpServer())
      .get('/t/control-plane/.well-known/openid-configuration')
      .set('Host', 'evil.example')
      .set('X-Forwarded-Host', `localhost:${t.port}`)
      .expect(404);
  });

  it('answers unknown routes in the error format', async () => {
    const res = await t.auth().get('/management-auth/nothing-here').expect(404);
    expect(res.body).toEqual({ error: 'not_found', error_description: expect.any(String) });
  });

  it('echoes a valid X-Request-Id and mints one otherwise', async () => {
    const echoed = await t.auth().get('/healthz').set('X-Request-Id', 'req-123.abc').expect(200);
    expect(echoed.headers['x-request-id']).toBe('req-123.abc');
    const minted = await t.auth().get('/healthz').set('X-Request-Id', 'bad id\twith spaces').expect(200);
    expect(minted.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const none = await t.auth().get('/management-auth/current').expect(401);
    expect(none.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends no framework-identifying header', async () => {
    const res = await t.auth().get('/healthz');
    expect(res.headers['x-powered-by']).toBeUndefined();
    expect(res.headers.server).toBeUndefined();
  });

  it('refuses bodies over 16 KiB with 413 and malformed JSON with 400', async () => {
    const big = await t
      .auth()
      .post('/management-auth/revoke-session')
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ session_id: 'x'.repeat(17 * 1024) }))
      .expect(413);
    expect(big.body.error).toBe('payload_too_large');
    const bad = await t
      .auth()
      .post('/management-auth/revoke-session')
      .set('Content-Type', 'application/json')
      .send('{"session_id":')
      .expect(400);
    expect(bad.body.error).toBe('invalid_request');
  });

  it('answers every body the parsers refuse with a 4xx that quotes nothing of it', async () => {
    const refused = { error: 'invalid_request', error_description: 'The request body is not valid.' };
    const post = (path: string) => t.auth().post(path).set('Authorization', consoleBasic(t));
    // More form fields than the parser reads: no strict shape has that many.
    const manyFields = await post('/management-auth/token')
      .type('form')
      .send(Array.from({ length: 25 }, (_, i) => `f${i}=1`).join('&'));
    expect([manyFields.status, manyFields.body]).toEqual([400, refused]);
    // A body that says it is compressed and does not inflate.
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const corrupt = await post('/management-auth/revoke-session')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', encoding)
        .send('{"session_id":"ses_AAAAAAAAAAAAAAAAAAAAAA"}');
      expect([encoding, corrupt.status, corrupt.body]).toEqual([encoding, 400, refused]);
    }
    // The parser's message would quote the body back and name the parser.
    const syntax = await post('/management-auth/revoke-session')
      .set('Content-Type', 'application/json')
      .send('{"session_id": ses_AAAA}');
    expect([syntax.status, syntax.body]).toEqual([400, refused]);
    // What does inflate is read, and held to the limit once inflated.
    const gzipped = (body: unknown) =>
      post('/management-auth/revoke-session')
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'gzip')
        // As it is: superagent would serialise a Buffer as JSON.
        .serialize((b: Buffer) => b as unknown as string)
        .send(gzipSync(JSON.stringify(body)));
    const small = await gzipped({ session_id: 'ses_AAAAAAAAAAAAAAAAAAAAAA' });
    expect([small.status, small.body]).toEqual([200, { revoked: false }]);
    const large = await gzipped({ session_id: 'x'.repeat(17 * 1024) });
    expect([large.status, large.body.error]).toEqual([413, 'payload_too_large']);
  });

  it('reports liveness and readiness on every host', async () => {
    expect((await t.auth().get('/healthz').expect(200)).body).toEqual({ status: 'ok' });
    expect((await t.console().get('/readyz').expect(200)).body).toEqual({
      status: 'ready',
      checks: { postgres: 'up', redis: 'up' },
    });
  });
});

describe('a wrong host in development names the right origin', () => {
  let dev: TestApp;
  beforeAll(async () => {
    dev = await startTestApp({ NODE_ENV: 'development' });
  });
  afterAll(async () => {
    await dev.close();
  });

  it('answers 404 not_found with a hint in development, and the bare answer otherwise', async () => {
    const root = await dev.auth().get('/').expect(404);
    expect(root.body).toEqual({
      error: 'not_found',
      error_description: expect.stringContaining(`the console is ${dev.consoleOrigin}/`),
    });
    const api = await dev.console().get('/t/acme/.well-known/openid-configuration').expect(404);
    expect(api.body.error_description).toContain(`is served on ${dev.authOrigin}`);
    const page = await dev.auth().get('/api/auth/current').expect(404);
    expect(page.body.error_description).toContain(`is served on ${dev.consoleOrigin}`);
    // Production keeps the bare answer, which reveals nothing about the layout.
    const other = await startTestApp({ NODE_ENV: 'production' }, { shareWith: dev });
    try {
      expect((await other.auth().get('/').expect(404)).body).toEqual({
        error: 'not_found',
        error_description: 'No such resource.',
      });
    } finally {
      await other.close();
    }
  });
});

describe('hosts behind a trusted proxy (TRUST_PROXY=true)', () => {
  let proxied: TestApp;
  beforeAll(async () => {
    proxied = await startTestApp({ TRUST_PROXY: 'true' });
  });
  afterAll(async () => {
    await proxied.close();
  });
  const discovery = '/t/control-plane/.well-known/openid-configuration';
  const via = (forwardedHost: string): request.Test =>
    request(proxied.app.getHttpServer())
      .get(discovery)
      .set('Host', 'internal.example')
      .set('X-Forwarded-Host', forwardedHost);

  it('routes by X-Forwarded-Host instead of Host', async () => {
    await via(`localhost:${proxied.port}`).expect(200);
    await via('evil.example').expect(404);
  });

  it('routes by the right-most X-Forwarded-Host entry, the one the nearest proxy appended', async () => {
    // A proxy that appends to the header a client sent: the client's entry is never the host.
    await via(`evil.example, localhost:${proxied.port}`).expect(200);
    await via(`evil.example,localhost:${proxied.port} `).expect(200);
    await via(`localhost:${proxied.port}, evil.example`).expect(404);
    // An empty right-most entry names no host: nothing further left is taken instead.
    await via(`localhost:${proxied.port}, `).expect(404);
  });

  it('routes by Host when no X-Forwarded-Host came', async () => {
    await request(proxied.app.getHttpServer()).get(discovery).set('Host', `localhost:${proxied.port}`).expect(200);
    await request(proxied.app.getHttpServer()).get(discovery).set('Host', 'evil.example').expect(404);
  });
});
