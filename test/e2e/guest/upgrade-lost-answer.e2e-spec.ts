import { decodeJwt } from 'jose';
import { emailProof, refreshGrant, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

/**
 * Contract 13: a write whose answer is lost never leaves the caller without a usable token. An
 * upgrade replaces the guest's session (spec 4.3 rule 4); when its answer is lost on the way back,
 * the replaced session's last refresh token, presented within the reuse interval while the
 * replacement's first token is unused, is answered with the replacement session.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The refresh token of a token set of `cli_game` (it has offline_access). */
function refreshOf(set: { refresh_token?: string | undefined }): string {
  if (!set.refresh_token) throw new Error('a token set of cli_game without a refresh token');
  return set.refresh_token;
}

/** A guest upgraded by email whose upgrade answer the caller never read: the tokens it still holds. */
async function upgradedWithLostAnswer(w: GuestWorld, email: string) {
  const c = w.client();
  const created = await c.createGuest();
  await c.createLinkingIntent();
  const lost = await c.upgrade(await emailProof(w, c, email));
  return { created, lost };
}

describe('an upgrade whose answer was lost (contract 13)', () => {
  let w: GuestWorld;
  let short: GuestWorld;
  let off: GuestWorld;
  beforeAll(async () => {
    [w, short, off] = await Promise.all([
      startGuestWorld({ RATE_LIMITS: 'off' }),
      startGuestWorld({ RATE_LIMITS: 'off', REFRESH_REUSE_INTERVAL: '1' }),
      startGuestWorld({ RATE_LIMITS: 'off', REFRESH_REUSE_INTERVAL: '0' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([w.close(), short.close(), off.close()]);
  });

  it('the guest’s refresh token gets the replacement session, the same token for every retry', async () => {
    const { created, lost } = await upgradedWithLostAnswer(w, 'lost-answer@example.com');
    // The hand-over is the replaced session's row's, noted with the answer's sending.
    const row = await w.t.pg.query(
      `SELECT successor_id, successor_answered_at IS NOT NULL AS answered FROM sessions WHERE id = $1`,
      [created.session_id],
    );
    expect(row.rows).toEqual([{ successor_id: lost.session_id, answered: true }]);
    const retries = await Promise.all(Array.from({ length: 5 }, () => refreshGrant(w, refreshOf(created))));
    expect(retries.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(retries.map((r) => r.body.refresh_token)).size).toBe(1);
    const [first] = retries;
    expect(first?.body.session_id).toBe(lost.session_id);
    expect(decodeJwt(first?.body.access_token as string)).toMatchObject({ sub: created.user_id, sid: lost.session_id });
    // The replaced session stays revoked: its access token is refused.
    const me = await w.t.auth().get('/t/acme/me').set('Authorization', `Bearer ${created.access_token}`);
    expect(me.status).toBe(401);
    // The replacement goes on with the token the retry got.
    const next = await refreshGrant(w, first?.body.refresh_token as string).expect(200);
    expect(next.body.session_id).toBe(lost.session_id);
    // Once the replacement rotated, the guest's token gets nothing more, and ends nothing.
    expect((await refreshGrant(w, refreshOf(created)).expect(400)).body.error).toBe('invalid_grant');
    await refreshGrant(w, next.body.refresh_token).expect(200);
  });

  it('the upgrade’s own token turning up after the guest’s took over is a replay: the session ends', async () => {
    // Two holders of one account, one of them not the player (a stolen guest token used within the
    // interval): as for any replay, the session ends and the audit trail says so.
    const { created, lost } = await upgradedWithLostAnswer(w, 'two-holders@example.com');
    const taken = await refreshGrant(w, refreshOf(created)).expect(200);
    expect((await refreshGrant(w, refreshOf(lost)).expect(400)).body.error).toBe('invalid_grant');
    expect(await w.t.redis.exists(`s:{${lost.session_id}}`)).toBe(0);
    expect((await refreshGrant(w, taken.body.refresh_token).expect(400)).body.error).toBe('invalid_grant');
    const replays = await w.t.pg.query(
      `SELECT data FROM audit_events WHERE type = 'refresh.replayed' AND subject = $1`,
      [created.user_id],
    );
    expect(replays.rows).toHaveLength(1);
  });

  it('a guest token one generation ahead of Redis (a rotation Redis lost) still gets the replacement', async () => {
    const c = w.client();
    const created = await c.createGuest();
    const rotated = (await refreshGrant(w, refreshOf(created)).expect(200)).body.refresh_token as string;
    await w.t.redis.hset(`s:{${created.session_id}}`, 'gen', '0');
    await c.createLinkingIntent();
    const lost = await c.upgrade(await emailProof(w, c, 'ahead@example.com'));
    const recovered = await refreshGrant(w, rotated).expect(200);
    expect(recovered.body.session_id).toBe(lost.session_id);
  });

  it('an answer that did arrive and was used: the guest’s token is refused and the replacement lives on', async () => {
    const { created, lost } = await upgradedWithLostAnswer(w, 'answer-arrived@example.com');
    const used = await refreshGrant(w, refreshOf(lost)).expect(200);
    expect((await refreshGrant(w, refreshOf(created)).expect(400)).body.error).toBe('invalid_grant');
    await refreshGrant(w, used.body.refresh_token).expect(200);
  });

  it('only the guest’s last token, only at its own tenant and client', async () => {
    const c = w.client();
    const created = await c.createGuest();
    const rotated = (await refreshGrant(w, refreshOf(created)).expect(200)).body.refresh_token as string;
    await c.createLinkingIntent();
    await c.upgrade(await emailProof(w, c, 'last-token@example.com'));
    // The token before the last one proves the session's secret but is not its last token.
    expect((await refreshGrant(w, refreshOf(created)).expect(400)).body.error).toBe('invalid_grant');
    const elsewhere = await w.t
      .auth()
      .post('/t/beta/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: rotated, client_id: 'cli_beta' });
    expect([elsewhere.status, elsewhere.body.error]).toEqual([400, 'invalid_grant']);
    await refreshGrant(w, rotated).expect(200);
  });

  it('after the reuse interval the guest’s token is refused; with the interval off, at once', async () => {
    const late = await upgradedWithLostAnswer(short, 'late@example.com');
    await sleep(1300);
    expect((await refreshGrant(short, refreshOf(late.created)).expect(400)).body.error).toBe('invalid_grant');
    await refreshGrant(short, refreshOf(late.lost)).expect(200);

    const strict = await upgradedWithLostAnswer(off, 'strict@example.com');
    expect((await refreshGrant(off, refreshOf(strict.created)).expect(400)).body.error).toBe('invalid_grant');
    await refreshGrant(off, refreshOf(strict.lost)).expect(200);
  });
});
