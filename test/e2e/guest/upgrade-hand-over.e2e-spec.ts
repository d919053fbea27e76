import { Client } from 'pg';
import { setTimeout as sleep } from 'node:timers/promises';
import { PG_BASE } from '../../support/database';
import { emailProof, refreshGrant, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

/**
 * The upgrade's hand-over kept on the replaced session's row (contract 13, spec 4.3 rule 4): only
 * the holder of the guest's last refresh token gets the replacement, never a replacement that has
 * ended, and two holders of one account are caught however the replacement came to be live.
 */
describe('an upgrade’s hand-over to the guest’s token', () => {
  let w: GuestWorld;
  let lock: Client;

  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
    lock = new Client({ connectionString: `${PG_BASE}/${w.t.databaseName}` });
    await lock.connect();
  });
  afterAll(async () => {
    await lock.end();
    await w.close();
  });

  /** Every key of this deployment gone, the dataset's epoch included: what a flush leaves. */
  const loseRedis = async (): Promise<void> => {
    for (const k of await w.t.redisKeys()) await w.t.redis.del(k);
  };

  async function someoneWaitsOnALock(): Promise<void> {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(20)) {
      const { rows } = await lock.query(
        `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      if (rows.length > 0) return;
    }
    throw new Error('the upgrade never waited on the guest row');
  }

  async function upgraded(email: string) {
    const c = w.client();
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const answer = await c.upgrade(await emailProof(w, c, email));
    return { created, answer };
  }

  it('a guest token that is not the last one (rotated twice since) is not handed the replacement', async () => {
    // Contract 13: only the token rotated last may be answered again; "any other earlier token ...
    // is a replay". A token the guest rotated away twice between the start of the upgrade and its
    // commit must not get the replacement, nor take it from the player.
    const c = w.client();
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const proof = await emailProof(w, c, 'rotated-meanwhile@example.com');

    // Hold the guest's user row: the upgrade (marked, generation 0 noted) waits in moveIdentity.
    await lock.query('BEGIN');
    await lock.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [created.user_id]);
    const upgrade = w.t
      .auth()
      .post('/t/acme/guest/upgrade')
      .set('Authorization', `Bearer ${created.access_token}`)
      .set('Cookie', `__Host-svc_flow_${c.browserFlowId}=${c.flowCookie()}`)
      .send({ client_id: 'cli_game', browser_flow_id: c.browserFlowId, proof_id: proof })
      .then((r) => r);
    try {
      await someoneWaitsOnALock();
      // Meanwhile the player's other tab refreshes twice: the upgrade has not committed, so the
      // session rotates 0 -> 1 -> 2.
      const first = (await refreshGrant(w, created.refresh_token as string).expect(200)).body.refresh_token as string;
      await refreshGrant(w, first).expect(200);
    } finally {
      await lock.query('COMMIT');
    }
    const answer = await upgrade;
    expect(answer.status).toBe(200);

    // Generation 0 is neither the last token nor the one rotated last (possibly stolen): refused.
    const stale = await refreshGrant(w, created.refresh_token as string);
    expect({ status: stale.status, error: stale.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
    // The player who got the upgrade's answer keeps the upgraded session.
    expect((await refreshGrant(w, answer.body.refresh_token as string).expect(200)).body.session_id).toBe(
      answer.body.session_id,
    );
  });

  it('a replacement whose revocation is recorded (its Redis half still pending) is not handed to the guest token', async () => {
    // The replacement's row says it ended (a console or CLI revocation whose Redis step has not run
    // yet, as the pending-revocations worker carries out): the ordinary refresh of it is refused by
    // the row, so the hand-over must not mint fresh tokens of it either.
    const { created, answer } = await upgraded('revoked-replacement@example.com');
    await w.t.pg.query(`UPDATE sessions SET revoked_at = clock_timestamp() WHERE id = $1`, [answer.session_id]);
    const handed = await refreshGrant(w, created.refresh_token as string);
    expect({ status: handed.status, error: handed.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
  });

  it('after Redis lost the replacement, the guest token taking it over never cuts off the answer’s holder unnoticed', async () => {
    // Contract 13 / spec 2.2 as upgrade-lost-answer's "two holders" test has it: when the guest's
    // token took the replacement over and the upgrade's own token turns up too, one of the two
    // holders is not the player, so the session ends and the replay is recorded. The replacement
    // rebuilt for the hand-over must keep the secret the upgrade answered with for that.
    const { created, answer } = await upgraded('two-holders-after-loss@example.com');
    await loseRedis();
    // Within the reuse interval of the sent answer: the guest's token, then the upgrade's own.
    const taken = await refreshGrant(w, created.refresh_token as string);
    const own = await refreshGrant(w, answer.refresh_token as string);
    const takenLivesOn =
      taken.status === 200 && (await refreshGrant(w, taken.body.refresh_token as string)).status === 200;
    const replays = await w.t.pg.query(`SELECT 1 FROM audit_events WHERE type = 'refresh.replayed' AND subject = $1`, [
      created.user_id,
    ]);
    // Either the player's own token keeps the session (the guest's got nothing), or both holders
    // are cut off and the replay recorded, as while Redis holds the replacement. Never the player
    // refused while the other holder keeps the account unnoticed.
    const outcome = { ownKeeps: own.status === 200, takenLivesOn, replayRecorded: (replays.rowCount ?? 0) > 0 };
    expect([
      { ownKeeps: true, takenLivesOn: false, replayRecorded: false },
      { ownKeeps: false, takenLivesOn: false, replayRecorded: true },
    ]).toContainEqual(outcome);
  });
});
