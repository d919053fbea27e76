import { decodeJwt } from 'jose';
import {
  callbackUri,
  confirmCode,
  requestCode,
  signIn,
  startFlow,
  tokenRequest,
  type StartedFlow,
} from '../../support/management-flow';
import { consoleBasic, startTestApp, type TestApp } from '../../support/test-app';

// @redis-cluster authorization-codes.store:CONSUME user-sessions:ADD

describe('POST /management-auth/token', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await t.close();
  });

  async function authorizationCode(email: string): Promise<{ flow: StartedFlow; code: string }> {
    const flow = await startFlow(t);
    const emailCode = await requestCode(t, flow, email);
    return { flow, code: await confirmCode(t, flow, email, emailCode) };
  }

  const exchange = (code: string, verifier: string, extra: Record<string, string> = {}) =>
    tokenRequest(t, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: callbackUri(t),
      code_verifier: verifier,
      ...extra,
    });

  const bearer = (token: string) => t.auth().get('/management-auth/current').set('Authorization', `Bearer ${token}`);

  describe('client authentication', () => {
    it.each([
      ['no Authorization header', undefined],
      ['a wrong secret', 'WRONG'],
      ['an unknown client', 'UNKNOWN'],
      ['a truncated secret after a second colon', 'COLON'],
      ['a Bearer scheme', 'Bearer abc'],
    ])('refuses %s with 401 invalid_client and a Basic challenge', async (_n, kind) => {
      let auth: string | undefined;
      const secret = t.config.consoleClientSecret;
      if (kind === 'WRONG') auth = `Basic ${Buffer.from(`cli_console:${secret}x`).toString('base64')}`;
      else if (kind === 'UNKNOWN') auth = `Basic ${Buffer.from(`cli_other:${secret}`).toString('base64')}`;
      else if (kind === 'COLON') auth = `Basic ${Buffer.from(`cli_console:${secret}:extra`).toString('base64')}`;
      else auth = kind;
      let req = t.auth().post('/management-auth/token').type('form');
      if (auth) req = req.set('Authorization', auth);
      const res = await req.send({ grant_type: 'refresh_token', refresh_token: 'x' }).expect(401);
      expect(res.body).toEqual({ error: 'invalid_client', error_description: expect.any(String) });
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm="svc-auth"/);
    });

    it('accepts URL-encoded credentials', async () => {
      const auth = `Basic ${Buffer.from(`${encodeURIComponent('cli_console')}:${encodeURIComponent(t.config.consoleClientSecret)}`).toString('base64')}`;
      const res = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'x' }, auth).expect(400);
      expect(res.body.error).toBe('invalid_grant');
    });
  });

  it('refuses other grant types', async () => {
    const res = await tokenRequest(t, { grant_type: 'client_credentials' }).expect(400);
    expect(res.body.error).toBe('unsupported_grant_type');
    await tokenRequest(t, { grant_type: 'password' }).expect(400);
  });

  it('refuses a PKCE mismatch, and the code is consumed by the failed attempt', async () => {
    const { flow, code } = await authorizationCode('pkce@studio.example');
    const res = await exchange(code, 'x'.repeat(43)).expect(400);
    expect(res.body.error).toBe('invalid_grant');
    await exchange(code, flow.pkce.verifier).expect(400);
  });

  it('refuses a missing verifier', async () => {
    const { code } = await authorizationCode('noverifier@studio.example');
    await tokenRequest(t, { grant_type: 'authorization_code', code, redirect_uri: callbackUri(t) }).expect(400);
  });

  it('refuses a redirect_uri that differs from the authorization request', async () => {
    const { flow, code } = await authorizationCode('redirect@studio.example');
    const res = await exchange(code, flow.pkce.verifier, { redirect_uri: `${callbackUri(t)}/` }).expect(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  it('a reused code fails and revokes the session the first use created', async () => {
    const { flow, code } = await authorizationCode('reuse@studio.example');
    const first = await exchange(code, flow.pkce.verifier).expect(200);
    await bearer(first.body.access_token).expect(200);
    const second = await exchange(code, flow.pkce.verifier).expect(400);
    expect(second.body.error).toBe('invalid_grant');
    await bearer(first.body.access_token).expect(401);
    await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token }).expect(400);
  });

  it('keeps authorization codes for at most 60 seconds', async () => {
    const { code } = await authorizationCode('ttl@studio.example');
    const { createHash } = await import('node:crypto');
    const ttl = await t.redis.ttl(`ac:{${createHash('sha256').update(code).digest('base64url')}}`);
    expect(ttl).toBeGreaterThan(50);
    expect(ttl).toBeLessThanOrEqual(60);
  });

  /**
   * Contract section 3: a code is single use, and a second use revokes what the first issued. Among
   * concurrent exchanges the replays revoke the first one's session id, with a tombstone, usually
   * before that exchange has created it; so no exchange at all may succeed, and at most one can.
   */
  it('of 10 concurrent exchanges of one code at most one succeeds, the rest are invalid_grant, and a winner is revoked', async () => {
    const { flow, code } = await authorizationCode('race-code@studio.example');
    const results = await Promise.all(Array.from({ length: 10 }, () => exchange(code, flow.pkce.verifier)));
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeLessThanOrEqual(1);
    expect(results.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.body.error}`)).toEqual(
      Array<string>(10 - ok.length).fill('400 invalid_grant'),
    );
    // Replays of a used code revoke what it issued, so whatever won is revoked too.
    for (const r of ok) await bearer(r.body.access_token).expect(401);
    const after = await exchange(code, flow.pkce.verifier).expect(400);
    expect(after.body.error).toBe('invalid_grant');
  });

  it('refuses an unknown code', async () => {
    const res = await exchange('A'.repeat(43), 'x'.repeat(43)).expect(400);
    expect(res.body.error).toBe('invalid_grant');
  });

  it('a replayed refresh token revokes the whole session', async () => {
    const tokens = await signIn(t, 'replay@studio.example');
    const rotated = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }).expect(
      200,
    );
    await bearer(rotated.body.access_token).expect(200);
    const replay = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }).expect(
      400,
    );
    expect(replay.body.error).toBe('invalid_grant');
    await bearer(rotated.body.access_token).expect(401);
    await bearer(tokens.access_token).expect(401);
    await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: rotated.body.refresh_token }).expect(400);
    // Contract 12: the replay is on the audit trail, in the control plane, naming the session.
    const audit = await t.pg.query(
      `SELECT tenant_id, data->>'kind' AS kind FROM audit_events WHERE type = 'refresh.replayed' AND data->>'session_id' = $1`,
      [tokens.session_id],
    );
    expect(audit.rows).toEqual([{ tenant_id: 'control-plane', kind: 'refresh_token' }]);
    // The session's row says it ended, as every other revocation's does.
    const row = await t.pg.query(`SELECT revoked_at FROM sessions WHERE id = $1`, [tokens.session_id]);
    expect(row.rows[0].revoked_at).toBeInstanceOf(Date);
  });

  it('of 20 concurrent refreshes with one token exactly one succeeds', async () => {
    const tokens = await signIn(t, 'race-refresh@studio.example');
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }),
      ),
    );
    // The first to reach Redis rotates; every other one presents a used generation (a replay,
    // which revokes the session) or finds the session gone.
    expect(results.map((r) => `${r.status} ${r.body.error ?? ''}`).sort()).toEqual([
      '200 ',
      ...Array<string>(19).fill('400 invalid_grant'),
    ]);
  });

  it('refuses a forged refresh token for a live session', async () => {
    const tokens = await signIn(t, 'forged-refresh@studio.example');
    const forged = `${tokens.session_id}.${'A'.repeat(43)}`;
    await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: forged }).expect(400);
    // A guess is not a replay: the session lives on.
    await bearer(tokens.access_token).expect(200);
  });

  it('stores nothing of a refresh token but its generation', async () => {
    const tokens = await signIn(t, 'digest@studio.example');
    const secret = tokens.refresh_token.split('.')[2] as string;
    const session = await t.redis.hgetall(`s:{${tokens.session_id}}`);
    expect(JSON.stringify(session)).not.toContain(secret);
  });

  it('records the session in PostgreSQL and binds the token to it', async () => {
    const tokens = await signIn(t, 'record@studio.example');
    const rows = await t.pg.query('SELECT tenant_id, client_id, user_id FROM sessions WHERE id = $1', [
      tokens.session_id,
    ]);
    expect(rows.rows).toEqual([
      { tenant_id: 'control-plane', client_id: 'cli_console', user_id: decodeJwt(tokens.access_token).sub },
    ]);
  });

  it('answers a malformed body with 400 and changes nothing', async () => {
    const res = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: 'x', client_secret: 'x' }).expect(
      400,
    );
    expect(res.body.error).toBe('invalid_request');
    const json = await t
      .auth()
      .post('/management-auth/token')
      .set('Authorization', consoleBasic(t))
      .set('Content-Type', 'text/plain')
      .send('grant_type=x')
      .expect(400);
    expect(json.body.error).toBe('invalid_request');
  });
});
