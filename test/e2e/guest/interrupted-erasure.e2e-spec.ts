import { Client } from 'pg';
import type { GuestClient } from '../../../sdk/src/guest-client';
import { admin } from '../../support/admin-cli';
import { PG_BASE } from '../../support/database';
import { emailProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

/**
 * Contract 13: a player's DELETE /me that PostgreSQL cut off after Redis revoked the sessions leaves
 * a player who cannot ask again (every token is dead) and an account that keeps its address.
 * `purge` finishes it once the grace is over, unless the player went on playing.
 */
describe('an erasure cut off after its revocation', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off', DEPENDENCY_TIMEOUT_MS: '300' });
  });
  afterAll(async () => {
    await w.close();
  });

  const count = async (sql: string, params: unknown[]): Promise<number> =>
    (await w.t.pg.query(`SELECT count(*)::int AS n FROM ${sql}`, params)).rows[0].n;
  const deleteMe = (c: GuestClient) =>
    w.t
      .auth()
      .delete('/t/acme/me')
      .set('Authorization', `Bearer ${c.accessToken ?? ''}`);
  /** Everything of the erasure and the sessions before it as if it had happened `minutes` ago. */
  async function aged(userId: string, minutes: number): Promise<void> {
    await w.t.pg.query(
      `UPDATE audit_events SET created_at = created_at - make_interval(mins => $2)
        WHERE subject = $1 AND type = 'session.revoked' AND data->>'for' = 'user.delete'`,
      [userId, minutes],
    );
    await w.t.pg.query(
      `UPDATE sessions SET created_at = created_at - make_interval(mins => $2),
                           last_used_at = last_used_at - make_interval(mins => $2) WHERE user_id = $1`,
      [userId, minutes],
    );
  }

  async function player(email: string): Promise<{ c: GuestClient; userId: string }> {
    const c = w.client();
    const guest = await c.createGuest();
    await c.createLinkingIntent();
    await c.upgrade(await emailProof(w, c, email));
    return { c, userId: guest.user_id };
  }

  /** DELETE /me while another transaction holds the user's row: the erasure's last step times out. */
  async function cutOff(c: GuestClient, userId: string): Promise<void> {
    const holder = new Client({ connectionString: `${PG_BASE}/${w.t.databaseName}` });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM users WHERE id = $1 FOR UPDATE', [userId]);
      const res = await deleteMe(c);
      expect([res.status, res.body.error]).toEqual([503, 'temporarily_unavailable']);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
  }

  it('is finished by purge, as the player asked, once its grace is over', async () => {
    const { c, userId } = await player('cut.off@example.com');
    await cutOff(c, userId);

    // The player cannot ask again: the revocation reached Redis.
    expect((await deleteMe(c)).status).toBe(401);
    expect(await count('identities WHERE user_id = $1', [userId])).toBe(1);

    // Within the grace (a slow erasure may still be running), purge leaves it.
    const early = await admin(w.t.env, 'purge');
    expect([early.stderr, early.out?.purged?.erased_users]).toEqual(['', 0]);
    expect(await count('users WHERE id = $1', [userId])).toBe(1);

    await aged(userId, 16);
    const r = await admin(w.t.env, 'purge');
    expect([r.stderr, r.out?.purged?.erased_users]).toEqual(['', 1]);
    for (const table of ['users WHERE id = $1', 'identities WHERE user_id = $1', 'sessions WHERE user_id = $1'])
      expect(await count(table, [userId])).toBe(0);
    const trail = await w.t.pg.query(
      `SELECT type, data FROM audit_events WHERE subject = $1 AND type IN ('user.deleted', 'admin.purge')`,
      [userId],
    );
    expect(trail.rows).toEqual(
      expect.arrayContaining([
        { type: 'user.deleted', data: { by: 'self' } },
        { type: 'admin.purge', data: { finished: 'user.delete' } },
      ]),
    );
    expect((await admin(w.t.env, 'purge')).out.purged.erased_users).toBe(0);
  });

  it('leaves a player who played on after an erasure whose revocation never reached Redis', async () => {
    const { c, userId } = await player('played.on@example.com');
    // The revocation row of an erasure answered 503 before Redis was reached; the tokens still work.
    await w.t.pg.query(
      `INSERT INTO audit_events (type, tenant_id, subject, data, created_at)
       VALUES ('session.revoked', 'acme', $1, '{"sessions":"all","by":"self","for":"user.delete"}', now() - interval '20 minutes')`,
      [userId],
    );
    await w.t.pg.query(`UPDATE sessions SET created_at = created_at - interval '30 minutes' WHERE user_id = $1`, [
      userId,
    ]);
    // The refresh moves its session's last use past the revocation row.
    await c.refresh();

    expect((await admin(w.t.env, 'purge')).out.purged.erased_users).toBe(0);
    expect(await count('identities WHERE user_id = $1', [userId])).toBe(1);
    expect((await c.me()).id).toBe(userId);
  });

  it('leaves a player who played on in a session that has since expired', async () => {
    const { userId } = await player('short.session@example.com');
    // Asked 20 minutes ago, answered 503 before Redis; signed in again 10 minutes ago in a session
    // that lived no longer than its access token (a client without offline_access).
    await w.t.pg.query(
      `INSERT INTO audit_events (type, tenant_id, subject, data, created_at)
       VALUES ('session.revoked', 'acme', $1, '{"sessions":"all","by":"self","for":"user.delete"}', now() - interval '20 minutes')`,
      [userId],
    );
    await w.t.pg.query(
      `UPDATE sessions SET created_at = now() - interval '10 minutes', last_used_at = NULL,
                           expires_at = now() - interval '5 minutes' WHERE user_id = $1`,
      [userId],
    );

    // The first purge sees the session; the next must still know of it.
    for (let run = 0; run < 2; run++) expect((await admin(w.t.env, 'purge')).out.purged.erased_users).toBe(0);
    expect(await count('identities WHERE user_id = $1', [userId])).toBe(1);
  });
});
