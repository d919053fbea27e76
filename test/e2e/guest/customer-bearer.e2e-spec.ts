import { generateKeyPair, importJWK, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { rawGuest, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { readTestSecrets } from '../../support/test-secrets';

/**
 * The customer realm's bearer check (spec 5, contract sections 6 and 8): the mirror of the
 * management suite (management-auth/bearer). Tokens are minted here with the service's own ES256
 * key, so each case breaks exactly one rule of an otherwise valid token of a live guest session:
 * issuer of the route's tenant, `aud` the client (and the same as `client_id`), `token_use:
 * access`, `typ: at+jwt`, a known `kid`, an `exp` ahead.
 */
describe('customer bearer validation (spec 5, contract sections 6 and 8)', () => {
  let w: GuestWorld;
  let esKey: CryptoKey;
  let claims: JWTPayload;
  let idToken: string;

  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
    const keys = (JSON.parse(readTestSecrets().SIGNING_KEYS) as { keys: JWK[] }).keys;
    esKey = (await importJWK(keys.find((k) => k.alg === 'ES256') as JWK, 'ES256')) as CryptoKey;
    const guest = await rawGuest(w);
    const issued = await w.t
      .auth()
      .post('/t/acme/guest')
      .send({ client_id: 'cli_game', browser_flow_id: `flw_${'b'.repeat(22)}` })
      .expect(201);
    idToken = issued.body.id_token as string;
    const now = Math.floor(Date.now() / 1000);
    claims = {
      iss: `${w.t.authOrigin}/t/acme`,
      sub: guest.userId,
      aud: 'cli_game',
      iat: now,
      exp: now + 300,
      jti: 'j1',
      client_id: 'cli_game',
      sid: guest.sessionId,
      scope: 'openid offline_access',
      token_use: 'access',
      guest: true,
    };
  });
  afterAll(async () => {
    await w.close();
  });

  const me = (token: string) => w.t.auth().get('/t/acme/me').set('Authorization', `Bearer ${token}`);

  const sign = (payload: JWTPayload, header: Record<string, unknown> = {}, key: CryptoKey = esKey, alg = 'ES256') =>
    new SignJWT(payload).setProtectedHeader({ alg, typ: 'at+jwt', kid: 'test-es-1', ...header }).sign(key);

  async function expectRefused(token: string): Promise<void> {
    const res = await me(token).expect(401);
    expect(res.body).toEqual({ error: 'unauthorized', error_description: expect.any(String) });
    expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  }

  it('accepts a token minted by the test with the service key (the control for the cases below)', async () => {
    const res = await me(await sign(claims)).expect(200);
    expect(res.body.user.id).toBe(claims.sub);
  });

  it.each<[string, JWTPayload]>([
    ['the issuer of another tenant', { iss: 'ISSUER:beta' }],
    ['the control-plane issuer', { iss: 'ISSUER:control-plane' }],
    ['an issuer on another origin', { iss: 'http://localhost:1/t/acme' }],
    ['a client_id other than its audience', { client_id: 'cli_other' }],
    ['an audience array', { aud: ['cli_game'] }],
    ['another audience', { aud: 'cli_beta' }],
    ['token_use management', { token_use: 'management' }],
    ['token_use id', { token_use: 'id' }],
    ['no token_use', { token_use: undefined }],
    ['an expired token', { exp: Math.floor(Date.now() / 1000) - 1 }],
    ['an iat more than 60 s ahead', { iat: Math.floor(Date.now() / 1000) + 120 }],
    ['another subject than the session', { sub: 'usr_AAAAAAAAAAAAAAAAAAAAAA' }],
  ])('refuses %s', async (_n, override) => {
    const payload: JWTPayload = { ...claims, ...override };
    if (typeof payload.iss === 'string' && payload.iss.startsWith('ISSUER:'))
      payload.iss = `${w.t.authOrigin}/t/${payload.iss.slice('ISSUER:'.length)}`;
    for (const [k, v] of Object.entries(override)) if (v === undefined) delete payload[k];
    await expectRefused(await sign(payload));
  });

  it.each<[string, Record<string, unknown>]>([
    ['no kid', { kid: undefined }],
    ['an unknown kid', { kid: 'other' }],
    ['the management key’s kid', { kid: 'test-rs-1' }],
    ['typ JWT', { typ: 'JWT' }],
  ])('refuses a header with %s', async (_n, header) => {
    await expectRefused(await sign(claims, header));
  });

  it('refuses a token signed by another EC key under the service’s kid', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    await expectRefused(await sign(claims, {}, privateKey));
  });

  it('refuses the ID token the service issued, as an access token', async () => {
    expect(idToken).toEqual(expect.any(String));
    await expectRefused(idToken);
  });
});
