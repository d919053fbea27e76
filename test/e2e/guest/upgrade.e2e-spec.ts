import { whileIdentityWriteRefused, whileSessionInsertRefused } from '../../support/postgres-outage';
import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { GuestApiError, type GuestClient } from '../../../sdk/src/guest-client';
import { ClientsRepository } from '../../../src/directory/clients.repository';
import { emailProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

// @redis-cluster flow-records.store:CONSUME_FOR_UPGRADE flow-records.store:PUT_INTENT user-sessions:ADD

const status = (p: Promise<unknown>): Promise<number | string> =>
  p.then(
    () => 200,
    (e: GuestApiError) => (e instanceof GuestApiError ? `${e.status} ${e.code}` : String(e)),
  );

describe('guest upgrade by email (spec 4.3)', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await w.close();
  });

  async function guestWithIntent(): Promise<GuestClient> {
    const c = w.client();
    await c.createGuest();
    await c.createLinkingIntent();
    return c;
  }

  it('attaches the email to the guest: same user id, replacement session, old one revoked, audit row', async () => {
    const c = w.client();
    const created = await c.createGuest();
    const intent = await c.createLinkingIntent();
    expect(intent).toEqual({ intent_id: expect.stringMatching(/^lnk_/), expires_in: 600 });
    const proof = await emailProof(w, c, 'Player.One@Example.com');
    const oldToken = c.accessToken as string;
    const upgraded = await c.upgrade(proof);
    expect(upgraded).toMatchObject({
      user_id: created.user_id,
      linked_identity: {
        provider: 'email',
        provider_subject: 'player.one@example.com',
        email: 'player.one@example.com',
      },
      token_type: 'Bearer',
      scope: 'openid offline_access',
    });
    expect(upgraded.session_id).not.toBe(created.session_id);
    expect(decodeJwt(upgraded.access_token).sub).toBe(created.user_id);
    expect(upgraded.refresh_token).toEqual(expect.any(String));
    expect(upgraded.id_token).toEqual(expect.any(String));
    // The previous session is revoked: its access token no longer works, and its refresh token
    // never renews it (within the reuse interval it answers the replacement, in case this answer
    // was lost: upgrade-lost-answer.e2e-spec.ts).
    const old = await w.t
      .auth()
      .post('/t/acme/guest/linking-intent')
      .set('Authorization', `Bearer ${oldToken}`)
      .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId });
    expect(old.status).toBe(401);
    const renewed = await w.t
      .auth()
      .post('/t/acme/token')
      .send({ grant_type: 'refresh_token', refresh_token: created.refresh_token, client_id: 'cli_game' })
      .expect(200);
    expect(renewed.body.session_id).toBe(upgraded.session_id);
    expect(await w.t.redis.exists(`s:{${created.session_id}}`)).toBe(0);

    const identity = await w.t.pg.query(
      `SELECT user_id FROM identities WHERE tenant_id = 'acme' AND provider_subject = 'player.one@example.com'`,
    );
    expect(identity.rows).toEqual([{ user_id: created.user_id }]);
    const users = await w.t.pg.query(
      `SELECT kind, status FROM users WHERE tenant_id = 'acme' AND id IN (SELECT user_id FROM identities WHERE provider_subject = 'player.one@example.com') OR (kind = 'provisional' AND status = 'deactivated' AND tenant_id = 'acme')`,
    );
    expect(users.rows).toEqual(
      expect.arrayContaining([
        { kind: 'regular', status: 'active' },
        { kind: 'provisional', status: 'deactivated' },
      ]),
    );
    const audit = await w.t.pg.query(`SELECT type, tenant_id, subject, data FROM audit_events WHERE subject = $1`, [
      created.user_id,
    ]);
    expect(audit.rows).toEqual([
      {
        type: 'guest.upgraded',
        tenant_id: 'acme',
        subject: created.user_id,
        data: {
          old_session_id: created.session_id,
          new_session_id: upgraded.session_id,
          provider: 'email',
          client_id: 'cli_game',
        },
      },
    ]);
  });

  it('refuses an address with a quoted local part at email/start (400 invalid_request), and mails nothing', async () => {
    const c = await guestWithIntent();
    await expect(c.startEmail('"catcher@elsewhere.example x"@acme.example')).rejects.toMatchObject({
      code: 'invalid_request',
    });
    expect(w.t.smtp.countFor('catcher@elsewhere.example')).toBe(0);
  });

  it('renews the flow’s intent for the same session and refuses it to any other session (409 intent_conflict)', async () => {
    const c = w.client();
    await c.createGuest();
    const first = await w.t
      .auth()
      .post('/t/acme/guest/linking-intent')
      .set('Authorization', `Bearer ${c.accessToken}`)
      .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
      .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId })
      .expect(201);
    const renewed = await w.t
      .auth()
      .post('/t/acme/guest/linking-intent')
      .set('Authorization', `Bearer ${c.accessToken}`)
      .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
      .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId })
      .expect(200);
    expect(renewed.body.intent_id).toBe(first.body.intent_id);
    const other = w.client();
    await other.createGuest();
    const conflict = await w.t
      .auth()
      .post('/t/acme/guest/linking-intent')
      .set('Authorization', `Bearer ${other.accessToken}`)
      .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
      .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toBe('intent_conflict');
  });

  it('refuses a linking intent once the guest’s client is disabled (400 invalid_client), before judging the guest', async () => {
    await w.t.app.get(ClientsRepository).insert({
      id: 'cli_later_off',
      tenantId: 'acme',
      name: 'cli_later_off',
      type: 'browser',
      enabled: true,
      scopes: ['openid', 'offline_access'],
      redirectUris: ['https://play.acme.example/auth'],
      secretDigest: null,
    });
    const c = w.client({ clientId: 'cli_later_off' });
    const created = await c.createGuest();
    await w.t.pg.query(`UPDATE clients SET enabled = false WHERE id = 'cli_later_off'`);
    expect(await status(c.createLinkingIntent())).toBe('400 invalid_client');
    // A guest no longer active is refused too, and the client's refusal still comes first.
    await w.t.pg.query(`UPDATE users SET status = 'deactivated', deactivated_at = now() WHERE id = $1`, [
      created.user_id,
    ]);
    expect(await status(c.createLinkingIntent())).toBe('400 invalid_client');
    await w.t.pg.query(`UPDATE clients SET enabled = true WHERE id = 'cli_later_off'`);
    expect(await status(c.createLinkingIntent())).toBe('400 invalid_proof');
  });

  it('accepts the guest’s own upgrade proof at the linking intent, once', async () => {
    const c = w.client();
    const created = await c.createGuest();
    expect(await status(c.createLinkingIntent({ upgradeProofId: created.upgrade_proof.proof_id }))).toBe(200);
    expect(await status(c.createLinkingIntent({ upgradeProofId: created.upgrade_proof.proof_id }))).toBe(
      '400 invalid_proof',
    );
    const other = w.client();
    const otherCreated = await other.createGuest();
    expect(await status(c.createLinkingIntent({ upgradeProofId: otherCreated.upgrade_proof.proof_id }))).toBe(
      '400 invalid_proof',
    );
  });

  it('refuses a missing proof and a missing intent with 400 invalid_proof', async () => {
    const c = await guestWithIntent();
    expect(await status(c.upgrade('prf_AAAAAAAAAAAAAAAAAAAAAA'))).toBe('400 invalid_proof');
    const noIntent = w.client();
    await noIntent.createGuest();
    const proof = await emailProof(w, noIntent, 'no-intent@example.com');
    expect(await status(noIntent.upgrade(proof))).toBe('400 invalid_proof');
  });

  /** Raw calls in another's browser flow, with its cookie, as a second tab of that browser would. */
  const inFlow = (c: GuestClient) => {
    const cookie = `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`;
    const post = (path: string, body: Record<string, string>, bearer?: string) => {
      const req = w.t.auth().post(`/t/acme/${path}`).set('Cookie', cookie);
      return (bearer ? req.set('Authorization', `Bearer ${bearer}`) : req).send({
        browser_flow_id: c.browserFlowId,
        ...body,
      });
    };
    return {
      post,
      async emailProof(clientId: string, email: string): Promise<string> {
        const after = w.t.smtp.messages.length;
        await post('email/start', { client_id: clientId, email }).expect(202);
        const code = await w.t.smtp.waitForCode(email, { after });
        return (await post('email/verify', { client_id: clientId, email, code }).expect(200)).body.proof_id as string;
      },
    };
  };

  it('refuses a replayed proof, even with a fresh intent in the same flow', async () => {
    const c = await guestWithIntent();
    const proof = await emailProof(w, c, 'replay@example.com');
    expect(await status(c.upgrade(proof))).toBe(200);
    // A second guest of the same browser flow takes the (now free) intent and replays the proof.
    const flow = inFlow(c);
    const second = (await flow.post('guest', { client_id: 'cli_game' }).expect(201)).body as {
      access_token: string;
      user_id: string;
    };
    await flow.post('guest/linking-intent', { client_id: 'cli_game' }, second.access_token).expect(201);
    const replay = await flow.post('guest/upgrade', { client_id: 'cli_game', proof_id: proof }, second.access_token);
    expect({ status: replay.status, error: replay.body.error }).toEqual({ status: 400, error: 'invalid_proof' });
    const owners = await w.t.pg.query(`SELECT user_id FROM identities WHERE provider_subject = 'replay@example.com'`);
    expect(owners.rows).toEqual([{ user_id: c.userId }]);
  });

  it('refuses another guest’s upgrade proof at the linking intent even in the same browser flow, and leaves it to its guest', async () => {
    const c = w.client();
    const created = await c.createGuest();
    // A second guest of the same browser flow (its cookie, its client, its tenant): only the user
    // and session the proof was issued to may present it.
    const flow = inFlow(c);
    const second = (await flow.post('guest', { client_id: 'cli_game' }).expect(201)).body as { access_token: string };
    const taken = await flow.post(
      'guest/linking-intent',
      { client_id: 'cli_game', upgrade_proof_id: created.upgrade_proof.proof_id },
      second.access_token,
    );
    expect({ status: taken.status, error: taken.body.error }).toEqual({ status: 400, error: 'invalid_proof' });
    // Not consumed by that attempt: its own guest still presents it.
    expect(await status(c.createLinkingIntent({ upgradeProofId: created.upgrade_proof.proof_id }))).toBe(200);
  });

  it('leaves the upgrade proof unspent when the linking intent is refused 409 intent_conflict', async () => {
    const c = w.client();
    const created = await c.createGuest();
    const proofId = created.upgrade_proof.proof_id;
    const mine = c.accessToken as string;
    // A second guest of the same browser flow holds the flow's one live intent.
    const flow = inFlow(c);
    const second = (await flow.post('guest', { client_id: 'cli_game' }).expect(201)).body as { access_token: string };
    await flow.post('guest/linking-intent', { client_id: 'cli_game' }, second.access_token).expect(201);
    const refused = await flow.post('guest/linking-intent', { client_id: 'cli_game', upgrade_proof_id: proofId }, mine);
    expect({ status: refused.status, error: refused.body.error }).toEqual({ status: 409, error: 'intent_conflict' });
    // That intent ends (its lifetime, cut short here): the refused request spent nothing, so the
    // proof still serves its guest, once.
    await w.t.redis.del(`g:{${c.browserFlowId}}:intent`);
    await flow.post('guest/linking-intent', { client_id: 'cli_game', upgrade_proof_id: proofId }, mine).expect(201);
    const again = await flow.post('guest/linking-intent', { client_id: 'cli_game', upgrade_proof_id: proofId }, mine);
    expect({ status: again.status, error: again.body.error }).toEqual({ status: 400, error: 'invalid_proof' });
  });

  it('consumes the intent even when the upgrade is refused (409): the intent cannot be replayed', async () => {
    const owner = await guestWithIntent();
    await owner.upgrade(await emailProof(w, owner, 'intent-once@example.com'));
    const c = await guestWithIntent();
    expect(await status(c.upgrade(await emailProof(w, c, 'intent-once@example.com')))).toBe('409 identity_in_use');
    // The intent went with that attempt: a good proof alone is now refused.
    expect(await status(c.upgrade(await emailProof(w, c, 'intent-once-b@example.com')))).toBe('400 invalid_proof');
    // A new intent, then a credential proven after it, succeeds.
    await c.createLinkingIntent();
    expect(await status(c.upgrade(await emailProof(w, c, 'intent-once-c@example.com')))).toBe(200);
  });

  it('refuses a proof of another flow (flow-mismatched)', async () => {
    const c = await guestWithIntent();
    const elsewhere = w.client();
    const proof = await emailProof(w, elsewhere, 'other-flow@example.com');
    expect(await status(c.upgrade(proof))).toBe('400 invalid_proof');
  });

  it('refuses a proof of another tenant (cross-tenant)', async () => {
    const c = await guestWithIntent();
    // A flow belongs to its tenant: the same flow id, even with its cookie, cannot start a proof at
    // another tenant. (The SDK, refused there, would move to a fresh flow of its own.)
    const sameFlowAtBeta = await w.t
      .auth()
      .post('/t/beta/email/start')
      .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
      .send({ client_id: 'cli_beta', browser_flow_id: c.browserFlowId, email: 'cross-tenant@example.com' });
    expect({ status: sameFlowAtBeta.status, error: sameFlowAtBeta.body.error }).toEqual({
      status: 403,
      error: 'forbidden',
    });
    // A proof from a flow of the other tenant is refused at this tenant's upgrade.
    const beta = w.client({ tenantId: 'beta', clientId: 'cli_beta' });
    const proof = await emailProof(w, beta, 'cross-tenant@example.com');
    const res = await w.t
      .auth()
      .post('/t/acme/guest/upgrade')
      .set('Authorization', `Bearer ${c.accessToken}`)
      .set(
        'Cookie',
        `__Host-svc_flow_${beta.browserFlowId}=${beta.flowCookie()}; __Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`,
      )
      .send({ client_id: 'cli_game', browser_flow_id: beta.browserFlowId, proof_id: proof });
    // beta's flow is unknown to acme's tenant binding: refused before any proof is looked at.
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 403, error: 'forbidden' });
    const attached = await w.t.pg.query(`SELECT count(*)::int AS n FROM identities WHERE user_id = $1`, [c.userId]);
    expect(attached.rows[0].n).toBe(0);
    expect(await status(c.upgrade(proof))).toBe('400 invalid_proof');
  });

  it('refuses a proof obtained by another client of the tenant (cross-client proof)', async () => {
    const c = await guestWithIntent();
    const native = w.client({ clientId: 'cli_native' });
    await native.createGuest();
    const proof = await emailProof(w, native, 'cross-client@example.com');
    expect(await status(c.upgrade(proof))).toBe('400 invalid_proof');
    // The same, inside the guest's own flow and cookie: only the proof's client differs.
    const sameFlow = await inFlow(c).emailProof('cli_native', 'cross-client-same-flow@example.com');
    expect(await status(c.upgrade(sameFlow))).toBe('400 invalid_proof');
    const attached = await w.t.pg.query(`SELECT count(*)::int AS n FROM identities WHERE user_id = $1`, [c.userId]);
    expect(attached.rows[0].n).toBe(0);
  });

  it('refuses an intent of another client (cross-client intent)', async () => {
    // The flow's intent belongs to a native-client guest; a browser-client guest of the same flow
    // brings a browser-client proof.
    const native = w.client({ clientId: 'cli_native' });
    await native.createGuest();
    await native.createLinkingIntent();
    const flow = inFlow(native);
    const game = (await flow.post('guest', { client_id: 'cli_game' }).expect(201)).body as {
      access_token: string;
      user_id: string;
    };
    const proof = await flow.emailProof('cli_game', 'cross-client-intent@example.com');
    const res = await flow.post('guest/upgrade', { client_id: 'cli_game', proof_id: proof }, game.access_token);
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error: 'invalid_proof' });
    // Nor can the intent's own guest use the other client's proof, under either client id.
    const asNative = await flow.post(
      'guest/upgrade',
      { client_id: 'cli_native', proof_id: proof },
      native.accessToken as string,
    );
    const asGame = await flow.post(
      'guest/upgrade',
      { client_id: 'cli_game', proof_id: proof },
      native.accessToken as string,
    );
    expect([asNative.status, asNative.body.error, asGame.status, asGame.body.error]).toEqual([
      400,
      'invalid_proof',
      400,
      'invalid_proof',
    ]);
    const attached = await w.t.pg.query(`SELECT count(*)::int AS n FROM identities WHERE user_id = ANY($1)`, [
      [native.userId, game.user_id],
    ]);
    expect(attached.rows[0].n).toBe(0);
  });

  it('refuses an intent of another session (cross-session)', async () => {
    const c = await guestWithIntent();
    // A second guest in the same browser flow, with the flow's cookie, but not the intent's session.
    const same = w.client({ browserFlowId: c.browserFlowId });
    const created = await w.t
      .auth()
      .post('/t/acme/guest')
      .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
      .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId })
      .expect(201);
    const proof = await emailProof(w, c, 'cross-session@example.com');
    const res = await w.t
      .auth()
      .post('/t/acme/guest/upgrade')
      .set('Authorization', `Bearer ${created.body.access_token}`)
      .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
      .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, proof_id: proof });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_proof');
    expect(same.browserFlowId).toBe(c.browserFlowId);
    // The rightful session still can.
    expect(await status(c.upgrade(proof))).toBe(200);
  });

  it('refuses the upgrade without the flow cookie', async () => {
    const c = await guestWithIntent();
    const proof = await emailProof(w, c, 'no-cookie@example.com');
    const res = await w.t
      .auth()
      .post('/t/acme/guest/upgrade')
      .set('Authorization', `Bearer ${c.accessToken}`)
      .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, proof_id: proof });
    expect(res.status).toBe(403);
    expect(await status(c.upgrade(proof))).toBe(200);
  });

  it('a 409 identity_in_use leaves the proof for sign-in in the same flow, and the guest session live (contract 13)', async () => {
    const owner = await guestWithIntent();
    await owner.upgrade(await emailProof(w, owner, 'one-code@example.com'));
    const c = await guestWithIntent();
    const proof = await emailProof(w, c, 'one-code@example.com');
    expect(await status(c.upgrade(proof))).toBe('409 identity_in_use');
    // No second code: the same proof signs the player in to the account that owns the address.
    const flow = inFlow(c);
    const [a, b] = await Promise.all([
      flow.post('sign-in', { client_id: 'cli_game', proof_id: proof }),
      flow.post('sign-in', { client_id: 'cli_game', proof_id: proof }),
    ]);
    // Still one-time: of two sign-ins with it, exactly one succeeds.
    expect([a.status, b.status].sort()).toEqual([200, 400]);
    expect((a.status === 200 ? a : b).body.user_id).toBe(owner.userId);
    // The guest's session was left as it was.
    expect(await status(c.createLinkingIntent())).toBe(200);
  });

  it('a proof refused with 409 because another guest took its credential since it was issued still signs in to the credential’s owner (contract 13)', async () => {
    // One player, two devices: both prove the same new address, so both proofs name the
    // provisional user the first code made.
    const first = await guestWithIntent();
    const second = await guestWithIntent();
    const firstProof = await emailProof(w, first, 'two-devices@example.com');
    const secondProof = await emailProof(w, second, 'two-devices@example.com');
    await first.upgrade(firstProof);
    expect(await status(second.upgrade(secondProof))).toBe('409 identity_in_use');
    // No second code: the same proof signs in to the account that holds the address now.
    expect((await second.signIn(secondProof)).user_id).toBe(first.userId);
  });

  it('an upgrade PostgreSQL refused inside its transaction (503) spends neither intent nor proof: the retry upgrades', async () => {
    const c = await guestWithIntent();
    const proof = await emailProof(w, c, 'flaky-upgrade@example.com');
    // A serialization failure on the credential's move, after the intent and proof were taken.
    await whileIdentityWriteRefused(w.t.pg, 'UPDATE', 'flaky-upgrade@example.com', async () => {
      expect(await status(c.upgrade(proof))).toBe('503 temporarily_unavailable');
    });
    const upgraded = await c.upgrade(proof);
    expect(upgraded).toMatchObject({
      user_id: c.userId,
      linked_identity: { provider: 'email', provider_subject: 'flaky-upgrade@example.com' },
    });
    const audit = await w.t.pg.query(`SELECT 1 FROM audit_events WHERE type = 'guest.upgraded' AND subject = $1`, [
      c.userId,
    ]);
    expect(audit.rows).toHaveLength(1);
  });

  it('a sign-in PostgreSQL refused inside its transaction (503) keeps its proof: the retry signs in (contract 13)', async () => {
    const owner = await guestWithIntent();
    await owner.upgrade(await emailProof(w, owner, 'flaky-sign-in@example.com'));
    const c = w.client();
    await c.createGuest();
    const proof = await emailProof(w, c, 'flaky-sign-in@example.com');
    // A serialization failure on the new session's row, after the proof was taken.
    await whileSessionInsertRefused(w.t.pg, owner.userId as string, async () => {
      expect(await status(c.signIn(proof))).toBe('503 temporarily_unavailable');
    });
    expect((await c.signIn(proof)).user_id).toBe(owner.userId);
  });

  it('a proof whose credential was erased since it was issued is refused as a proof, not as a credential in use', async () => {
    const owner = await guestWithIntent();
    await owner.upgrade(await emailProof(w, owner, 'erased-since@example.com'));
    const c = await guestWithIntent();
    const stale = await emailProof(w, c, 'erased-since@example.com');
    // The account that held the address is deleted (contract 13): nobody owns the address now.
    await owner.deleteAccount();
    expect(await status(c.upgrade(stale))).toBe('400 invalid_proof');
    // The address is free: a fresh proof attaches it to this guest.
    await c.createLinkingIntent();
    expect(await c.upgrade(await emailProof(w, c, 'erased-since@example.com'))).toMatchObject({ user_id: c.userId });
  });

  it('answers 409 identity_in_use for a credential another account owns, and merges nothing', async () => {
    const owner = w.client();
    await owner.createGuest();
    await owner.createLinkingIntent();
    await owner.upgrade(await emailProof(w, owner, 'taken@example.com'));
    const c = await guestWithIntent();
    const proof = await emailProof(w, c, 'taken@example.com');
    expect(await status(c.upgrade(proof))).toBe('409 identity_in_use');
    const rows = await w.t.pg.query(`SELECT user_id FROM identities WHERE provider_subject = 'taken@example.com'`);
    expect(rows.rows).toEqual([{ user_id: owner.userId }]);
    // The guest keeps its session and can sign in to the other account explicitly instead.
    expect(await status(c.createLinkingIntent())).toBe(200);
    const signIn = w.client();
    await signIn.createGuest();
    const signInProof = await emailProof(w, signIn, 'taken@example.com');
    const signedIn = await signIn.signIn(signInProof);
    expect(signedIn.user_id).toBe(owner.userId);
  });

  it('refuses a provisional user created before the intent', async () => {
    const c = w.client();
    await c.createGuest();
    // The address is proven (a provisional user is made) before this guest's intent exists.
    const early = await emailProof(w, c, 'early@example.com');
    await c.createLinkingIntent();
    const proof = await emailProof(w, c, 'early@example.com');
    expect(early).not.toBe(proof);
    expect(await status(c.upgrade(proof))).toBe('409 identity_in_use');
  });

  it('refuses a provisional user that already had a session (signed in once)', async () => {
    const first = w.client();
    await first.createGuest();
    const c = await guestWithIntent();
    // Proven after the intent, but signed in to before the upgrade: no longer pristine.
    await first.signIn(await emailProof(w, first, 'used@example.com'));
    const proof = await emailProof(w, c, 'used@example.com');
    expect(await status(c.upgrade(proof))).toBe('409 identity_in_use');
  });

  // Spec 4.3 rule 6: pristine means no other identity and never a session, membership or consent.
  it.each([
    [
      'owns another identity',
      `INSERT INTO identities (id, tenant_id, user_id, provider, provider_subject)
       VALUES ('idn_' || md5($1), 'acme', $1, 'chat_platform', 'chat-' || md5($1))`,
    ],
    ['holds a membership', `INSERT INTO memberships (tenant_id, user_id, role) VALUES ('acme', $1, 'viewer')`],
    ['gave a consent', `INSERT INTO consents (tenant_id, user_id, client_id) VALUES ('acme', $1, 'cli_game')`],
  ])('refuses a provisional user that %s, and leaves the identity with it', async (_, fact) => {
    const c = await guestWithIntent();
    const address = `not-pristine-${randomUUID()}@example.com`;
    const proof = await emailProof(w, c, address);
    const owned = `SELECT user_id FROM identities WHERE provider = 'email' AND provider_subject = $1`;
    const [owner] = (await w.t.pg.query<{ user_id: string }>(owned, [address])).rows;
    expect(owner?.user_id).not.toBe(c.userId);
    await w.t.pg.query(fact, [owner?.user_id]);
    expect(await status(c.upgrade(proof))).toBe('409 identity_in_use');
    expect((await w.t.pg.query(owned, [address])).rows).toEqual([{ user_id: owner?.user_id }]);
  });

  it('refuses an email proof that does not name a verified address (spec 4.3 rule 3)', async () => {
    const c = await guestWithIntent();
    const proof = await emailProof(w, c, 'unverified@example.com');
    // Every email proof the service issues is verified: the record is altered to one that is not.
    const key = `g:{${c.browserFlowId}}:prf:${proof}`;
    const record = JSON.parse((await w.t.redis.get(key)) ?? 'null') as Record<string, unknown>;
    expect(record).toMatchObject({ provider: 'email', emailVerified: true });
    await w.t.redis.set(key, JSON.stringify({ ...record, emailVerified: false }), 'KEEPTTL');
    expect(await status(c.upgrade(proof))).toBe('400 invalid_proof');
    const kind = await w.t.pg.query(`SELECT kind FROM users WHERE id = $1`, [c.userId]);
    expect(kind.rows).toEqual([{ kind: 'guest' }]);
  });

  it('refuses an upgrade of a token for another client than the body', async () => {
    const c = await guestWithIntent();
    const proof = await emailProof(w, c, 'client-mismatch@example.com');
    const res = await w.t
      .auth()
      .post('/t/acme/guest/upgrade')
      .set('Authorization', `Bearer ${c.accessToken}`)
      .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
      .send({ client_id: 'cli_native', browser_flow_id: c.browserFlowId, proof_id: proof });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_proof');
  });

  it('refuses a guest token of another tenant', async () => {
    const c = await guestWithIntent();
    const res = await w.t
      .auth()
      .post('/t/beta/guest/upgrade')
      .set('Authorization', `Bearer ${c.accessToken}`)
      .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, proof_id: 'prf_AAAAAAAAAAAAAAAAAAAAAA' });
    expect(res.status).toBe(401);
  });

  it('a code whose proof PostgreSQL refused to make (503) is not spent: the retry with it gets the proof (contract 13)', async () => {
    const c = await guestWithIntent();
    const after = w.t.smtp.messages.length;
    await c.startEmail('flaky-verify@example.com');
    const code = await w.t.smtp.waitForCode('flaky-verify@example.com', { after });
    // The new address's identity cannot be written (a serialization failure) after the code matched.
    await whileIdentityWriteRefused(w.t.pg, 'INSERT', 'flaky-verify@example.com', async () => {
      expect(await status(c.verifyEmail('flaky-verify@example.com', code))).toBe('503 temporarily_unavailable');
    });
    const { proof_id } = await c.verifyEmail('flaky-verify@example.com', code);
    expect(await c.upgrade(proof_id)).toMatchObject({ user_id: c.userId });
    // Still one-time: the code is spent with the proof it produced.
    expect(await status(c.verifyEmail('flaky-verify@example.com', code))).toBe('400 invalid_code');
  });

  it('refuses a wrong email code with 400 invalid_code and issues no proof', async () => {
    const c = w.client();
    await c.createGuest();
    await c.startEmail('wrong-code@example.com');
    await expect(c.verifyEmail('wrong-code@example.com', '000000')).rejects.toMatchObject({
      status: 400,
      code: 'invalid_code',
    });
  });
});

describe('expired intents and proofs', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({
      RATE_LIMITS: 'off',
      PROVIDER_PROOF_TTL: '1',
      LINKING_INTENT_TTL: '2',
      UPGRADE_PROOF_TTL: '1',
    });
  });
  afterAll(async () => {
    await w.close();
  });

  it('refuses an expired proof', async () => {
    const c = w.client();
    await c.createGuest();
    const proof = await emailProof(w, c, 'late@example.com');
    await new Promise((r) => setTimeout(r, 1200));
    await c.createLinkingIntent();
    expect(await status(c.upgrade(proof))).toBe('400 invalid_proof');
  });

  /**
   * Spec 2.4 and 8, contract 1: the upgrade proof from guest creation lives UPGRADE_PROOF_TTL
   * seconds in Redis; past it, a linking intent presenting it is refused and none is created.
   */
  it('refuses the upgrade proof from guest creation at the linking intent once UPGRADE_PROOF_TTL has passed', async () => {
    const c = w.client();
    const created = await c.createGuest();
    expect(created.upgrade_proof.expires_in).toBe(1);
    await new Promise((r) => setTimeout(r, 1200));
    const flowKeys = async () => (await w.t.redisKeys()).filter((k) => k.includes(c.browserFlowId));
    const before = await flowKeys();
    expect(await status(c.createLinkingIntent({ upgradeProofId: created.upgrade_proof.proof_id }))).toBe(
      '400 invalid_proof',
    );
    expect(await flowKeys()).toEqual(before);
  });

  it('refuses an expired intent', async () => {
    const c = w.client();
    await c.createGuest();
    await c.createLinkingIntent();
    await new Promise((r) => setTimeout(r, 2200));
    const proof = await emailProof(w, c, 'late-intent@example.com');
    expect(await status(c.upgrade(proof))).toBe('400 invalid_proof');
  });

  /**
   * The player was slow to read the code: the intent lapsed, but the verification still made the
   * address's provisional user. The session's next intent in this flow keeps the lapsed one's
   * creation time, so that user is still younger than the intent (spec 4.3 rule 6) and starting
   * over attaches the address instead of answering 409 for good.
   */
  it('after an intent lapsed during the code round trip, starting over upgrades and keeps the user id', async () => {
    const c = w.client();
    const created = await c.createGuest();
    await c.createLinkingIntent();
    await new Promise((r) => setTimeout(r, 2200));
    const late = await emailProof(w, c, 'slow-reader@example.com');
    expect(await status(c.upgrade(late))).toBe('400 invalid_proof');
    await c.createLinkingIntent();
    const upgraded = await c.upgrade(await emailProof(w, c, 'slow-reader@example.com'));
    expect(upgraded.user_id).toBe(created.user_id);
  });

  it('a lapsed intent of an earlier guest session in the same flow lends a later session nothing', async () => {
    const c = w.client();
    await c.createGuest();
    await c.createLinkingIntent();
    await new Promise((r) => setTimeout(r, 2200));
    await emailProof(w, c, 'earlier-session@example.com');
    // Another guest in the same browser flow: the address's provisional user is older than its intent.
    await c.createGuest();
    await c.createLinkingIntent();
    const proof = await emailProof(w, c, 'earlier-session@example.com');
    expect(await status(c.upgrade(proof))).toBe('409 identity_in_use');
  });
});
