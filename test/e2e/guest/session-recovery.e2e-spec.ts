import { createHmac, randomBytes } from 'node:crypto';
import { UserDeactivation } from '../../../src/directory/user-deactivation';
import { MetricsService } from '../../../src/platform/metrics/metrics.service';
import { DatasetEpoch } from '../../../src/platform/session-store/dataset-epoch';
import {
  emailProof,
  rawGuest as guest,
  refreshGrant as refresh,
  startGuestWorld,
  type GuestWorld,
} from '../../support/guest-fixtures';

// @redis-cluster session-store:REBUILD

/**
 * Contract 13 after Redis lost its data (a flush, a restart without persistence, a failover to an
 * empty replica): a guest's refresh token rebuilds its session from the PostgreSQL row, keeping
 * the user id, and only when the row, the token and the dataset's epoch all say it was lost
 * rather than ended (docs/security.md, "Sessions rebuilt after Redis lost them").
 */
describe('sessions rebuilt after Redis lost them', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await w.close();
  });

  /** Every key of this deployment gone, the dataset's epoch included: what a flush leaves. */
  const loseRedis = async (): Promise<void> => {
    for (const k of await w.t.redisKeys()) await w.t.redis.del(k);
  };
  const live = async (sessionId: string): Promise<boolean> => (await w.t.redis.exists(`s:{${sessionId}}`)) === 1;
  const recoveredRows = async (sessionId: string): Promise<number> =>
    (
      await w.t.pg.query(`SELECT 1 FROM audit_events WHERE type = 'session.recovered' AND data->>'session_id' = $1`, [
        sessionId,
      ])
    ).rowCount ?? 0;
  const revokedRow = async (sessionId: string): Promise<boolean> =>
    (await w.t.pg.query('SELECT 1 FROM sessions WHERE id = $1 AND revoked_at IS NOT NULL', [sessionId])).rowCount === 1;
  const me = (access: string) => w.t.auth().get('/t/acme/me').set('Authorization', `Bearer ${access}`);
  /** How often recovery ended with `outcome` (svc_session_recoveries_total). */
  const outcomes = async (outcome: string): Promise<number> =>
    (await w.t.app.get(MetricsService).sessionRecoveries.get()).values.find((v) => v.labels.outcome === outcome)
      ?.value ?? 0;
  const refused = async (token: string, sessionId: string): Promise<void> => {
    expect((await refresh(w, token).expect(400)).body.error).toBe('invalid_grant');
    expect(await live(sessionId)).toBe(false);
    expect(await recoveredRows(sessionId)).toBe(0);
  };

  it('a guest keeps its user id: new tokens, the next refresh works, the old generation is then a replay', async () => {
    const g = await guest(w);
    const first = (await refresh(w, g.refresh).expect(200)).body.refresh_token as string;
    await loseRedis();

    const back = await refresh(w, first).expect(200);
    expect(back.body.session_id).toBe(g.sessionId);
    expect(back.body.refresh_token).not.toBe(first);
    const who = await me(back.body.access_token).expect(200);
    expect(who.body.user).toMatchObject({ id: g.userId, guest: true });
    // The live session is what the row says it was.
    expect(await w.t.redis.hmget(`s:{${g.sessionId}}`, 'uid', 'cid', 'scope', 'guest', 'gen')).toEqual([
      g.userId,
      'cli_game',
      'openid offline_access',
      '1',
      '2',
    ]);
    expect(await recoveredRows(g.sessionId)).toBe(1);

    const next = await refresh(w, back.body.refresh_token).expect(200);
    expect(next.body.session_id).toBe(g.sessionId);
    // The token that asked for the rebuild is now two generations back: a replay, which ends the session.
    expect((await refresh(w, first).expect(400)).body.error).toBe('invalid_grant');
    await refresh(w, next.body.refresh_token).expect(400);
    expect(await revokedRow(g.sessionId)).toBe(true);
  });

  it('a token older than one already presented rebuilds nothing; the newest still does', async () => {
    const g = await guest(w);
    const first = (await refresh(w, g.refresh).expect(200)).body.refresh_token as string;
    const second = (await refresh(w, first).expect(200)).body.refresh_token as string;
    await loseRedis();

    const before = await outcomes('generation');
    await refused(g.refresh, g.sessionId);
    expect(await outcomes('generation')).toBe(before + 1);
    expect(await revokedRow(g.sessionId)).toBe(false);
    // Nor does the refused attempt count as activity that would hide the loss from the player.
    expect((await refresh(w, second).expect(200)).body.session_id).toBe(g.sessionId);
  });

  it('a session signed out before the loss stays ended', async () => {
    const g = await guest(w);
    await w.t.auth().post('/t/acme/revoke').type('form').send({ token: g.refresh, client_id: 'cli_game' }).expect(200);
    await loseRedis();
    await refused(g.refresh, g.sessionId);
  });

  it("a deactivated user's session stays ended", async () => {
    const g = await guest(w);
    await w.t.app.get(UserDeactivation).deactivate('acme', g.userId, 'test');
    await loseRedis();
    await refused(g.refresh, g.sessionId);
  });

  it("the user's state refuses too, where the session's row was not marked with it", async () => {
    const g = await guest(w);
    await w.t.pg.query(`UPDATE users SET status = 'deactivated', deactivated_at = clock_timestamp() WHERE id = $1`, [
      g.userId,
    ]);
    await loseRedis();
    const before = await outcomes('no_row');
    await refused(g.refresh, g.sessionId);
    expect(await outcomes('no_row')).toBe(before + 1);
  });

  it('a session past its end stays ended', async () => {
    const g = await guest(w);
    await w.t.pg.query(`UPDATE sessions SET expires_at = clock_timestamp() - interval '1 second' WHERE id = $1`, [
      g.sessionId,
    ]);
    await loseRedis();
    await refused(g.refresh, g.sessionId);
  });

  it('a token presented to another tenant and client rebuilds nothing', async () => {
    const g = await guest(w);
    await loseRedis();
    const elsewhere = await refresh(w, g.refresh, { tenantId: 'beta', clientId: 'cli_beta' }).expect(400);
    expect(elsewhere.body.error).toBe('invalid_grant');
    expect(await live(g.sessionId)).toBe(false);
    expect(await recoveredRows(g.sessionId)).toBe(0);
    // Its own client still gets it back.
    await refresh(w, g.refresh).expect(200);
  });

  it('a token whose MAC does not hold rebuilds nothing', async () => {
    const g = await guest(w);
    await loseRedis();
    const mac = g.refresh.slice(g.refresh.lastIndexOf('.') + 1);
    const forged = `${g.refresh.slice(0, g.refresh.lastIndexOf('.') + 1)}${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`;
    await refused(forged, g.sessionId);
  });

  it('a token made from configuration (the privacy key) with another secret rebuilds nothing', async () => {
    const g = await guest(w);
    await loseRedis();
    const key = Buffer.from(w.t.env.PRIVACY_KEY?.split(',')[0] ?? '', 'base64url');
    const body = `${g.sessionId}.0.${randomBytes(32).toString('base64url')}`;
    const mac = createHmac('sha256', key)
      .update('svc:refresh-token:secret')
      .update('\0')
      .update(body)
      .digest('base64url');
    const before = await outcomes('secret');
    await refused(`${body}.${mac}`, g.sessionId);
    expect(await outcomes('secret')).toBe(before + 1);
  });

  it('a session active since the dataset began is not rebuilt: its absence means it ended', async () => {
    // The dataset's epoch as start-up (or a reconnection) sets it, before the session began.
    await w.t.app.get(DatasetEpoch).ensure();
    const g = await guest(w);
    const first = (await refresh(w, g.refresh).expect(200)).body.refresh_token as string;
    // The epoch stays: Redis kept its dataset, only this session left it.
    await w.t.redis.del(`s:{${g.sessionId}}`);
    expect(await w.t.redis.exists('epoch')).toBe(1);
    const before = await outcomes('active_in_dataset');
    await refused(first, g.sessionId);
    expect(await outcomes('active_in_dataset')).toBe(before + 1);
    // Refused without revoking: the row is as it was.
    expect(await revokedRow(g.sessionId)).toBe(false);
  });

  it('a session rebuilt in this dataset and gone again stays gone, whichever token asks', async () => {
    const g = await guest(w);
    const first = (await refresh(w, g.refresh).expect(200)).body.refresh_token as string;
    await loseRedis();
    const back = (await refresh(w, first).expect(200)).body.refresh_token as string;
    // It leaves Redis with no mark on its row: a revocation's tombstone that has since expired.
    await w.t.redis.del(`s:{${g.sessionId}}`);

    const before = await outcomes('rebuilt_before');
    // The token presented last passes the row's checks; the dataset's mark of the rebuild refuses it.
    expect((await refresh(w, first).expect(400)).body.error).toBe('invalid_grant');
    expect(await outcomes('rebuilt_before')).toBe(before + 1);
    // The rebuilt session's own token was first presented after the epoch: active in this dataset.
    expect((await refresh(w, back).expect(400)).body.error).toBe('invalid_grant');
    expect(await live(g.sessionId)).toBe(false);
    expect(await recoveredRows(g.sessionId)).toBe(1);
  });

  it('five refreshes at once after a loss: one rebuild, one rotation, all answered alike, nothing revoked', async () => {
    const g = await guest(w);
    const first = (await refresh(w, g.refresh).expect(200)).body.refresh_token as string;
    await loseRedis();

    const answers = await Promise.all(Array.from({ length: 5 }, () => refresh(w, first)));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    // Contract 13's reuse rule: every retry of the token rotated last gets its one successor.
    expect(new Set(answers.map((r) => r.body.refresh_token)).size).toBe(1);
    expect(await w.t.redis.hget(`s:{${g.sessionId}}`, 'gen')).toBe('2');
    expect(await recoveredRows(g.sessionId)).toBe(1);
    expect(await revokedRow(g.sessionId)).toBe(false);
    await refresh(w, answers[0]?.body.refresh_token).expect(200);
  });

  it('an upgraded session is rebuilt, also one that took over the guest token after a lost answer', async () => {
    const kept = w.client();
    await kept.createGuest();
    await kept.createLinkingIntent();
    const upgraded = await kept.upgrade(await emailProof(w, kept, 'rebuilt-upgrade@example.com'));
    const next = await refresh(w, upgraded.refresh_token as string).expect(200);

    // The upgrade's answer never arrived: the guest's token gets the replacement, whose secret is
    // then the one derived from the guest's (contract 13); its row must follow.
    const c = w.client();
    const created = await c.createGuest();
    await c.createLinkingIntent();
    const lost = await c.upgrade(await emailProof(w, c, 'rebuilt-takeover@example.com'));
    const taken = await refresh(w, created.refresh_token as string).expect(200);
    expect(taken.body.session_id).toBe(lost.session_id);
    const after = await refresh(w, taken.body.refresh_token as string).expect(200);

    await loseRedis();
    const pairs: [string, string][] = [
      [next.body.refresh_token as string, upgraded.session_id],
      [after.body.refresh_token as string, lost.session_id],
    ];
    for (const [token, sessionId] of pairs) {
      const back = await refresh(w, token).expect(200);
      expect(back.body.session_id).toBe(sessionId);
    }
  });
});
