import { decodeJwt } from 'jose';
import { MemorySecureStorage } from '../../../sdk/src/secure-storage';
import { Client } from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { PG_BASE } from '../../support/database';
import { PrivateRedis } from '../../support/private-redis';
import { emailProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

/** The advisory lock a deferred trigger waits on at the upgrade's commit. */
const COMMIT_GATE = 4242;

/**
 * Spec 4.3 rule 4 and contract 13 when Redis fails at the worst moment: the credential move has
 * committed, and the revocation of the previous session and the activation of its replacement in
 * Redis fail, so the answer is 503. The old session must never be refreshed again, the
 * `guest.upgraded` audit row is part of the move's transaction (spec 6), and the player, who never
 * saw the replacement's tokens, must not be left without a usable token: the guest's refresh token
 * is handed the replacement, however long after the reuse interval Redis comes back.
 *
 * The moment is made exact: a deferred constraint trigger on `identities` holds the upgrade's
 * commit until the test lets it go, and in between the test takes every command away from the
 * service's Redis user (ACL), so the revocation right after the commit is refused by Redis.
 */
describe('guest upgrade whose revocation fails after the commit', () => {
  let redis: PrivateRedis;
  let w: GuestWorld;
  let gate: Client;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    w = await startGuestWorld({
      REDIS_URL: redis.url,
      RATE_LIMITS: 'off',
      DEPENDENCY_TIMEOUT_MS: '1000',
      REFRESH_REUSE_INTERVAL: '1',
    });
    await w.t.pg.query(`
      CREATE FUNCTION test_commit_gate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock(${COMMIT_GATE}); RETURN NULL; END $$`);
    await w.t.pg.query(`
      CREATE CONSTRAINT TRIGGER test_commit_gate AFTER UPDATE ON identities
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_commit_gate()`);
    gate = new Client({ connectionString: `${PG_BASE}/${w.t.databaseName}` });
    await gate.connect();
  });
  afterAll(async () => {
    await gate.end();
    await redis.serviceMay();
    await w.close();
    await redis.stop();
  });

  const refresh = (refreshToken: string) =>
    w.t
      .auth()
      .post('/t/acme/token')
      .send({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: 'cli_game' });

  async function waitingAtGate(): Promise<void> {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(20)) {
      const { rows } = await gate.query(
        `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`,
        [COMMIT_GATE],
      );
      if (rows.length > 0) return;
    }
    throw new Error('the upgrade never reached its commit');
  }

  it('answers 503; the old session is never renewed, the audit row committed with the move, and the guest’s token gets the replacement', async () => {
    const c = w.client();
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const proof = await emailProof(w, c, 'half-way@example.com');

    await gate.query('SELECT pg_advisory_lock($1)', [COMMIT_GATE]);
    const upgradeWith = (proofId: string) =>
      w.t
        .auth()
        .post('/t/acme/guest/upgrade')
        .set('Authorization', `Bearer ${created.access_token}`)
        .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
        .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, proof_id: proofId })
        .then((r) => r);
    const upgrade = upgradeWith(proof);
    try {
      await waitingAtGate();
      // A parallel upgrade of the same session is refused meanwhile; it must not take away the
      // mark of the one that is committing.
      expect((await upgradeWith('prf_NoSuchProof000000002')).body.error).toBe('invalid_proof');
      // Redis refuses the service everything from now on: the revocation after the commit fails.
      await redis.serviceMay('-@all');
    } finally {
      await gate.query('SELECT pg_advisory_unlock($1)', [COMMIT_GATE]);
    }
    const answer = await upgrade;
    expect({ status: answer.status, error: answer.body.error, token: answer.body.access_token }).toEqual({
      status: 503,
      error: 'temporarily_unavailable',
      token: undefined,
    });
    await redis.serviceMay();

    // The move committed with its audit row and the old session row marked revoked.
    const identity = await w.t.pg.query(
      `SELECT user_id FROM identities WHERE provider_subject = 'half-way@example.com'`,
    );
    expect(identity.rows).toEqual([{ user_id: created.user_id }]);
    const audit = await w.t.pg.query(`SELECT data FROM audit_events WHERE type = 'guest.upgraded' AND subject = $1`, [
      created.user_id,
    ]);
    expect(audit.rows).toEqual([{ data: expect.objectContaining({ old_session_id: created.session_id }) }]);
    // The replacement's row committed with the move, but it became live only after the commit,
    // in the Redis that refused: it was never activated, and its tokens were never answered.
    const replacement = (audit.rows[0] as { data: { new_session_id: string } }).data.new_session_id;
    expect((await w.t.pg.query(`SELECT user_id FROM sessions WHERE id = $1`, [replacement])).rows).toEqual([
      { user_id: created.user_id },
    ]);
    expect(await w.t.redis.exists(`s:{${replacement}}`)).toBe(0);
    const old = await w.t.pg.query(`SELECT revoked_at FROM sessions WHERE id = $1`, [created.session_id]);
    expect(old.rows[0].revoked_at).toBeInstanceOf(Date);
    // Redis still holds the old session (its revocation failed) and never the replacement.
    expect(await w.t.redis.hget(`s:{${created.session_id}}`, 'uid')).toBe(created.user_id);
    // Past the reuse interval: the answer was never sent, so the hand-over waits for the player.
    await sleep(1_300);
    // Five retries at once (tabs, the SDK's own): the replacement is rebuilt once, and every retry
    // gets the same token of it, of the upgraded account.
    const retries = await Promise.all(Array.from({ length: 5 }, () => refresh(created.refresh_token as string)));
    expect(retries.map((r) => [r.status, r.body.session_id])).toEqual(Array(5).fill([200, replacement]));
    expect(new Set(retries.map((r) => r.body.refresh_token)).size).toBe(1);
    const [taken] = retries;
    expect(decodeJwt(taken?.body.access_token as string)).toMatchObject({ sub: created.user_id, sid: replacement });
    const recovered = await w.t.pg.query(
      `SELECT data FROM audit_events WHERE type = 'session.recovered' AND subject = $1`,
      [created.user_id],
    );
    expect(recovered.rows).toEqual([
      { data: expect.objectContaining({ session_id: replacement, replaced_session_id: created.session_id }) },
    ]);
    // The old session itself is gone from Redis and its access token refused.
    expect(await w.t.redis.exists(`s:{${created.session_id}}`)).toBe(0);
    await w.t.auth().get('/t/acme/me').set('Authorization', `Bearer ${created.access_token}`).expect(401);
    const me = await w.t
      .auth()
      .get('/t/acme/me')
      .set('Authorization', `Bearer ${taken?.body.access_token}`)
      .expect(200);
    expect(me.body.user).toMatchObject({ id: created.user_id, guest: false });
    // Once the replacement is used, the guest's token gets nothing more.
    const next = await refresh(taken?.body.refresh_token as string).expect(200);
    expect((await refresh(created.refresh_token as string).expect(400)).body.error).toBe('invalid_grant');
    // Should Redis lose the replacement now, its row rebuilds it for the token its holder has.
    await w.t.redis.flushall();
    expect((await refresh(next.body.refresh_token as string).expect(200)).body.session_id).toBe(replacement);
  });

  it('the SDK’s upgrade met by that 503 resolves with the upgraded session once Redis is back', async () => {
    const storage = new MemorySecureStorage();
    const upgradeAnswers: number[] = [];
    const through = (async (url: string, init: RequestInit) => {
      const res = await fetch(url, init);
      if (url.endsWith('/guest/upgrade')) {
        upgradeAnswers.push(res.status);
        // Redis comes back a moment after the 503, while the SDK retries the refresh that follows.
        setTimeout(() => void redis.serviceMay(), 500);
      }
      return res;
    }) as typeof fetch;
    const c = w.client({ storage, fetch: through });
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const proof = await emailProof(w, c, 'sdk-half-way@example.com');
    await gate.query('SELECT pg_advisory_lock($1)', [COMMIT_GATE]);
    const upgrading = c.upgrade(proof);
    try {
      await waitingAtGate();
      await redis.serviceMay('-@all');
    } finally {
      await gate.query('SELECT pg_advisory_unlock($1)', [COMMIT_GATE]);
    }
    const upgraded = await upgrading;
    expect(upgradeAnswers).toEqual([503]);
    expect(upgraded).toMatchObject({
      user_id: created.user_id,
      linked_identity: { provider: 'email', provider_subject: 'sdk-half-way@example.com' },
    });
    expect(upgraded.session_id).not.toBe(created.session_id);
    expect(c.sessionId).toBe(upgraded.session_id);
    expect(await storage.get('svc-auth:acme:cli_game:refresh_token')).toBe(upgraded.refresh_token);
  });

  it('with the reuse rule off, the guest’s token is refused after such an upgrade, as every reuse is', async () => {
    const strict = await startGuestWorld({ REDIS_URL: redis.url, RATE_LIMITS: 'off', REFRESH_REUSE_INTERVAL: '0' });
    try {
      const c = strict.client();
      const created = await c.createGuest();
      await c.createLinkingIntent();
      await c.upgrade(await emailProof(strict, c, 'strict-hand-over@example.com'));
      // As after a 503: the answer's sending never noted, the replacement never live.
      await strict.t.pg.query(`UPDATE sessions SET successor_answered_at = NULL WHERE id = $1`, [created.session_id]);
      const res = await strict.t
        .auth()
        .post('/t/acme/token')
        .send({ grant_type: 'refresh_token', refresh_token: created.refresh_token, client_id: 'cli_game' });
      expect({ status: res.status, error: res.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
    } finally {
      await strict.close();
    }
  });

  it('an upgrade refused before the commit leaves the session an ordinary one that refreshes as before', async () => {
    const c = w.client();
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const refused = await w.t
      .auth()
      .post('/t/acme/guest/upgrade')
      .set('Authorization', `Bearer ${created.access_token}`)
      .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
      .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, proof_id: 'prf_NoSuchProof000000001' })
      .expect(400);
    expect(refused.body.error).toBe('invalid_proof');
    expect(await w.t.redis.hget(`s:{${created.session_id}}`, 'upg')).toBeNull();
    await refresh(created.refresh_token as string).expect(200);
  });

  it('checks inside the upgrade that the session is still live: a session revoked after the bearer check attaches nothing', async () => {
    const c = w.client();
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const proof = await emailProof(w, c, 'revoked-meanwhile@example.com');
    // The session's durable record says it has ended while its bearer still passes in Redis.
    await w.t.pg.query(`UPDATE sessions SET revoked_at = clock_timestamp() WHERE id = $1`, [created.session_id]);
    const res = await w.t
      .auth()
      .post('/t/acme/guest/upgrade')
      .set('Authorization', `Bearer ${created.access_token}`)
      .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
      .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, proof_id: proof })
      .expect(400);
    expect(res.body.error).toBe('invalid_proof');
    const attached = await w.t.pg.query(`SELECT count(*)::int AS n FROM identities WHERE user_id = $1`, [
      created.user_id,
    ]);
    expect(attached.rows[0].n).toBe(0);
    const audit = await w.t.pg.query(`SELECT count(*)::int AS n FROM audit_events WHERE subject = $1`, [
      created.user_id,
    ]);
    expect(audit.rows[0].n).toBe(0);
  });
});
