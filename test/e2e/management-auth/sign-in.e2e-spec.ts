import { decodeJwt, decodeProtectedHeader } from 'jose';
import {
  callbackUri,
  confirmCode,
  emailPost,
  requestCode,
  signIn,
  startFlow,
  tokenRequest,
} from '../../support/management-flow';
import { startTestApp, type TestApp } from '../../support/test-app';

describe('management sign-in: authorize → email code → token', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('signs a developer in end to end and issues an RS256 management token with the contract claims', async () => {
    const tokens = await signIn(t, 'Dev@Studio.example');
    expect(tokens.token_type).toBe('Bearer');
    expect(tokens.expires_in).toBe(300);
    expect(tokens.scope).toBe('tenant:read');
    expect(tokens.session_id).toMatch(/^ses_[A-Za-z0-9_-]{16,64}$/);
    expect(tokens.refresh_token).toEqual(expect.any(String));

    const header = decodeProtectedHeader(tokens.access_token);
    expect(header).toEqual({ alg: 'RS256', typ: 'at+jwt', kid: 'test-rs-1' });
    const claims = decodeJwt(tokens.access_token);
    expect(claims).toMatchObject({
      iss: `${t.authOrigin}/t/control-plane`,
      aud: 'urn:svc:management',
      client_id: 'cli_console',
      sid: tokens.session_id,
      scope: 'tenant:read',
      token_use: 'management',
    });
    expect(claims.sub).toMatch(/^usr_/);
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(300);
    expect(claims.jti).toEqual(expect.any(String));

    const current = await t
      .auth()
      .get('/management-auth/current')
      .set('Authorization', `Bearer ${tokens.access_token}`)
      .expect(200);
    expect(current.body).toEqual({ user: { id: claims.sub, email: 'dev@studio.example', email_verified: true } });
    expect(current.headers['cache-control']).toBe('no-store');

    // Contract 12: one control_plane.signed_in row per sign-in, with the subject and ids only.
    const audit = await t.pg.query(
      `SELECT tenant_id, subject, data FROM audit_events WHERE type = 'control_plane.signed_in' AND subject = $1`,
      [claims.sub],
    );
    expect(audit.rows).toEqual([
      {
        tenant_id: 'control-plane',
        subject: claims.sub,
        data: { session_id: tokens.session_id, client_id: 'cli_console' },
      },
    ]);
  });

  it('creates the control-plane user and email identity at confirm, and resolves them on the next sign-in', async () => {
    const first = await signIn(t, 'repeat@studio.example');
    const second = await signIn(t, 'REPEAT@studio.example');
    expect(decodeJwt(second.access_token).sub).toBe(decodeJwt(first.access_token).sub);
    const rows = await t.pg.query(
      `SELECT u.kind, i.provider, i.email_verified FROM identities i JOIN users u ON u.id = i.user_id WHERE i.provider_subject = 'repeat@studio.example' AND i.tenant_id = 'control-plane'`,
    );
    expect(rows.rows).toEqual([{ kind: 'regular', provider: 'email', email_verified: true }]);
  });

  it('sends a code mail whose text has the code as its only run of six digits', async () => {
    const flow = await startFlow(t);
    const code = await requestCode(t, flow, 'mail@studio.example');
    const mail = t.smtp.messages.filter((m) => m.to.includes('mail@studio.example')).at(-1);
    expect(mail?.text.match(/\d{6}/g)).toEqual([code]);
  });

  it('a flow yields one authorization code: once confirmed, it takes no further email/start or confirm', async () => {
    const flow = await startFlow(t);
    const code = await requestCode(t, flow, 'once@studio.example');
    await confirmCode(t, flow, 'once@studio.example', code);
    const again = await emailPost(t, 'start', flow, { email: 'once@studio.example' });
    expect([again.status, again.body.error]).toEqual([403, 'forbidden']);
    const confirm = await emailPost(t, 'confirm', flow, { email: 'once@studio.example', code });
    expect(confirm.status).not.toBe(200);
  });

  it('redirect_to carries code, state and iss for the console callback', async () => {
    const flow = await startFlow(t);
    const code = await requestCode(t, flow, 'redirect@studio.example');
    const res = await emailPost(t, 'confirm', flow, { email: 'redirect@studio.example', code }).expect(200);
    const url = new URL(res.body.redirect_to);
    expect(`${url.origin}${url.pathname}`).toBe(callbackUri(t));
    expect(url.searchParams.get('state')).toBe(flow.state);
    expect(url.searchParams.get('iss')).toBe(`${t.authOrigin}/t/control-plane`);
    expect(url.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('accepts JSON as well as form bodies at the token endpoint', async () => {
    const flow = await startFlow(t);
    const code = await requestCode(t, flow, 'json@studio.example');
    const authorizationCode = await confirmCode(t, flow, 'json@studio.example', code);
    const res = await t
      .auth()
      .post('/management-auth/token')
      .set('Authorization', tokenAuth(t))
      .send({
        grant_type: 'authorization_code',
        code: authorizationCode,
        redirect_uri: callbackUri(t),
        code_verifier: flow.pkce.verifier,
      })
      .expect(200);
    expect(res.body.access_token).toEqual(expect.any(String));
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('rotates refresh tokens: each refresh gives a new refresh token and a working access token', async () => {
    const tokens = await signIn(t, 'rotate@studio.example');
    const r1 = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }).expect(200);
    expect(r1.body.refresh_token).not.toBe(tokens.refresh_token);
    expect(r1.body.session_id).toBe(tokens.session_id);
    await t.auth().get('/management-auth/current').set('Authorization', `Bearer ${r1.body.access_token}`).expect(200);
    const r2 = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: r1.body.refresh_token }).expect(200);
    expect(r2.body.refresh_token).not.toBe(r1.body.refresh_token);
  });
});

function tokenAuth(t: TestApp): string {
  return `Basic ${Buffer.from(`cli_console:${t.config.consoleClientSecret}`).toString('base64')}`;
}
