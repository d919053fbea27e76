import { GuestApiError } from '../../../sdk/src/guest-client';
import { admin } from '../../support/admin-cli';
import { emailProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

const status = (p: Promise<unknown>): Promise<number | string> =>
  p.then(
    () => 200,
    (e: GuestApiError) => `${e.status} ${e.code}`,
  );

describe('guest abuse limits (spec 8) and account states', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMIT_GUEST_UPGRADE_SUBJECT: '2/60', RATE_LIMIT_TENANT_EMAIL_SEND: '2/60' });
  });
  afterAll(async () => {
    await w.close();
  });

  it('limits upgrade attempts per guest', async () => {
    const c = w.client();
    await c.createGuest();
    await c.createLinkingIntent();
    expect(await status(c.upgrade('prf_AAAAAAAAAAAAAAAAAAAAAA'))).toBe('400 invalid_proof');
    expect(await status(c.upgrade('prf_AAAAAAAAAAAAAAAAAAAAAA'))).toBe('400 invalid_proof');
    expect(await status(c.upgrade('prf_AAAAAAAAAAAAAAAAAAAAAA'))).toBe('429 rate_limited');
    // Another guest has its own budget.
    const other = w.client();
    await other.createGuest();
    expect(await status(other.upgrade('prf_AAAAAAAAAAAAAAAAAAAAAA'))).toBe('400 invalid_proof');
  });

  it('limits verification codes per address, and another tenant counts apart', async () => {
    const c = w.client();
    await c.createGuest();
    expect(await status(c.startEmail('limited@example.com'))).toBe(200);
    expect(await status(c.startEmail('limited@example.com'))).toBe(200);
    expect(await status(c.startEmail('limited@example.com'))).toBe('429 rate_limited');
    const beta = w.client({ tenantId: 'beta', clientId: 'cli_beta' });
    await beta.createGuest();
    expect(await status(beta.startEmail('limited@example.com'))).toBe(200);
  });

  it('email/start refused by a budget claims no flow (contract section 10)', async () => {
    const start = (flowId: string) =>
      w.t
        .auth()
        .post('/t/acme/email/start')
        .send({ client_id: 'cli_game', browser_flow_id: flowId, email: 'spent@example.com' });
    for (const flowId of ['flw_spentAAAAAAAAAAAAAAA1', 'flw_spentAAAAAAAAAAAAAAA2']) await start(flowId).expect(202);
    const refused = await start('flw_spentAAAAAAAAAAAAAAA3').expect(429);
    expect(refused.headers['set-cookie']).toBeUndefined();
    expect((await w.t.redisKeys()).filter((k) => k.includes('flw_spentAAAAAAAAAAAAAAA3'))).toEqual([]);
  });

  it('an upgraded account is no longer a guest: no second linking intent', async () => {
    const c = w.client();
    await c.createGuest();
    await c.createLinkingIntent();
    await c.upgrade(await emailProof(w, c, 'once-only@example.com'));
    expect(await status(c.createLinkingIntent())).toBe('400 invalid_proof');
  });

  it('a proof of an account deactivated after the proof was issued signs nobody in (400 invalid_proof)', async () => {
    const owner = w.client();
    const created = await owner.createGuest();
    await owner.createLinkingIntent();
    await owner.upgrade(await emailProof(w, owner, 'deactivated-later@example.com'));
    // Another browser proves the address while the account is still active…
    const c = w.client();
    await c.createGuest();
    const proof = await emailProof(w, c, 'deactivated-later@example.com');
    // …then an operator deactivates the account (contract 12) before the proof is used.
    expect((await admin(w.t.env, 'user', 'deactivate', '--tenant', 'acme', '--id', created.user_id)).status).toBe(0);
    const res = await w.t
      .auth()
      .post('/t/acme/sign-in')
      .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
      .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, proof_id: proof });
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error: 'invalid_proof' });
    // No session of the deactivated account was started, not even its row.
    const started = await w.t.pg.query(
      `SELECT count(*)::int AS n FROM sessions s JOIN users u ON u.id = s.user_id
        WHERE u.id = $1 AND s.created_at > u.deactivated_at`,
      [created.user_id],
    );
    expect(started.rows).toEqual([{ n: 0 }]);
  });

  it('a deactivated tenant stops guest creation and token refresh at once', async () => {
    const c = w.client({ tenantId: 'beta', clientId: 'cli_beta' });
    await c.createGuest();
    await w.t.pg.query(`UPDATE tenants SET status = 'inactive' WHERE id = 'beta'`);
    try {
      expect(await status(w.client({ tenantId: 'beta', clientId: 'cli_beta' }).createGuest())).toBe(
        '404 tenant_not_found',
      );
      expect(await status(c.refresh())).toBe('404 tenant_not_found');
    } finally {
      await w.t.pg.query(`UPDATE tenants SET status = 'active' WHERE id = 'beta'`);
    }
  });
});
