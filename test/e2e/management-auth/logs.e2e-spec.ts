import {
  callbackUri,
  confirmCode,
  emailPost,
  requestCode,
  startFlow,
  tokenRequest,
} from '../../support/management-flow';
import { untilRequestLogged } from '../../support/request-log';
import { consoleBasic, startTestApp, type TestApp } from '../../support/test-app';

/** Logs are structured JSON with request ids and never hold a token, code, secret or email address. */
describe('structured logs without secrets', () => {
  let t: TestApp;
  const lines: string[] = [];
  beforeAll(async () => {
    t = await startTestApp({ LOG_LEVEL: 'trace', RATE_LIMITS: 'off' }, { logLines: lines });
  });
  afterAll(async () => {
    await t.close();
  });

  it('logs every request as JSON with its id, and none of the secrets that passed through', async () => {
    const email = 'secret-person@studio.example';
    const flow = await startFlow(t);
    const emailCode = await requestCode(t, flow, email);
    await emailPost(t, 'confirm', flow, { email, code: String((Number(emailCode) + 1) % 1e6).padStart(6, '0') }).expect(
      400,
    );
    const authorizationCode = await confirmCode(t, flow, email, emailCode);
    const tokens = (
      await tokenRequest(t, {
        grant_type: 'authorization_code',
        code: authorizationCode,
        redirect_uri: callbackUri(t),
        code_verifier: flow.pkce.verifier,
      }).expect(200)
    ).body as { access_token: string; refresh_token: string; session_id: string };
    const refreshed = (
      await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }).expect(200)
    ).body as { refresh_token: string };
    await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
      .set('X-Request-Id', 'replay-request-1')
      .expect(400);
    await t.auth().get('/management-auth/current').set('Authorization', `Bearer ${tokens.access_token}`).expect(401);
    await t
      .auth()
      .post('/management-auth/revoke-session')
      .set('Authorization', consoleBasic(t))
      .send({ session_id: tokens.session_id })
      .expect(200);
    await t
      .auth()
      .get('/management-auth/authorize')
      .set('X-Request-Id', 'last-request-1')
      .query({
        client_id: 'cli_console',
        redirect_uri: callbackUri(t),
        state: 'STATE-VALUE-123',
        code_challenge: flow.pkce.challenge,
      });

    // Requests are answered in order here: once the last one is logged, every line is in.
    await untilRequestLogged(lines, 'last-request-1');
    const all = lines.join('');
    const secrets = [
      email,
      emailCode,
      authorizationCode,
      tokens.access_token,
      tokens.refresh_token.split('.')[2] as string,
      refreshed.refresh_token.split('.')[2] as string,
      t.config.consoleClientSecret,
      flow.cookie.split('=')[1] as string,
      flow.pkce.verifier,
      'STATE-VALUE-123',
      Buffer.from(`cli_console:${t.config.consoleClientSecret}`).toString('base64'),
    ];
    for (const secret of secrets) expect(all).not.toContain(secret);

    const parsed = lines.map(
      (l) =>
        JSON.parse(l) as {
          service?: string;
          pid?: number;
          req?: { id?: string; path?: string };
          res?: { statusCode?: number };
          msg?: string;
        },
    );
    // Every line, request or not, names the service and the process that wrote it.
    for (const l of parsed) expect(l).toMatchObject({ service: 'svc-auth', pid: process.pid });
    const requestLogs = parsed.filter((l) => l.req && l.res);
    expect(requestLogs.length).toBeGreaterThanOrEqual(8);
    for (const l of requestLogs) {
      expect(l.req?.id).toEqual(expect.any(String));
      expect(l.req?.path).not.toContain('?');
    }
    // A service's own line written while a request runs names that request.
    expect(parsed.find((l) => l.msg === 'refresh token replayed; session revoked')).toMatchObject({
      req: { id: 'replay-request-1', path: '/management-auth/token' },
    });
  });

  it.each([
    ['plain', 'alice.person@studio.example'],
    ['%40-escaped', 'alice.person%40studio.example'],
  ])('logs a path that holds an email address (%s) without it, even when refused', async (spelling, address) => {
    const id = `address-in-path-${spelling.replace(/\W/g, '')}`;
    await t.auth().delete(`/t/acme/me/identities/email/${address}`).set('X-Request-Id', id).expect(401);
    await untilRequestLogged(lines, id);
    const ofRequest = lines.filter((l) => l.includes(id));
    expect(ofRequest.join('')).not.toContain('alice.person');
    expect(ofRequest.map((l) => (JSON.parse(l) as { req?: { path?: string } }).req?.path)).toContain(
      '/t/acme/me/identities/email/<address>',
    );
  });
});
