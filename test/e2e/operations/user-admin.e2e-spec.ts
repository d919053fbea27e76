import { admin } from '../../support/admin-cli';
import { addMember, createTenant } from '../../support/console-fixtures';
import { consoleSignIn } from '../../support/console-flow';
import { emailProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import {
  callbackUri,
  confirmCode,
  emailPost,
  requestCode,
  signIn,
  startFlow,
  tokenRequest,
} from '../../support/management-flow';
import { freePort } from '../../support/test-app';
import { SessionStore } from '../../../src/platform/session-store/session-store';

// @redis-cluster user-sessions:DEACTIVATE

/** Contract 12: developers and players administered by an operator, with immediate effect. */
describe('user administration (contract 12)', () => {
  let w: GuestWorld;
  const run = (...argv: string[]) => admin(w.t.env, ...argv);
  const audit = async (type: string): Promise<Array<{ subject: string; data: Record<string, unknown> }>> =>
    (await w.t.pg.query('SELECT subject, data FROM audit_events WHERE type = $1 ORDER BY id', [type])).rows;

  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
    await createTenant(w.t, 'studio', 'Studio');
  });
  afterAll(async () => {
    await w.close();
  });

  it('user deactivate cuts off a live console session within one request, and every token of the user', async () => {
    const t = w.t;
    const userId = await addMember(t, 'studio', 'dev@studio.example', 'owner');
    const session = await consoleSignIn(t, 'dev@studio.example');
    const direct = await signIn(t, 'dev@studio.example');
    // A sign-in that has its authorization code but has not exchanged it yet.
    const pending = await startFlow(t);
    const pendingCode = await confirmCode(
      t,
      pending,
      'dev@studio.example',
      await requestCode(t, pending, 'dev@studio.example'),
    );
    await t.console().get('/api/management/tenants').set('Cookie', session.cookie).expect(200);
    await t.auth().get('/management/tenants').set('Authorization', `Bearer ${direct.access_token}`).expect(200);
    expect((await run('session', 'list', '--email', 'dev@studio.example')).out.sessions).toHaveLength(2);

    const r = await run('user', 'deactivate', '--email', 'Dev@Studio.example');
    expect(r.out).toEqual({
      user: { id: userId, tenant: 'control-plane', status: 'deactivated', changed: true },
      revoked_sessions: 2,
    });

    // The very next request of the console session fails, and the BFF drops it.
    const cut = await t.console().get('/api/management/tenants').set('Cookie', session.cookie);
    expect(cut.status).toBe(401);
    await t.console().get('/api/auth/current').set('Cookie', session.cookie).expect(401);
    const bearer = await t.auth().get('/management/tenants').set('Authorization', `Bearer ${direct.access_token}`);
    expect(bearer.status).toBe(401);
    const refresh = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: direct.refresh_token });
    expect([refresh.status, refresh.body.error]).toEqual([400, 'invalid_grant']);
    const exchange = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code: pendingCode,
      redirect_uri: callbackUri(t),
      code_verifier: pending.pkce.verifier,
    });
    expect([exchange.status, exchange.body.error]).toEqual([400, 'invalid_grant']);
    expect((await run('session', 'list', '--email', 'dev@studio.example')).out).toEqual({ sessions: [] });
    expect((await run('user', 'show', '--email', 'dev@studio.example')).out.user.status).toBe('deactivated');
    expect((await audit('user.deactivated')).map((a) => a.subject)).toEqual([userId]);
    expect((await audit('admin.user.deactivate')).map((a) => a.subject)).toEqual([userId]);
    expect((await audit('control_plane.signed_in')).map((a) => a.subject)).toEqual([userId, userId]);
  });

  it('a deactivated developer still gets 202 from email/start, but the right code yields nothing', async () => {
    const flow = await startFlow(w.t);
    const code = await requestCode(w.t, flow, 'dev@studio.example');
    const confirm = await emailPost(w.t, 'confirm', flow, { email: 'dev@studio.example', code });
    expect([confirm.status, confirm.body.error]).toEqual([400, 'invalid_code']);
  });

  it('no session of a deactivated user can start, even one that passed its database check first', async () => {
    const { user } = (await run('user', 'show', '--email', 'dev@studio.example')).out;
    const created = await w.t.app.get(SessionStore).create(
      {
        sessionId: w.t.app.get(SessionStore).newSessionId(),
        tenantId: 'control-plane',
        userId: user.id,
        clientId: 'cli_console',
        scope: 'tenant:read',
        email: 'dev@studio.example',
      },
      60,
    );
    expect(created).toEqual({ created: false });
  });

  it('an authorization code issued before a deactivation that reached only PostgreSQL yields no token', async () => {
    const t = w.t;
    const email = 'half-deactivated@studio.example';
    await addMember(t, 'studio', email, 'viewer');
    const flow = await startFlow(t);
    const code = await confirmCode(t, flow, email, await requestCode(t, flow, email));
    // Step 1 of a deactivation committed, and its Redis step failed (user-deactivation.ts): from
    // here no code exchange may pass its user check, whatever Redis still says.
    await t.pg.query(
      `UPDATE users SET status = 'deactivated', deactivated_at = now()
        WHERE id = (SELECT user_id FROM identities WHERE tenant_id = 'control-plane' AND provider_subject = $1)`,
      [email],
    );
    const res = await tokenRequest(t, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: callbackUri(t),
      code_verifier: flow.pkce.verifier,
    });
    expect([res.status, res.body.error, res.body.access_token]).toEqual([400, 'invalid_grant', undefined]);
    expect((await run('session', 'list', '--email', email)).out).toEqual({ sessions: [] });
  });

  it('sign-ins racing user deactivate leave no working token behind', async () => {
    const t = w.t;
    const email = 'racer@studio.example';
    await addMember(t, 'studio', email, 'viewer');
    const pending = [];
    for (let i = 0; i < 6; i++) {
      const flow = await startFlow(t);
      pending.push({ flow, code: await confirmCode(t, flow, email, await requestCode(t, flow, email)) });
    }
    const exchanges = pending.map(({ flow, code }) =>
      tokenRequest(t, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: callbackUri(t),
        code_verifier: flow.pkce.verifier,
      }),
    );
    const [deactivated, ...results] = await Promise.all([run('user', 'deactivate', '--email', email), ...exchanges]);
    expect(deactivated.status).toBe(0);
    for (const res of results) {
      if (res.status !== 200) continue;
      const bearer = await t.auth().get('/management/tenants').set('Authorization', `Bearer ${res.body.access_token}`);
      expect(bearer.status).toBe(401);
      await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: res.body.refresh_token }).expect(400);
    }
    expect((await run('session', 'list', '--email', email)).out).toEqual({ sessions: [] });
  });

  it('a player: session list, session revoke, deactivation refusing refresh, replay audited', async () => {
    const a = w.client();
    const guest = await a.createGuest();
    const b = w.client();
    await b.createGuest();
    const listed = await run('session', 'list', '--tenant', 'acme', '--id', guest.user_id);
    expect(listed.out.sessions).toEqual([
      expect.objectContaining({ session_id: guest.session_id, client_id: 'cli_game' }),
    ]);

    // A refresh token used after its successor was: the session is revoked and the replay audited
    // with its owner (contract 13).
    const refresh = (token: string) =>
      w.t
        .auth()
        .post('/t/acme/token')
        .send({ grant_type: 'refresh_token', refresh_token: token, client_id: 'cli_game' });
    const rotated = await refresh(guest.refresh_token as string).expect(200);
    const latest = await refresh(rotated.body.refresh_token).expect(200);
    await refresh(guest.refresh_token as string).expect(400);
    await refresh(latest.body.refresh_token).expect(400);
    expect(await audit('refresh.replayed')).toEqual([
      { subject: guest.user_id, data: { kind: 'refresh_token', session_id: guest.session_id, client_id: 'cli_game' } },
    ]);

    const second = w.client();
    const other = await second.createGuest();
    const revoke = await run('session', 'revoke', '--id', other.session_id);
    expect(revoke.out).toEqual({ session: { id: other.session_id, revoked: true } });
    await refresh(other.refresh_token as string).expect(400);
    expect((await audit('session.revoked')).at(-1)).toEqual({
      subject: other.user_id,
      data: { session_id: other.session_id, by: 'admin' },
    });
    expect((await run('session', 'revoke', '--id', 'nope')).status).toBe(1);

    // Redis out of reach: the command gives up within its bound, says why, and revokes nothing.
    const { REDIS_CLUSTER_NODES: _cluster, ...single } = w.t.env;
    const unreachable = {
      ...single,
      REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      DEPENDENCY_TIMEOUT_MS: '1000',
    };
    const kept = w.client();
    const keeper = await kept.createGuest();
    const refused = await admin(unreachable, 'session', 'revoke', '--id', keeper.session_id);
    expect({ status: refused.status, stderr: JSON.parse(refused.stderr) as unknown }).toEqual({
      status: 1,
      stderr: { error: 'failed', message: 'Redis is not reachable' },
    });
    await refresh(keeper.refresh_token as string).expect(200);

    const third = w.client();
    const player = await third.createGuest();
    const deactivated = await run('user', 'deactivate', '--tenant', 'acme', '--id', player.user_id);
    expect(deactivated.out.revoked_sessions).toBe(1);
    await refresh(player.refresh_token as string).expect(400);
    await w.t
      .auth()
      .post('/t/acme/guest/linking-intent')
      .set('Authorization', `Bearer ${player.access_token}`)
      .send({ client_id: 'cli_game', browser_flow_id: third.browserFlowId })
      .expect(401);
  });

  it('user delete erases a player: identities, sessions, the user row; audit keeps ids only', async () => {
    const c = w.client();
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const upgraded = await c.upgrade(await emailProof(w, c, 'Erase.Me@Example.com'));
    const id = created.user_id;
    // An audit row that happens to carry the address (written by an older release, say).
    await w.t.pg.query(`INSERT INTO audit_events (type, tenant_id, subject, data) VALUES ($1, 'acme', $2, $3)`, [
      'support.note',
      id,
      JSON.stringify({ email: 'erase.me@example.com' }),
    ]);
    expect((await run('user', 'show', '--tenant', 'acme', '--id', id)).out.user.identities).toEqual([
      { provider: 'email', provider_subject: 'erase.me@example.com', email: 'erase.me@example.com' },
    ]);
    expect((await run('user', 'delete', '--email', 'x@example.com')).status).toBe(1);
    expect((await run('user', 'delete', '--tenant', 'control-plane', '--id', id)).status).toBe(1);

    const r = await run('user', 'delete', '--tenant', 'acme', '--id', id);
    expect(r.out).toEqual({ deleted: { id, tenant: 'acme' }, revoked_sessions: 1 });
    for (const table of ['users WHERE id', 'identities WHERE user_id', 'sessions WHERE user_id']) {
      expect((await w.t.pg.query(`SELECT count(*)::int AS n FROM ${table} = $1`, [id])).rows[0].n).toBe(0);
    }
    const everything = await w.t.pg.query(`SELECT type, subject, data::text AS data FROM audit_events`);
    expect(JSON.stringify(everything.rows)).not.toContain('erase.me@example.com');
    expect((await audit('user.deleted')).map((a) => a.subject)).toEqual([id]);
    await w.t
      .auth()
      .post('/t/acme/token')
      .send({ grant_type: 'refresh_token', refresh_token: upgraded.refresh_token, client_id: 'cli_game' })
      .expect(400);
    expect((await run('user', 'delete', '--tenant', 'acme', '--id', id)).status).toBe(1);
  });
});
