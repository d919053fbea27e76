import { createHash } from 'node:crypto';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { GuestApiError } from '../../../sdk/src/guest-client';
import { ClientsRepository } from '../../../src/directory/clients.repository';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

// @redis-cluster user-sessions:ADD rate-limiter:TAKE_ALL

describe('POST /t/{tenantId}/guest', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await w.close();
  });

  const flowId = () => `flw_${Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64url')}`;
  const post = (tenant: string, body: Record<string, unknown>, cookie?: string) => {
    const req = w.t.auth().post(`/t/${tenant}/guest`);
    return (cookie ? req.set('Cookie', cookie) : req).send(body);
  };

  it('answers 201 with every field, a refresh token for offline_access and an ID token for openid', async () => {
    const res = await post('acme', { client_id: 'cli_game', browser_flow_id: flowId() }).expect(201);
    expect(Object.keys(res.body).sort()).toEqual([
      'access_token',
      'expires_in',
      'id_token',
      'refresh_token',
      'scope',
      'session_id',
      'token_type',
      'upgrade_proof',
      'user_id',
    ]);
    expect(res.body).toMatchObject({
      user_id: expect.stringMatching(/^usr_/),
      session_id: expect.stringMatching(/^ses_/),
      token_type: 'Bearer',
      expires_in: 300,
      scope: 'openid offline_access',
      upgrade_proof: { proof_id: expect.stringMatching(/^prf_/), expires_in: 300 },
    });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('gives a client without offline_access or openid neither refresh token nor ID token, and adds no scope', async () => {
    const res = await post('acme', { client_id: 'cli_native', browser_flow_id: flowId() }).expect(201);
    expect(res.body.refresh_token).toBeUndefined();
    expect(res.body.id_token).toBeUndefined();
    expect(res.body.scope).toBe('');
  });

  it('signs with ES256 under the tenant issuer, the client as audience, verifiable through the tenant JWKS', async () => {
    const res = await post('acme', { client_id: 'cli_game', browser_flow_id: flowId() }).expect(201);
    const discovery = (await w.t.auth().get('/t/acme/.well-known/openid-configuration').expect(200)).body;
    expect(discovery.issuer).toBe(`${w.t.authOrigin}/t/acme`);
    const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri as string));
    const { payload, protectedHeader } = await jwtVerify(res.body.access_token, jwks, {
      issuer: discovery.issuer,
      audience: 'cli_game',
      algorithms: ['ES256'],
    });
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt' });
    expect(payload).toMatchObject({
      sub: res.body.user_id,
      sid: res.body.session_id,
      token_use: 'access',
      client_id: 'cli_game',
      scope: 'openid offline_access',
    });
    const id = await jwtVerify(res.body.id_token, jwks, { issuer: discovery.issuer, audience: 'cli_game' });
    expect(id.payload.sub).toBe(res.body.user_id);
    const keys = (await w.t.auth().get('/t/acme/.well-known/jwks.json').expect(200)).body.keys as Array<
      Record<string, unknown>
    >;
    for (const k of keys) {
      expect(k).toMatchObject({ kty: 'EC', alg: 'ES256' });
      expect(k).not.toHaveProperty('d');
    }
    expect(decodeProtectedHeader(res.body.access_token).kid).toBe('test-es-1');
  });

  it('sets the host-only flow cookie when a flow starts, stores only its hash, and refuses the flow without it', async () => {
    const id = flowId();
    const res = await post('acme', { client_id: 'cli_game', browser_flow_id: id }).expect(201);
    const cookie = ([] as string[])
      .concat(res.headers['set-cookie'] ?? [])
      .find((c) => c.startsWith(`__Host-svc_flow_${id}=`)) as string;
    expect(cookie).toMatch(/; Path=\/; /);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/Secure/);
    expect(cookie).toMatch(/Max-Age=3600/);
    expect(cookie).not.toMatch(/Domain/i);
    const value = cookie.split(';')[0]?.split('=')[1] as string;
    // The flow's record holds the cookie's SHA-256, never the cookie.
    const record = await w.t.redis.get(`gf:{${id}}`);
    expect(record).not.toContain(value);
    expect(JSON.parse(record ?? 'null')).toEqual({
      tenantId: 'acme',
      cookieHash: createHash('sha256').update(value).digest('base64url'),
    });
    const again = await post('acme', { client_id: 'cli_game', browser_flow_id: id }).expect(403);
    expect(again.body.error).toBe('forbidden');
    const withCookie = await post(
      'acme',
      { client_id: 'cli_game', browser_flow_id: id },
      `__Host-svc_flow_${id}=${value}`,
    ).expect(201);
    // No second flow cookie for a flow under way (a browser client's refresh cookie is set: issue 22 finding 7).
    expect(
      ([] as string[]).concat(withCookie.headers['set-cookie'] ?? []).filter((c) => c.startsWith('__Host-svc_flow_')),
    ).toEqual([]);
    await post('acme', { client_id: 'cli_game', browser_flow_id: id }, `__Host-svc_flow_${id}=${value}x`).expect(403);
    // A flow belongs to its tenant.
    await post('beta', { client_id: 'cli_beta', browser_flow_id: id }, `__Host-svc_flow_${id}=${value}`).expect(403);
  });

  it('never takes a user id from the client', async () => {
    const res = await post('acme', {
      client_id: 'cli_game',
      browser_flow_id: flowId(),
      user_id: 'usr_AAAAAAAAAAAAAAAAAAAAAA',
    }).expect(400);
    expect(res.body.error).toBe('invalid_request');
    const { rows } = await w.t.pg.query(`SELECT count(*)::int AS n FROM users WHERE id = 'usr_AAAAAAAAAAAAAAAAAAAAAA'`);
    expect(rows[0].n).toBe(0);
  });

  it.each([
    ['an unknown tenant', 'nope', 'cli_game', 404, 'tenant_not_found'],
    ['an inactive tenant', 'gone', 'cli_gone', 404, 'tenant_not_found'],
    ['the control plane', 'control-plane', 'cli_console', 404, 'tenant_not_found'],
    ['a disabled client', 'acme', 'cli_off', 400, 'invalid_client'],
    ['an unknown client', 'acme', 'cli_nope', 400, 'invalid_client'],
    ['another tenant’s client', 'acme', 'cli_beta', 400, 'invalid_client'],
  ])('refuses %s', async (_n, tenant, client, status, error) => {
    const before = (await w.t.pg.query('SELECT count(*)::int AS n FROM users')).rows[0].n;
    const res = await post(tenant, { client_id: client, browser_flow_id: flowId() }).expect(status);
    expect(res.body.error).toBe(error);
    expect((await w.t.pg.query('SELECT count(*)::int AS n FROM users')).rows[0].n).toBe(before);
  });

  describe('with the client row read moments before (guest creation reads it from a 5-second cache)', () => {
    const clientId = 'cli_changing';
    beforeEach(async () => {
      await w.t.pg.query('DELETE FROM sessions WHERE client_id = $1', [clientId]);
      await w.t.pg.query('DELETE FROM clients WHERE id = $1', [clientId]);
      await w.t.app.get(ClientsRepository).insert({
        id: clientId,
        tenantId: 'acme',
        name: clientId,
        type: 'browser',
        enabled: true,
        scopes: ['openid', 'offline_access'],
        redirectUris: ['https://play.acme.example/auth'],
        secretDigest: null,
      });
      // The first guest puts the row in the cache.
      expect(
        (await post('acme', { client_id: clientId, browser_flow_id: flowId() }).expect(201)).body.refresh_token,
      ).toBeDefined();
    });
    const users = async () => (await w.t.pg.query('SELECT count(*)::int AS n FROM users')).rows[0].n as number;

    it('refuses a client disabled since at once, writing no user and claiming no flow', async () => {
      await w.t.pg.query('UPDATE clients SET enabled = false WHERE id = $1', [clientId]);
      const before = await users();
      const id = flowId();
      const res = await post('acme', { client_id: clientId, browser_flow_id: id }).expect(400);
      expect(res.body.error).toBe('invalid_client');
      expect(res.headers['set-cookie']).toBeUndefined();
      expect(await users()).toBe(before);
      expect((await w.t.redisKeys()).filter((k) => k.includes(id))).toEqual([]);
    });

    it('refuses to refresh a session once its client lost offline_access (400 unauthorized_client)', async () => {
      const created = await post('acme', { client_id: clientId, browser_flow_id: flowId() }).expect(201);
      // Contract 10: without offline_access nothing refreshes; a session begun before the change
      // must not outlive its access token through the refresh token it was given then.
      await w.t.pg.query(`UPDATE clients SET scopes = '{openid}' WHERE id = $1`, [clientId]);
      const res = await w.t
        .auth()
        .post('/t/acme/token')
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: created.body.refresh_token, client_id: clientId });
      expect([res.status, res.body.error, res.body.access_token]).toEqual([400, 'unauthorized_client', undefined]);
    });

    it('issues what the row allows now when its scopes changed since', async () => {
      await w.t.pg.query(`UPDATE clients SET scopes = '{openid}' WHERE id = $1`, [clientId]);
      const res = await post('acme', { client_id: clientId, browser_flow_id: flowId() }).expect(201);
      expect(res.body.scope).toBe('openid');
      expect(res.body.refresh_token).toBeUndefined();
      expect(res.body.id_token).toBeDefined();
    });
  });

  it.each([
    ['a malformed flow id', { client_id: 'cli_game', browser_flow_id: 'flw_short' }],
    // Contract 2: a browser_flow_id matches ^flw_[A-Za-z0-9_-]{16,64}$.
    ['a flow id one character short', { client_id: 'cli_game', browser_flow_id: `flw_${'A'.repeat(15)}` }],
    ['a flow id one character long', { client_id: 'cli_game', browser_flow_id: `flw_${'A'.repeat(65)}` }],
    ['a flow id with another prefix', { client_id: 'cli_game', browser_flow_id: `ses_${'A'.repeat(22)}` }],
    ['a missing client id', { browser_flow_id: 'flw_AAAAAAAAAAAAAAAAAAAA' }],
    ['an unknown field', { client_id: 'cli_game', browser_flow_id: 'flw_AAAAAAAAAAAAAAAAAAAA', scope: 'admin' }],
  ])('refuses %s with 400 invalid_request', async (_n, body) => {
    expect((await post('acme', body).expect(400)).body.error).toBe('invalid_request');
  });

  it('accepts flow ids of 16 and of 64 characters after the prefix (contract 2)', async () => {
    for (const length of [16, 64]) {
      const id = `flw_${flowId().slice(4, 8)}${'-_Az09'.repeat(11)}`.slice(0, 4 + length);
      expect(id).toHaveLength(4 + length);
      await post('acme', { client_id: 'cli_game', browser_flow_id: id }).expect(201);
    }
  });

  it('refuses guest tokens on every management route', async () => {
    const created = await w.client().createGuest();
    for (const [method, path] of [
      ['get', '/management-auth/current'],
      ['post', '/management-auth/revoke'],
      ['get', '/management/tenants'],
      ['get', '/management/tenants/acme'],
      ['get', '/management/tenants/acme/clients'],
    ] as const) {
      const res = await w.t.auth()[method](path).set('Authorization', `Bearer ${created.access_token}`);
      expect({ path, status: res.status, error: res.body.error }).toEqual({ path, status: 401, error: 'unauthorized' });
    }
    await w.t
      .auth()
      .post('/management-auth/token')
      .set('Authorization', `Bearer ${created.access_token}`)
      .send({ grant_type: 'refresh_token', refresh_token: created.refresh_token })
      .expect(401);
  });

  it('rotates refresh tokens through the SDK; a replay revokes the session', async () => {
    const client = w.client();
    const created = await client.createGuest();
    const first = await client.refresh();
    expect(first.refresh_token).not.toBe(created.refresh_token);
    // Once the successor was used, the token before it is a replay (contract 13).
    const rotated = await client.refresh();
    expect(rotated.session_id).toBe(created.session_id);
    const replay = await w.t
      .auth()
      .post('/t/acme/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: created.refresh_token, client_id: 'cli_game' })
      .expect(400);
    expect(replay.body.error).toBe('invalid_grant');
    await expect(client.refresh()).rejects.toMatchObject({ status: 400, code: 'invalid_grant' });
    // The SDK dropped the dead refresh token from secure storage.
    await expect(client.refresh()).rejects.toMatchObject({ code: 'no_refresh_token' });
    const again = await w.t
      .auth()
      .post('/t/acme/guest/linking-intent')
      .set('Authorization', `Bearer ${rotated.access_token}`)
      .send({ client_id: 'cli_game', browser_flow_id: client.browserFlowId });
    expect(again.status).toBe(401);
  });

  it('refuses a refresh token at another tenant or client', async () => {
    const created = await w.client().createGuest();
    await w.t
      .auth()
      .post('/t/beta/token')
      .send({ grant_type: 'refresh_token', refresh_token: created.refresh_token, client_id: 'cli_beta' })
      .expect(400);
    await w.t
      .auth()
      .post('/t/acme/token')
      .send({ grant_type: 'refresh_token', refresh_token: created.refresh_token, client_id: 'cli_game' })
      .expect(200);
  });

  it('revokes by refresh or access token (RFC 7009) and answers 200 for unknown tokens', async () => {
    const client = w.client();
    await client.createGuest();
    await client.createLinkingIntent();
    await client.revoke();
    const created = await w.client().createGuest();
    await w.t
      .auth()
      .post('/t/acme/revoke')
      .type('form')
      .send({ token: created.access_token, client_id: 'cli_game' })
      .expect(200);
    await w.t
      .auth()
      .post('/t/acme/token')
      .send({ grant_type: 'refresh_token', refresh_token: created.refresh_token, client_id: 'cli_game' })
      .expect(400);
    expect(
      (await w.t.auth().post('/t/acme/revoke').send({ token: 'nonsense', client_id: 'cli_game' }).expect(200)).body,
    ).toEqual({});
  });

  it('the SDK surfaces contract errors as GuestApiError', async () => {
    const bad = w.client({ clientId: 'cli_off' });
    const err = await bad.createGuest().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GuestApiError);
    expect(err).toMatchObject({ status: 400, code: 'invalid_client' });
  });
});

describe('guest creation rate limits', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMIT_GUEST_CREATE_CLIENT_IP: '3/60', RATE_LIMIT_GUEST_CREATE_TENANT_IP: '5/60' });
  });
  afterAll(async () => {
    await w.close();
  });

  it('limits per tenant+client+IP and per tenant+IP, atomically, with Retry-After', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, () =>
        w
          .client()
          .createGuest()
          .then(
            () => 201,
            (e: GuestApiError) => e.status,
          ),
      ),
    );
    expect(results.filter((s) => s === 201)).toHaveLength(3);
    expect(results.filter((s) => s === 429)).toHaveLength(5);
    const other = await Promise.all(
      Array.from({ length: 3 }, () =>
        w
          .client({ clientId: 'cli_native' })
          .createGuest()
          .then(
            () => 201,
            (e: GuestApiError) => e.status,
          ),
      ),
    );
    // The tenant+IP budget (5) is shared by both clients: 3 + 2 pass.
    expect(other.filter((s) => s === 201)).toHaveLength(2);
    const res = await w.t
      .auth()
      .post('/t/acme/guest')
      .send({ client_id: 'cli_native', browser_flow_id: 'flw_BBBBBBBBBBBBBBBBBBBBBB' })
      .expect(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    // Another tenant has its own budgets.
    await w.client({ tenantId: 'beta', clientId: 'cli_beta' }).createGuest();
  });
});
