import { authorizeQuery, callbackUri, pkcePair } from '../../support/management-flow';
import { startTestApp, type TestApp } from '../../support/test-app';

describe('GET /management-auth/authorize', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const pkce = pkcePair();

  it('serves the hosted form with a strict CSP, no framing, and the host-only flow cookie', async () => {
    const res = await t
      .auth()
      .get('/management-auth/authorize')
      .query(authorizeQuery(t, pkce, 'st1'))
      .expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const csp = res.headers['content-security-policy'] as string;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['x-powered-by']).toBeUndefined();
    expect(res.headers['cache-control']).toBe('no-store');
    const cookie = ([] as string[])
      .concat(res.headers['set-cookie'] ?? [])
      .find((c) => c.startsWith('__Host-svc_control_flow='));
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/; Path=\/;/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/Max-Age=3600/);
    expect(cookie).not.toMatch(/Domain=/i);
    expect(res.text).toMatch(/data-flow-id="flw_[A-Za-z0-9_-]{16,64}"/);
    expect(res.text).toContain('<label for="email">');
    expect(res.text).not.toMatch(/<script>(?!<)/);
  });

  it('serves the form script and stylesheet from its own origin', async () => {
    const js = await t.auth().get('/management-auth/assets/sign-in.js').expect(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
    await t.auth().get('/management-auth/assets/sign-in.css').expect(200);
    await t.auth().get('/management-auth/assets/..%2Fsign-in.service.ts').expect(404);
  });

  it.each([
    ['an unknown client_id', { client_id: 'cli_other' }],
    ['a missing client_id', { client_id: undefined }],
    ['another redirect_uri', { redirect_uri: 'http://127.0.0.1:1/api/auth/callback' }],
    ['a redirect_uri with extra query', { redirect_uri: 'CALLBACK?x=1' }],
    ['a missing redirect_uri', { redirect_uri: undefined }],
  ])('answers %s with a 400 page and never redirects', async (_name, extra) => {
    const q = { ...extra } as Record<string, string | undefined>;
    if (q.redirect_uri === 'CALLBACK?x=1') q.redirect_uri = `${callbackUri(t)}?x=1`;
    const res = await t
      .auth()
      .get('/management-auth/authorize')
      .query(authorizeQuery(t, pkce, 'st', q));
    expect(res.status).toBe(400);
    expect(res.headers.location).toBeUndefined();
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it.each([
    ['an unknown scope', { scope: 'tenant:admin' }, 'invalid_scope'],
    ['a repeated scope', { scope: 'tenant:read tenant:read' }, 'invalid_scope'],
    ['an empty scope', { scope: '' }, 'invalid_scope'],
    ['code_challenge_method plain', { code_challenge_method: 'plain' }, 'invalid_request'],
    ['a missing code_challenge_method', { code_challenge_method: undefined }, 'invalid_request'],
    ['a missing code_challenge', { code_challenge: undefined }, 'invalid_request'],
    ['a malformed code_challenge', { code_challenge: 'short' }, 'invalid_request'],
    ['response_type token', { response_type: 'token' }, 'unsupported_response_type'],
  ])('redirects %s to the callback with error, state and iss', async (_name, extra, error) => {
    const res = await t
      .auth()
      .get('/management-auth/authorize')
      .query(authorizeQuery(t, pkce, 'st-42', extra))
      .expect(303);
    const url = new URL(res.headers.location as string);
    expect(`${url.origin}${url.pathname}`).toBe(callbackUri(t));
    expect(url.searchParams.get('error')).toBe(error);
    expect(url.searchParams.get('state')).toBe('st-42');
    expect(url.searchParams.get('iss')).toBe(`${t.authOrigin}/t/control-plane`);
    expect(url.searchParams.get('code')).toBeNull();
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('redirects a missing state with error and without state', async () => {
    const res = await t
      .auth()
      .get('/management-auth/authorize')
      .query(authorizeQuery(t, pkce, 'x', { state: undefined }))
      .expect(303);
    const url = new URL(res.headers.location as string);
    expect(url.searchParams.get('error')).toBe('invalid_request');
    expect(url.searchParams.has('state')).toBe(false);
  });

  it('refuses a repeated parameter', async () => {
    const q = new URLSearchParams(authorizeQuery(t, pkce, 'st'));
    q.append('scope', 'tenant:read');
    const res = await t.auth().get(`/management-auth/authorize?${q.toString()}`).expect(303);
    expect(new URL(res.headers.location as string).searchParams.get('error')).toBe('invalid_request');
  });
});
