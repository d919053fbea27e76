import { decodeJwt } from 'jose';
import { generators, Issuer } from 'openid-client';
import { CONSOLE_CLIENT_ID, startTestApp, type TestApp } from '../../support/test-app';

/**
 * A complete sign-in driven by an independent OAuth client library (openid-client) through the
 * control-plane discovery document: if the service drifts from RFC 6749/7636/9207 this breaks.
 */
describe('sign-in with openid-client through discovery', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('discovers, authorizes with PKCE, exchanges the code, refreshes and revokes at the advertised revocation_endpoint', async () => {
    const issuer = await Issuer.discover(`${t.authOrigin}/t/control-plane/.well-known/openid-configuration`);
    expect(issuer.metadata).toMatchObject({
      issuer: `${t.authOrigin}/t/control-plane`,
      revocation_endpoint: `${t.authOrigin}/management-auth/revoke`,
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic'],
      authorization_response_iss_parameter_supported: true,
      grant_types_supported: ['authorization_code', 'refresh_token'],
    });
    const redirectUri = `${t.consoleOrigin}/api/auth/callback`;
    const client = new issuer.Client({
      client_id: CONSOLE_CLIENT_ID,
      client_secret: t.config.consoleClientSecret,
      redirect_uris: [redirectUri],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    const verifier = generators.codeVerifier();
    const state = generators.state();
    const authorizeUrl = client.authorizationUrl({
      scope: 'tenant:read',
      state,
      code_challenge: generators.codeChallenge(verifier),
      code_challenge_method: 'S256',
    });

    // The browser's part: load the form, then post email and code with the flow cookie.
    const form = await fetch(authorizeUrl);
    expect(form.status).toBe(200);
    const flowId = /data-flow-id="([^"]+)"/.exec(await form.text())?.[1] as string;
    const cookie = (form.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const post = (path: string, body: object) =>
      fetch(`${t.authOrigin}/management-auth/email/${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: t.authOrigin, Cookie: cookie },
        body: JSON.stringify(body),
      });
    expect((await post('start', { flow_id: flowId, email: 'lib@studio.example' })).status).toBe(202);
    const code = await t.smtp.waitForCode('lib@studio.example');
    const confirmed = (await (
      await post('confirm', { flow_id: flowId, email: 'lib@studio.example', code })
    ).json()) as { redirect_to: string };

    const params = client.callbackParams(confirmed.redirect_to);
    const tokenSet = await client.oauthCallback(redirectUri, params, {
      state,
      code_verifier: verifier,
      response_type: 'code',
    });
    expect(tokenSet.token_type).toBe('Bearer');
    expect(tokenSet.expires_in).toBe(300);
    expect(tokenSet.session_id).toMatch(/^ses_/);
    expect(decodeJwt(tokenSet.access_token as string).aud).toBe('urn:svc:management');

    const user = await client.requestResource(
      `${t.authOrigin}/management-auth/current`,
      tokenSet.access_token as string,
    );
    expect(JSON.parse(user.body?.toString() ?? '{}')).toMatchObject({
      user: { email: 'lib@studio.example', email_verified: true },
    });

    const refreshed = await client.refresh(tokenSet.refresh_token as string);
    expect(refreshed.refresh_token).not.toBe(tokenSet.refresh_token);
    expect(refreshed.access_token).toEqual(expect.any(String));

    // The advertised revocation endpoint is served: it ends the session of the bearer token.
    const revoked = await fetch(issuer.metadata.revocation_endpoint as string, {
      method: 'POST',
      headers: { Authorization: `Bearer ${refreshed.access_token as string}` },
    });
    expect({ status: revoked.status, body: await revoked.json() }).toEqual({ status: 200, body: { revoked: true } });
    await t
      .auth()
      .get('/management-auth/current')
      .set('Authorization', `Bearer ${refreshed.access_token as string}`)
      .expect(401);
  });

  it('publishes only public RS256 keys in the control-plane JWKS', async () => {
    const res = await t.auth().get('/t/control-plane/.well-known/jwks.json').expect(200);
    expect(res.body.keys.length).toBeGreaterThan(0);
    for (const key of res.body.keys) {
      expect(key).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String) });
      for (const priv of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(key).not.toHaveProperty(priv);
    }
  });
});
