import { createHmac, createPrivateKey, createSign, type KeyObject } from 'node:crypto';
import { generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload, type CryptoKey } from 'jose';
import { signIn, type ManagementTokens } from '../../support/management-flow';
import { consoleBasic, startTestApp, type TestApp } from '../../support/test-app';
import { readTestSecrets } from '../../support/test-secrets';

describe('management bearer validation (spec section 5, contract section 3)', () => {
  let t: TestApp;
  let tokens: ManagementTokens;
  let rsKey: CryptoKey;
  /** The same RS256 key for node:crypto, which a non-extractable CryptoKey cannot become. */
  let rsKeyObject: KeyObject;
  let esKey: CryptoKey;
  let rsPublic: JWK;
  let claims: JWTPayload;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
    tokens = await signIn(t, 'bearer@studio.example');
    const keys = (JSON.parse(readTestSecrets().SIGNING_KEYS) as { keys: JWK[] }).keys;
    const rs = keys.find((k) => k.alg === 'RS256') as JWK;
    const es = keys.find((k) => k.alg === 'ES256') as JWK;
    rsKey = (await importJWK(rs, 'RS256')) as CryptoKey;
    rsKeyObject = createPrivateKey({ key: rs, format: 'jwk' });
    esKey = (await importJWK(es, 'ES256')) as CryptoKey;
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = rs;
    rsPublic = pub;
    const now = Math.floor(Date.now() / 1000);
    claims = {
      iss: `${t.authOrigin}/t/control-plane`,
      sub: JSON.parse(Buffer.from(tokens.access_token.split('.')[1] as string, 'base64url').toString()).sub,
      aud: 'urn:svc:management',
      iat: now,
      exp: now + 300,
      jti: 'j1',
      client_id: 'cli_console',
      sid: tokens.session_id,
      scope: 'tenant:read',
      token_use: 'management',
    };
  });
  afterAll(async () => {
    await t.close();
  });

  const current = (token: string | undefined) => {
    const req = t.auth().get('/management-auth/current');
    return token === undefined ? req : req.set('Authorization', `Bearer ${token}`);
  };

  const sign = (payload: JWTPayload, header: Record<string, unknown> = {}, key: CryptoKey = rsKey, alg = 'RS256') =>
    new SignJWT(payload).setProtectedHeader({ alg, typ: 'at+jwt', kid: 'test-rs-1', ...header }).sign(key);

  async function expectRefused(token: string | undefined): Promise<void> {
    const res = await current(token).expect(401);
    expect(res.body).toEqual({ error: 'unauthorized', error_description: expect.any(String) });
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  }

  it('accepts a token minted by the test with the service key (the control for the cases below)', async () => {
    await current(await sign(claims)).expect(200);
  });

  it('refuses a missing or malformed Authorization header', async () => {
    await expectRefused(undefined);
    await t.auth().get('/management-auth/current').set('Authorization', `Basic ${tokens.access_token}`).expect(401);
    await t
      .auth()
      .get('/management-auth/current')
      .set('Authorization', `Bearer ${tokens.access_token} extra`)
      .expect(401);
  });

  it('refuses a token signed by another RSA key under the same kid', async () => {
    const { privateKey } = await generateKeyPair('RS256');
    await expectRefused(await sign(claims, {}, privateKey));
  });

  it('refuses a tampered payload', async () => {
    const [h, , s] = tokens.access_token.split('.');
    const payload = Buffer.from(JSON.stringify({ ...claims, sub: 'usr_AAAAAAAAAAAAAAAAAAAAAA' })).toString('base64url');
    await expectRefused(`${h}.${payload}.${s}`);
  });

  it('refuses alg confusion: HS256 keyed with the public key, and alg none', async () => {
    const pem = Buffer.from(JSON.stringify(rsPublic));
    const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'at+jwt', kid: 'test-rs-1' })).toString('base64url');
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const mac = createHmac('sha256', pem).update(`${header}.${body}`).digest('base64url');
    await expectRefused(`${header}.${body}.${mac}`);
    const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url');
    await expectRefused(`${none}.${body}.`);
  });

  it('refuses a token signed with the customer (ES256) key', async () => {
    await expectRefused(await sign(claims, { kid: 'test-es-1' }, esKey, 'ES256'));
  });

  it.each([
    ['an audience array containing the management audience', { aud: ['urn:svc:management', 'other'] }],
    ['another audience', { aud: 'cli_console' }],
    ['another issuer', { iss: `${'http://localhost:1'}/t/control-plane` }],
    ['a tenant issuer', { iss: 'ISSUER_TENANT' }],
    ['token_use access', { token_use: 'access' }],
    ['no token_use', { token_use: undefined }],
    ['another client_id', { client_id: 'cli_other' }],
    ['an expired token', { exp: Math.floor(Date.now() / 1000) - 1 }],
    ['an iat more than 60 s ahead', { iat: Math.floor(Date.now() / 1000) + 120 }],
    ['an nbf more than 60 s ahead', { nbf: Math.floor(Date.now() / 1000) + 120 }],
    ['another subject than the session', { sub: 'usr_AAAAAAAAAAAAAAAAAAAAAA' }],
    ['an unknown session', { sid: 'ses_AAAAAAAAAAAAAAAAAAAAAA' }],
  ])('refuses %s', async (_n, override) => {
    const payload: JWTPayload = { ...claims, ...override };
    if (payload.iss === 'ISSUER_TENANT') payload.iss = `${t.authOrigin}/t/acme`;
    for (const [k, v] of Object.entries(override)) if (v === undefined) delete payload[k];
    await expectRefused(await sign(payload));
  });

  it.each([
    ['jku', { jku: 'https://evil.example/jwks' }],
    ['x5u', { x5u: 'https://evil.example/cert' }],
    ['jwk', { jwk: 'PUBLIC' }],
    ['an unknown kid', { kid: 'other' }],
    ['no kid', { kid: undefined }],
    ['typ JWT', { typ: 'JWT' }],
  ])('refuses a header with %s', async (_n, header) => {
    const h: Record<string, unknown> = { ...header };
    if (h.jwk === 'PUBLIC') h.jwk = rsPublic;
    await expectRefused(await sign(claims, h));
  });

  it('refuses a header with crit, even when correctly signed', async () => {
    // jose will not sign an unknown crit extension, so this one is signed by hand.
    const header = Buffer.from(
      JSON.stringify({ alg: 'RS256', typ: 'at+jwt', kid: 'test-rs-1', crit: ['x-ext'], 'x-ext': 1 }),
    ).toString('base64url');
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const signature = createSign('RSA-SHA256').update(`${header}.${body}`).sign(rsKeyObject).toString('base64url');
    await expectRefused(`${header}.${body}.${signature}`);
  });

  it('refuses a token whose session was revoked, and revoke answers {revoked: true} once', async () => {
    const own = await signIn(t, 'revoke@studio.example');
    const res = await t
      .auth()
      .post('/management-auth/revoke')
      .set('Authorization', `Bearer ${own.access_token}`)
      .expect(200);
    expect(res.body).toEqual({ revoked: true });
    expect(res.headers['cache-control']).toBe('no-store');
    await expectRefused(own.access_token);
    await t.auth().post('/management-auth/revoke').set('Authorization', `Bearer ${own.access_token}`).expect(401);
  });

  it('revoke with an invalid token answers 401 unauthorized', async () => {
    const res = await t.auth().post('/management-auth/revoke').set('Authorization', 'Bearer nope').expect(401);
    expect(res.body.error).toBe('unauthorized');
  });

  describe('POST /management-auth/revoke-session', () => {
    const revokeSession = (body: unknown, auth: string | null = consoleBasic(t)) => {
      const req = t.auth().post('/management-auth/revoke-session');
      return (auth !== null ? req.set('Authorization', auth) : req).send(body as object);
    };

    it('revokes a control-plane session by id with client credentials', async () => {
      const own = await signIn(t, 'revoke-session@studio.example');
      const res = await revokeSession({ session_id: own.session_id }).expect(200);
      expect(res.body).toEqual({ revoked: true });
      expect(res.headers['cache-control']).toBe('no-store');
      await expectRefused(own.access_token);
      expect((await revokeSession({ session_id: own.session_id }).expect(200)).body).toEqual({ revoked: false });
    });

    it('answers {revoked: false} for an unknown session', async () => {
      expect((await revokeSession({ session_id: 'ses_AAAAAAAAAAAAAAAAAAAAAA' }).expect(200)).body).toEqual({
        revoked: false,
      });
    });

    it.each([
      ['no credentials', null],
      ['a wrong secret', `Basic ${Buffer.from('cli_console:wrong').toString('base64')}`],
      ['a bearer token', 'BEARER'],
    ])('refuses %s with 401 invalid_client', async (_n, auth) => {
      const own = await signIn(t, `rs-${_n.replace(/\W/g, '')}@studio.example`);
      const res = await revokeSession(
        { session_id: own.session_id },
        auth === 'BEARER' ? `Bearer ${own.access_token}` : auth,
      ).expect(401);
      expect(res.body.error).toBe('invalid_client');
      await current(own.access_token).expect(200);
    });

    it.each([
      ['a missing session_id', {}],
      ['an unknown field', { session_id: 'ses_AAAAAAAAAAAAAAAAAAAAAA', extra: 1 }],
      ['a malformed session_id', { session_id: 'abc' }],
      ['a non-string session_id', { session_id: 42 }],
      ['an array body', [{ session_id: 'ses_AAAAAAAAAAAAAAAAAAAAAA' }]],
    ])('refuses %s with 400 invalid_request', async (_n, body) => {
      const res = await revokeSession(body).expect(400);
      expect(res.body.error).toBe('invalid_request');
    });
  });
});
