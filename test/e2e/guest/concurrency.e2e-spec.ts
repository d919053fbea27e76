import type { GuestClient } from '../../../sdk/src/guest-client';
import { emailProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { startTestApp } from '../../support/test-app';

// @redis-cluster user-sessions:ADD

/** Spec 4.3 rules 2 and 6 under concurrency: consumed once, attached at most once, no 500, no orphans. */
describe('guest upgrade under concurrency', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await w.close();
  });

  it('20 parallel upgrades of one guest with one proof: exactly one succeeds', async () => {
    const c = w.client();
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const proof = await emailProof(w, c, 'parallel@example.com');
    const send = () =>
      w.t
        .auth()
        .post('/t/acme/guest/upgrade')
        .set('Authorization', `Bearer ${created.access_token}`)
        .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
        .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, proof_id: proof });
    const results = await Promise.all(Array.from({ length: 20 }, send));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    // The losers find the proof consumed, or the session already replaced.
    expect(statuses.every((s) => s === 200 || s === 400 || s === 401)).toBe(true);

    const identities = await w.t.pg.query(
      `SELECT user_id FROM identities WHERE provider_subject = 'parallel@example.com'`,
    );
    expect(identities.rows).toEqual([{ user_id: created.user_id }]);
    const audits = await w.t.pg.query(`SELECT count(*)::int AS n FROM audit_events WHERE subject = $1`, [
      created.user_id,
    ]);
    expect(audits.rows[0].n).toBe(1);
    const sessions = await w.t.pg.query(`SELECT count(*)::int AS n FROM sessions WHERE user_id = $1`, [
      created.user_id,
    ]);
    expect(sessions.rows[0].n).toBe(2);
    // The one provisional user made for the address is deactivated and owns nothing.
    const provisional = await w.t.pg.query(
      `SELECT u.status, (SELECT count(*)::int FROM identities i WHERE i.user_id = u.id) AS identities
         FROM users u WHERE u.kind = 'provisional' AND u.tenant_id = 'acme' AND u.created_at > (SELECT created_at FROM users WHERE id = $1)`,
      [created.user_id],
    );
    expect(provisional.rows).toEqual([{ status: 'deactivated', identities: 0 }]);
  });

  it('split between two instances sharing PostgreSQL and Redis, 20 parallel upgrades with one proof: exactly one succeeds', async () => {
    const second = await startTestApp({ RATE_LIMITS: 'off' }, { shareWith: w.t });
    try {
      const c = w.client();
      const created = await c.createGuest();
      await c.createLinkingIntent();
      const proof = await emailProof(w, c, 'two-instances@example.com');
      const send = (i: number) =>
        (i % 2 === 0 ? w.t : second)
          .auth()
          .post('/t/acme/guest/upgrade')
          .set('Authorization', `Bearer ${created.access_token}`)
          .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
          .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, proof_id: proof });
      const statuses = (await Promise.all(Array.from({ length: 20 }, (_, i) => send(i)))).map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.every((s) => s === 200 || s === 400 || s === 401)).toBe(true);
      const identities = await w.t.pg.query(
        `SELECT user_id FROM identities WHERE provider_subject = 'two-instances@example.com'`,
      );
      expect(identities.rows).toEqual([{ user_id: created.user_id }]);
    } finally {
      await second.close();
    }
  });

  it('two guests racing for one new email: the credential is attached exactly once, no orphaned rows', async () => {
    const countDeactivated = async (): Promise<number> =>
      (await w.t.pg.query(`SELECT count(*)::int AS n FROM users WHERE kind = 'provisional' AND status = 'deactivated'`))
        .rows[0].n as number;
    const base = await countDeactivated();
    const usersBefore = (await w.t.pg.query(`SELECT count(*)::int AS n FROM users WHERE kind = 'provisional'`)).rows[0]
      .n as number;
    for (let round = 0; round < 5; round++) {
      const email = `race-${round}@example.com`;
      const [a, b] = [w.client(), w.client()];
      await Promise.all([a.createGuest(), b.createGuest()]);
      await Promise.all([a.createLinkingIntent(), b.createLinkingIntent()]);
      // Odd rounds also race the proofs: both verifications resolve the new address at once, so
      // the unique (tenant, provider, subject) constraint decides which provisional user exists.
      const [pa, pb] =
        round % 2 === 1
          ? await racedEmailProofs(a, b, email)
          : [await emailProof(w, a, email), await emailProof(w, b, email)];
      const results = await Promise.all(
        [a.upgrade(pa), b.upgrade(pb)].map((p) =>
          p.then(
            () => 200,
            (e: { status: number; code: string }) => `${e.status} ${e.code}`,
          ),
        ),
      );
      expect(results.sort()).toEqual([200, '409 identity_in_use']);

      const owner = await w.t.pg.query(`SELECT user_id FROM identities WHERE provider_subject = $1`, [email]);
      expect(owner.rows).toHaveLength(1);
      expect([a.userId, b.userId]).toContain(owner.rows[0].user_id);
      // The one provisional user made for the address is now deactivated: exactly one more.
      expect(await countDeactivated()).toBe(base + round + 1);
    }
    // No active provisional user is left without its identity, and no identity points at a deactivated user.
    const orphans = await w.t.pg.query(
      `SELECT count(*)::int AS n FROM users u WHERE u.kind = 'provisional' AND u.status = 'active' AND NOT EXISTS (SELECT 1 FROM identities i WHERE i.user_id = u.id)`,
    );
    expect(orphans.rows[0].n).toBe(0);
    const dangling = await w.t.pg.query(
      `SELECT count(*)::int AS n FROM identities i JOIN users u ON u.id = i.user_id WHERE u.status = 'deactivated'`,
    );
    expect(dangling.rows[0].n).toBe(0);
    // Exactly one provisional user per address was ever made, raced proofs included.
    const usersAfter = (await w.t.pg.query(`SELECT count(*)::int AS n FROM users WHERE kind = 'provisional'`)).rows[0]
      .n as number;
    expect(usersAfter - usersBefore).toBe(5);
  });

  it('one guest upgrading with two credentials in two flows at once: one attaches, the other is refused without 409', async () => {
    const c = w.client();
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const first = await emailProof(w, c, 'two-flows-a@example.com');
    // A second browser flow of the same session (a second tab): its own cookie, intent and proof.
    const flowId = `flw_${Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString('base64url')}`;
    const intent = await w.t
      .auth()
      .post('/t/acme/guest/linking-intent')
      .set('Authorization', `Bearer ${created.access_token}`)
      .send({ client_id: 'cli_game', browser_flow_id: flowId })
      .expect(201);
    // A linking intent that starts a flow sets its cookie as guest creation does (spec 4.3).
    const setCookie = ([] as string[])
      .concat(intent.headers['set-cookie'] ?? [])
      .find((c) => c.startsWith(`__Host-svc_flow_${flowId}=`));
    expect(setCookie).toMatch(/; Max-Age=3600; Path=\/; .*HttpOnly; Secure; SameSite=Lax$/);
    expect(setCookie).not.toMatch(/Domain/i);
    const cookie = setCookie?.split(';')[0] as string;
    const after = w.t.smtp.messages.length;
    await w.t
      .auth()
      .post('/t/acme/email/start')
      .set('Cookie', cookie)
      .send({ client_id: 'cli_game', browser_flow_id: flowId, email: 'two-flows-b@example.com' })
      .expect(202);
    const code = await w.t.smtp.waitForCode('two-flows-b@example.com', { after });
    const second = (
      await w.t
        .auth()
        .post('/t/acme/email/verify')
        .set('Cookie', cookie)
        .send({ client_id: 'cli_game', browser_flow_id: flowId, email: 'two-flows-b@example.com', code })
        .expect(200)
    ).body.proof_id as string;

    const upgrade = (flow: string, flowCookie: string, proof: string) =>
      w.t
        .auth()
        .post('/t/acme/guest/upgrade')
        .set('Authorization', `Bearer ${created.access_token}`)
        .set('Cookie', flowCookie)
        .send({ client_id: 'cli_game', browser_flow_id: flow, proof_id: proof });
    const results = await Promise.all([
      upgrade(c.browserFlowId, `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`, first),
      upgrade(flowId, cookie, second),
    ]);
    const answers = results.map((r) => (r.status === 200 ? 200 : `${r.status} ${r.body.error}`)).sort();
    expect(answers[0]).toBe(200);
    expect(['400 invalid_proof', '401 unauthorized']).toContain(answers[1]);
    // The guest owns exactly one of the two; the other address stays with its provisional user.
    const owned = await w.t.pg.query(`SELECT count(*)::int AS n FROM identities WHERE user_id = $1`, [created.user_id]);
    expect(owned.rows[0].n).toBe(1);
    const kept = await w.t.pg.query(
      `SELECT u.kind, u.status FROM identities i JOIN users u ON u.id = i.user_id WHERE i.provider_subject IN ('two-flows-a@example.com', 'two-flows-b@example.com') AND u.id <> $1`,
      [created.user_id],
    );
    expect(kept.rows).toEqual([{ kind: 'provisional', status: 'active' }]);
    const audits = await w.t.pg.query(`SELECT count(*)::int AS n FROM audit_events WHERE subject = $1`, [
      created.user_id,
    ]);
    expect(audits.rows[0].n).toBe(1);
  });

  /** Codes are sent one after the other (the catcher tells mails apart by order), verified at once. */
  async function racedEmailProofs(a: GuestClient, b: GuestClient, email: string): Promise<[string, string]> {
    const codes: string[] = [];
    for (const c of [a, b]) {
      const after = w.t.smtp.messages.length;
      await c.startEmail(email);
      codes.push(await w.t.smtp.waitForCode(email, { after }));
    }
    const [pa, pb] = await Promise.all([
      a.verifyEmail(email, codes[0] as string),
      b.verifyEmail(email, codes[1] as string),
    ]);
    return [pa.proof_id, pb.proof_id];
  }

  it('20 concurrent sign-ins with one proof: exactly one session', async () => {
    const owner = w.client();
    await owner.createGuest();
    await owner.createLinkingIntent();
    await owner.upgrade(await emailProof(w, owner, 'signin-race@example.com'));
    const c = w.client();
    await c.createGuest();
    const proof = await emailProof(w, c, 'signin-race@example.com');
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        w.t
          .auth()
          .post('/t/acme/sign-in')
          .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
          .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, proof_id: proof }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.every((r) => r.status === 200 || r.status === 400)).toBe(true);
  });
});
