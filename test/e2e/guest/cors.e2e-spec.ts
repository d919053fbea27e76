import type { Response } from 'supertest';
import { ClientsRepository } from '../../../src/directory/clients.repository';
import { startGuestWorld, twoSiteClient, type GuestWorld } from '../../support/guest-fixtures';

// cli_game of acme: redirect URI https://play.acme.example/auth (guest-fixtures), plus the web
// origin registered here. cli_other of acme has its own origin; cli_native is native.
const GAME_REDIRECT_ORIGIN = 'https://play.acme.example';
const GAME_WEB_ORIGIN = 'https://portal.example:8443';
const OTHER_CLIENT_ORIGIN = 'https://other.acme.example';
const DISABLED_CLIENT_ORIGIN = 'https://play.acme-off.example';
const BETA_ORIGIN = 'https://play.beta.example';
const GONE_ORIGIN = 'https://play.gone.example';

const flowId = () => `flw_${Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64url')}`;
const flowCookieOf = (res: Response, id: string): string | undefined =>
  ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith(`__Host-svc_flow_${id}=`));
const cookiePair = (setCookie: string): string => setCookie.split(';')[0] as string;

/** Contract section 11 (CORS, cross-site flow cookies) and section 10 (refusals claim no flow). */
describe('CORS on the tenant API and cross-site flow cookies', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMIT_TENANT_EMAIL_SEND: '1/900', CLIENT_CACHE_TTL_MS: '1000' });
    const clients = w.t.app.get(ClientsRepository);
    await w.t.pg.query(`UPDATE clients SET web_origins = $1 WHERE id = 'cli_game'`, [[GAME_WEB_ORIGIN]]);
    await w.t.pg.query(`UPDATE clients SET redirect_uris = $1 WHERE id = 'cli_off'`, [
      [`${DISABLED_CLIENT_ORIGIN}/auth`],
    ]);
    await clients.insert({
      id: 'cli_other',
      tenantId: 'acme',
      name: 'Other',
      type: 'browser',
      enabled: true,
      scopes: ['openid'],
      redirectUris: [`${OTHER_CLIENT_ORIGIN}/cb`],
      secretDigest: null,
    });
  });
  afterAll(async () => {
    await w.close();
  });

  const preflight = (path: string, origin: string) =>
    w.t
      .auth()
      .options(path)
      .set('Origin', origin)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization, content-type');
  const post = (path: string, body: Record<string, unknown>, origin?: string, cookie?: string) => {
    let req = w.t.auth().post(path);
    if (origin !== undefined) req = req.set('Origin', origin);
    if (cookie !== undefined) req = req.set('Cookie', cookie);
    return req.send(body);
  };
  const noCors = (res: Response) => {
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  };

  describe('preflight', () => {
    it.each([
      ['the origin of a redirect URI', GAME_REDIRECT_ORIGIN],
      ['an origin given with --web-origins', GAME_WEB_ORIGIN],
      ["another browser client's origin (a preflight names no client)", OTHER_CLIENT_ORIGIN],
    ])('answers 204 for %s, echoing it with credentials, POST, GET and DELETE, the two headers', async (_, origin) => {
      const res = await preflight('/t/acme/guest/linking-intent', origin).expect(204);
      expect(res.headers['access-control-allow-origin']).toBe(origin);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      // DELETE: a player deletes its own account from the game's page (contract 13).
      expect(res.headers['access-control-allow-methods']).toBe('POST,GET,DELETE');
      expect(res.headers['access-control-allow-headers']).toBe('authorization,content-type');
      expect(res.headers.vary).toMatch(/\bOrigin\b/);
      // Not cached: a client disabled since must meet a preflight that tells the page so.
      expect(res.headers['access-control-max-age']).toBeUndefined();
    });

    it.each([
      ['an unregistered origin', '/t/acme/guest', 'https://evil.example'],
      ['a look-alike of a registered origin', '/t/acme/guest', 'https://play.acme.example.evil.example'],
      ['the right host on another scheme', '/t/acme/guest', 'http://play.acme.example'],
      ['the right host on another port', '/t/acme/guest', 'https://play.acme.example:444'],
      ['the null origin', '/t/acme/guest', 'null'],
      ['a disabled client', '/t/acme/guest', DISABLED_CLIENT_ORIGIN],
      ["another tenant's client", '/t/acme/guest', BETA_ORIGIN],
      ['a client of an inactive tenant', '/t/gone/guest', GONE_ORIGIN],
      ['an unknown tenant', '/t/nobody/guest', GAME_REDIRECT_ORIGIN],
    ])('gives no CORS headers to %s', async (_, path, origin) => {
      const res = await preflight(path, origin);
      expect(res.status).not.toBe(204);
      noCors(res);
    });
  });

  it('stops answering for a client disabled since, once the cached lookup expires (CLIENT_CACHE_TTL_MS, like the client row)', async () => {
    const before = await preflight('/t/beta/guest', BETA_ORIGIN).expect(204);
    expect(before.headers['access-control-allow-origin']).toBe(BETA_ORIGIN);
    await w.t.pg.query(`UPDATE clients SET enabled = false WHERE id = 'cli_beta'`);
    // Cached: the answer does not cost a database round trip per request.
    await preflight('/t/beta/guest', BETA_ORIGIN).expect(204);
    // The suite's lifetime is CLIENT_CACHE_TTL_MS=1000 (5 s by default); waiting past it is the point.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    noCors(await preflight('/t/beta/guest', BETA_ORIGIN));
    await post('/t/beta/guest', { client_id: 'cli_beta', browser_flow_id: flowId() }, BETA_ORIGIN).expect(403);
  });

  describe('requests', () => {
    it('echoes a web origin of the named client with credentials and sets a partitioned SameSite=None flow cookie', async () => {
      const id = flowId();
      const res = await post('/t/acme/guest', { client_id: 'cli_game', browser_flow_id: id }, GAME_WEB_ORIGIN).expect(
        201,
      );
      expect(res.headers['access-control-allow-origin']).toBe(GAME_WEB_ORIGIN);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(res.headers.vary).toMatch(/\bOrigin\b/);
      // The SDK on the page reads Retry-After of a 429 or 503 (contract 13), the game the request id.
      expect(res.headers['access-control-expose-headers']).toBe('Retry-After,X-Request-Id');
      const cookie = flowCookieOf(res, id) as string;
      expect(cookie).toMatch(/; Max-Age=3600; Path=\/; Expires=[^;]+; HttpOnly; Secure; Partitioned; SameSite=None$/);
      // The flow goes on from the same page with that cookie.
      const intent = await post(
        '/t/acme/guest/linking-intent',
        { client_id: 'cli_game', browser_flow_id: id },
        GAME_WEB_ORIGIN,
        cookiePair(cookie),
      )
        .set('Authorization', `Bearer ${res.body.access_token}`)
        .expect(201);
      expect(intent.headers['access-control-allow-origin']).toBe(GAME_WEB_ORIGIN);
    });

    it('sets SameSite=Lax, unpartitioned, and no CORS headers without an Origin (servers, native shells)', async () => {
      const id = flowId();
      const res = await post('/t/acme/guest', { client_id: 'cli_game', browser_flow_id: id }).expect(201);
      noCors(res);
      expect(res.headers.vary).toMatch(/\bOrigin\b/);
      const cookie = flowCookieOf(res, id) as string;
      expect(cookie).toMatch(/; HttpOnly; Secure; SameSite=Lax$/);
      expect(cookie).not.toMatch(/Partitioned/);
    });

    it.each([
      ['an unregistered origin', 'https://evil.example', 'cli_game'],
      ['the null origin', 'null', 'cli_game'],
      ["another client's web origin", OTHER_CLIENT_ORIGIN, 'cli_game'],
      ['a native client (no web origins)', GAME_REDIRECT_ORIGIN, 'cli_native'],
      ['a disabled client', DISABLED_CLIENT_ORIGIN, 'cli_off'],
    ])('refuses a POST from %s with 403 forbidden, before anything is written', async (_, origin, clientId) => {
      const id = flowId();
      const res = await post('/t/acme/guest', { client_id: clientId, browser_flow_id: id }, origin).expect(403);
      expect(res.body.error).toBe('forbidden');
      noCors(res);
      expect(flowCookieOf(res, id)).toBeUndefined();
      expect(await w.t.redis.exists(`gf:{${id}}`)).toBe(0);
    });

    it.each([
      ['email/start', { email: 'x@example.com' }],
      ['email/verify', { email: 'x@example.com', code: '123456' }],
      ['sign-in', { proof_id: 'prf_aaaaaaaaaaaaaaaaaaaa' }],
      ['chat/start', {}],
      ['guest/upgrade', { proof_id: 'prf_aaaaaaaaaaaaaaaaaaaa' }],
    ])('refuses a cross-site POST %s naming a client the origin does not belong to', async (path, extra) => {
      const res = await post(
        `/t/acme/${path}`,
        { client_id: 'cli_game', browser_flow_id: flowId(), ...extra },
        OTHER_CLIENT_ORIGIN,
      ).expect(403);
      expect(res.body.error).toBe('forbidden');
    });

    it('judges form-encoded token and revoke bodies by their client_id, and refuses a body naming none', async () => {
      const guest = await post('/t/acme/guest', { client_id: 'cli_game', browser_flow_id: flowId() }).expect(201);
      const refreshed = await w.t
        .auth()
        .post('/t/acme/token')
        .set('Origin', GAME_REDIRECT_ORIGIN)
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: guest.body.refresh_token, client_id: 'cli_game' })
        .expect(200);
      expect(refreshed.headers['access-control-allow-origin']).toBe(GAME_REDIRECT_ORIGIN);
      const foreign = await w.t
        .auth()
        .post('/t/acme/revoke')
        .set('Origin', GAME_REDIRECT_ORIGIN)
        .type('form')
        .send({ token: refreshed.body.refresh_token, client_id: 'cli_other' })
        .expect(403);
      noCors(foreign);
      await w.t
        .auth()
        .post('/t/acme/revoke')
        .set('Origin', GAME_REDIRECT_ORIGIN)
        .type('form')
        .send({ token: refreshed.body.refresh_token })
        .expect(403);
    });

    it('answers a GET from a registered origin with CORS headers and one from another origin without', async () => {
      const q = `client_id=cli_game&browser_flow_id=${flowId()}`;
      const ok = await w.t.auth().get(`/t/acme/chat/start?${q}`).set('Origin', GAME_REDIRECT_ORIGIN).expect(302);
      expect(ok.headers['access-control-allow-origin']).toBe(GAME_REDIRECT_ORIGIN);
      const other = await w.t.auth().get(`/t/acme/chat/start?${q}x`).set('Origin', 'https://evil.example').expect(302);
      noCors(other);
    });
  });

  describe('discovery and JWKS', () => {
    it.each([
      '/t/acme/.well-known/openid-configuration',
      '/t/acme/.well-known/jwks.json',
      '/t/control-plane/.well-known/openid-configuration',
      '/t/control-plane/.well-known/jwks.json',
    ])('%s is readable from any origin, without credentials', async (path) => {
      for (const origin of ['https://anyone.example', GAME_REDIRECT_ORIGIN]) {
        const res = await w.t.auth().get(path).set('Origin', origin).expect(200);
        expect(res.headers['access-control-allow-origin']).toBe('*');
        expect(res.headers['access-control-allow-credentials']).toBeUndefined();
      }
    });
  });

  /** A browser follows a page's `authorize_url`: the bounce, consent as `user`, the callback. */
  const followPageLink = async (authorizeUrl: string, user: { id: string; username: string; email?: string }) => {
    const link = new URL(authorizeUrl);
    const bounce = await w.t
      .auth()
      .get(link.pathname + link.search)
      .expect(302);
    const binding = cookiePair(([] as string[]).concat(bounce.headers['set-cookie'] ?? [])[0] as string);
    const state = new URL(bounce.headers.location as string).searchParams.get('state') as string;
    const code = w.chat.registerUser(user, bounce.headers.location);
    return w.t.auth().get(`/t/acme/chat/callback?code=${code}&state=${state}`).set('Cookie', binding).expect(302);
  };

  describe('POST chat/start for pages (contract section 11)', () => {
    it('answers {authorize_url} for a flow under way: a bounce that binds the browser following it, since the page’s cookie stays in its partition', async () => {
      const id = flowId();
      const guest = await post('/t/acme/guest', { client_id: 'cli_game', browser_flow_id: id }, GAME_WEB_ORIGIN).expect(
        201,
      );
      const cookie = cookiePair(flowCookieOf(guest, id) as string);
      const res = await post(
        '/t/acme/chat/start',
        { client_id: 'cli_game', browser_flow_id: id },
        GAME_WEB_ORIGIN,
        cookie,
      )
        .set('Authorization', `Bearer ${guest.body.access_token}`)
        .expect(200);
      expect(res.body).toEqual({ authorize_url: expect.stringContaining(`${w.t.authOrigin}/t/acme/chat/go?handle=`) });
      expect(res.headers['access-control-allow-origin']).toBe(GAME_WEB_ORIGIN);
      expect(res.headers['cache-control']).toBe('no-store');
      // Following the link is a top-level navigation to the auth site, where the page's partitioned
      // cookie is not sent: the bounce sets a first-party cookie of its own (issue 22, finding 2).
      const back = await followPageLink(res.body.authorize_url as string, {
        id: '7001',
        username: 'corsy',
        email: 'corsy@example.com',
      });
      const proof = new URL(back.headers.location as string);
      expect(proof.origin).toBe(GAME_REDIRECT_ORIGIN);
      const proofId = proof.searchParams.get('proof_id') as string;
      expect(proofId).toMatch(/^prf_/);
      // The proof stays bound to the page's flow cookie: without it, nothing.
      await post('/t/acme/guest/upgrade', { client_id: 'cli_game', browser_flow_id: id, proof_id: proofId })
        .set('Authorization', `Bearer ${guest.body.access_token}`)
        .expect(403);
    });

    it('returns to the redirect URI on the page’s origin when the client registered several', async () => {
      const { clientId, staging, game } = await twoSiteClient(w);
      for (const [origin, user] of [
        [game, '7101'],
        [staging, '7102'],
      ] as const) {
        const id = flowId();
        const body = { client_id: clientId, browser_flow_id: id };
        const guest = await post('/t/acme/guest', body, origin).expect(201);
        const cookie = cookiePair(flowCookieOf(guest, id) as string);
        const start = await post('/t/acme/chat/start', body, origin, cookie).expect(200);
        const back = await followPageLink(start.body.authorize_url as string, { id: user, username: `two-${user}` });
        expect(new URL(back.headers.location as string).origin).toBe(origin);
      }
    });

    it('needs the flow cookie of a flow under way', async () => {
      const id = flowId();
      await post('/t/acme/chat/start', { client_id: 'cli_game', browser_flow_id: id }, GAME_WEB_ORIGIN).expect(403);
      const guest = await post('/t/acme/guest', { client_id: 'cli_game', browser_flow_id: id }).expect(201);
      expect(guest.status).toBe(201);
      await post('/t/acme/chat/start', { client_id: 'cli_game', browser_flow_id: id }).expect(403);
    });
  });

  describe('a refused request claims no flow and sets no cookie (contract section 10)', () => {
    const retryStartsAfresh = async (id: string) => {
      const retry = await post('/t/acme/guest', { client_id: 'cli_game', browser_flow_id: id }).expect(201);
      expect(flowCookieOf(retry, id)).toBeDefined();
    };

    it('400: a linking intent with a bad upgrade proof on a new flow', async () => {
      const guest = await post('/t/acme/guest', { client_id: 'cli_game', browser_flow_id: flowId() }).expect(201);
      const id = flowId();
      const res = await post('/t/acme/guest/linking-intent', {
        client_id: 'cli_game',
        browser_flow_id: id,
        upgrade_proof_id: 'prf_aaaaaaaaaaaaaaaaaaaa',
      })
        .set('Authorization', `Bearer ${guest.body.access_token}`)
        .expect(400);
      expect(flowCookieOf(res, id)).toBeUndefined();
      expect(await w.t.redis.exists(`gf:{${id}}`)).toBe(0);
      await retryStartsAfresh(id);
    });

    it('503: email/start whose mail cannot be sent', async () => {
      const id = flowId();
      w.t.smtp.setFailing(true);
      try {
        const res = await post('/t/acme/email/start', {
          client_id: 'cli_game',
          browser_flow_id: id,
          email: 'mailfail@example.com',
        }).expect(503);
        expect(flowCookieOf(res, id)).toBeUndefined();
      } finally {
        w.t.smtp.setFailing(false);
      }
      expect(await w.t.redis.exists(`gf:{${id}}`)).toBe(0);
      await retryStartsAfresh(id);
    });

    it('429: email/start over the send budget', async () => {
      const body = (id: string) => ({ client_id: 'cli_game', browser_flow_id: id, email: 'budget@example.com' });
      await post('/t/acme/email/start', body(flowId())).expect(202);
      const id = flowId();
      const res = await post('/t/acme/email/start', body(id)).expect(429);
      expect(flowCookieOf(res, id)).toBeUndefined();
      expect(await w.t.redis.exists(`gf:{${id}}`)).toBe(0);
      await retryStartsAfresh(id);
    });

    it('400 and 403 before the flow: an unknown client, a foreign origin', async () => {
      const id = flowId();
      await post('/t/acme/guest', { client_id: 'cli_nope', browser_flow_id: id }).expect(400);
      await post('/t/acme/guest', { client_id: 'cli_game', browser_flow_id: id }, 'https://evil.example').expect(403);
      expect(await w.t.redis.exists(`gf:{${id}}`)).toBe(0);
      await retryStartsAfresh(id);
    });
  });
});
