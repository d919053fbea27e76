import { randomBytes } from 'node:crypto';
import { admin } from '../../support/admin-cli';
import { addMember, createTenant } from '../../support/console-fixtures';
import { startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';
import { signIn } from '../../support/management-flow';
import { PrivateRedis } from '../../support/private-redis';
import { readTestSecrets } from '../../support/test-secrets';

/**
 * Issue 22, point 6: the audit rows of revocations, deactivations and erasures are written before
 * or with their effects. A Redis revocation cannot share a PostgreSQL transaction, so its row goes
 * first: here Redis refuses the revocation (read-only; reads still work, so the bearer check
 * passes) and the row must be there, next to a 503 or a failed command.
 */
describe('audit rows before their effects', () => {
  let redis: PrivateRedis;
  let w: GuestWorld;
  const rows = async (type: string, subject: string): Promise<unknown[]> =>
    (
      await w.t.pg.query('SELECT data FROM audit_events WHERE type = $1 AND subject = $2 ORDER BY id', [type, subject])
    ).rows.map((r: { data: unknown }) => r.data);
  const run = (...argv: string[]) => admin(w.t.env, ...argv);
  /** A revocation is recorded on the session's row too: purge and the refresh grant read it. */
  const revokedAt = async (sessionId: string): Promise<Date | null> =>
    (
      (await w.t.pg.query('SELECT revoked_at FROM sessions WHERE id = $1', [sessionId])).rows[0] as {
        revoked_at: Date | null;
      }
    ).revoked_at;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    // The service's own retry of a refused deactivation (pending-revocations.e2e-spec.ts) would race
    // the commands run again here; these tests are about the rows, so it waits out the suite.
    w = await startGuestWorld({ REDIS_URL: redis.url, RATE_LIMITS: 'off', PENDING_REVOCATION_INTERVAL_MS: '600000' });
    await createTenant(w.t, 'studio', 'Studio');
  });
  afterAll(async () => {
    await w.close();
    await redis.stop();
  });

  it('POST /management-auth/revoke: a failed revocation answers 503 and leaves its session.revoked row', async () => {
    const userId = await addMember(w.t, 'studio', 'own@studio.example', 'viewer');
    const tokens = await signIn(w.t, 'own@studio.example');
    await redis.withWritesRefused(async () => {
      const res = await w.t
        .auth()
        .post('/management-auth/revoke')
        .set('Authorization', `Bearer ${tokens.access_token}`);
      expect(res.status).toBe(503);
    });
    expect(await rows('session.revoked', userId)).toEqual([{ session_id: tokens.session_id, by: 'bearer' }]);
    expect(await revokedAt(tokens.session_id)).toBeInstanceOf(Date);
  });

  it('POST /management-auth/revoke-session: likewise, by the console client', async () => {
    const userId = await addMember(w.t, 'studio', 'bff@studio.example', 'viewer');
    const tokens = await signIn(w.t, 'bff@studio.example');
    const basic = Buffer.from(`cli_console:${readTestSecrets().CONSOLE_CLIENT_SECRET}`).toString('base64');
    await redis.withWritesRefused(async () => {
      const res = await w.t
        .auth()
        .post('/management-auth/revoke-session')
        .set('Authorization', `Basic ${basic}`)
        .send({ session_id: tokens.session_id });
      expect(res.status).toBe(503);
    });
    expect(await rows('session.revoked', userId)).toEqual([{ session_id: tokens.session_id, by: 'client' }]);
    expect(await revokedAt(tokens.session_id)).toBeInstanceOf(Date);
  });

  describe('POST /t/{t}/revoke (RFC 7009)', () => {
    const guest = async (): Promise<{
      user_id: string;
      session_id: string;
      access_token: string;
      refresh_token: string;
    }> =>
      (
        await w.t
          .auth()
          .post('/t/acme/guest')
          .send({ client_id: 'cli_game', browser_flow_id: `flw_${randomBytes(18).toString('base64url')}` })
          .expect(201)
      ).body;
    const revoke = (token: string) =>
      w.t.auth().post('/t/acme/revoke').type('form').send({ token, client_id: 'cli_game' });
    const refresh = (token: string) =>
      w.t
        .auth()
        .post('/t/acme/token')
        .type('form')
        .send({ grant_type: 'refresh_token', refresh_token: token, client_id: 'cli_game' });

    it.each(['refresh_token', 'access_token'] as const)(
      'by %s: a failed revocation answers 503 and leaves its session.revoked row; run again, it revokes',
      async (kind) => {
        const player = await guest();
        const row = { session_id: player.session_id, client_id: 'cli_game', by: 'client' };
        await redis.withWritesRefused(async () => {
          expect((await revoke(player[kind])).status).toBe(503);
        });
        expect(await rows('session.revoked', player.user_id)).toEqual([row]);
        expect(await revokedAt(player.session_id)).toBeInstanceOf(Date);

        await revoke(player[kind]).expect(200);
        expect(await rows('session.revoked', player.user_id)).toEqual([row, row]);
        await refresh(player.refresh_token).expect(400);
      },
    );

    it('a revocation Redis refused still ends the refresh: the row it marked is read first', async () => {
      const player = await guest();
      await redis.withWritesRefused(async () => {
        expect((await revoke(player.refresh_token)).status).toBe(503);
      });
      await refresh(player.refresh_token).expect(400);
      // The refresh carried the revocation to Redis: the access token is refused from here on too.
      await w.t.auth().get('/t/acme/me').set('Authorization', `Bearer ${player.access_token}`).expect(401);
    });

    it('writes no row for a token that names no live session of this client, and still answers 200', async () => {
      const player = await guest();
      const mac = 'A'.repeat(43);
      const unknown = [
        // A session id is public (it is in every access token): a token made from it is not genuine.
        `${player.session_id}.0.${mac}.${mac}`,
        'not-a-token',
      ];
      for (const token of unknown) await revoke(token).expect(200);
      // A genuine token of a session that is no longer live.
      await revoke(player.refresh_token).expect(200);
      await revoke(player.refresh_token).expect(200);
      await revoke(player.access_token).expect(200);
      expect(await rows('session.revoked', player.user_id)).toEqual([
        { session_id: player.session_id, client_id: 'cli_game', by: 'client' },
      ]);
    });
  });

  it('session revoke: a failed revocation fails the command and leaves both rows', async () => {
    const userId = await addMember(w.t, 'studio', 'cli@studio.example', 'viewer');
    const tokens = await signIn(w.t, 'cli@studio.example');
    await redis.withWritesRefused(async () => {
      expect((await run('session', 'revoke', '--id', tokens.session_id)).status).toBe(1);
    });
    expect(await rows('session.revoked', userId)).toEqual([{ session_id: tokens.session_id, by: 'admin' }]);
    expect(await rows('admin.session.revoke', tokens.session_id)).toEqual([{}]);
    expect(await revokedAt(tokens.session_id)).toBeInstanceOf(Date);
    // Run again, it revokes: the session is gone.
    expect((await run('session', 'revoke', '--id', tokens.session_id)).out).toEqual({
      session: { id: tokens.session_id, revoked: true },
    });
    await w.t.auth().get('/management-auth/current').set('Authorization', `Bearer ${tokens.access_token}`).expect(401);
  });

  it('user deactivate: a failed revocation leaves user.deactivated and admin.user.deactivate', async () => {
    const userId = await addMember(w.t, 'studio', 'off@studio.example', 'viewer');
    await signIn(w.t, 'off@studio.example');
    await redis.withWritesRefused(async () => {
      expect((await run('user', 'deactivate', '--email', 'off@studio.example')).status).toBe(1);
    });
    expect(await rows('user.deactivated', userId)).toEqual([{ by: 'admin' }]);
    expect(await rows('admin.user.deactivate', userId)).toEqual([{}]);
    const again = await run('user', 'deactivate', '--email', 'off@studio.example');
    expect(again.out).toMatchObject({ user: { changed: false }, revoked_sessions: 1 });
    expect(await rows('admin.user.deactivate', userId)).toEqual([{}, {}]);
  });

  it('user deactivate of a player: a failed revocation still ends its refresh, through the rows it marked', async () => {
    const player = await w.client().createGuest();
    await redis.withWritesRefused(async () => {
      expect((await run('user', 'deactivate', '--tenant', 'acme', '--id', player.user_id)).status).toBe(1);
    });
    expect(await rows('user.deactivated', player.user_id)).toEqual([{ by: 'admin' }]);
    expect(await revokedAt(player.session_id)).toBeInstanceOf(Date);
    await w.t
      .auth()
      .post('/t/acme/token')
      .send({ grant_type: 'refresh_token', refresh_token: player.refresh_token, client_id: 'cli_game' })
      .expect(400);
  });

  it('user delete: a failed revocation leaves its row and the user in place; run again, it erases', async () => {
    const player = await w.client().createGuest();
    await redis.withWritesRefused(async () => {
      expect((await run('user', 'delete', '--tenant', 'acme', '--id', player.user_id)).status).toBe(1);
    });
    const revocation = { sessions: 'all', by: 'admin', for: 'user.delete' };
    expect(await rows('session.revoked', player.user_id)).toEqual([revocation]);
    expect(await rows('user.deleted', player.user_id)).toEqual([]);
    expect((await run('user', 'show', '--tenant', 'acme', '--id', player.user_id)).out.user.status).toBe('active');

    expect((await run('user', 'delete', '--tenant', 'acme', '--id', player.user_id)).out).toEqual({
      deleted: { id: player.user_id, tenant: 'acme' },
      revoked_sessions: 1,
    });
    expect(await rows('session.revoked', player.user_id)).toEqual([revocation, revocation]);
    expect(await rows('user.deleted', player.user_id)).toEqual([{ by: 'admin' }]);
    expect(await rows('admin.user.delete', player.user_id)).toEqual([{ revoked_sessions: 1 }]);
  });

  it('DELETE /t/{t}/me: a failed revocation answers 503 and leaves its row; the player is still there', async () => {
    const c = w.client();
    const player = await c.createGuest();
    await redis.withWritesRefused(async () => {
      const res = await w.t.auth().delete('/t/acme/me').set('Authorization', `Bearer ${player.access_token}`);
      expect(res.status).toBe(503);
    });
    expect(await rows('session.revoked', player.user_id)).toEqual([
      { sessions: 'all', by: 'self', for: 'user.delete' },
    ]);
    expect(await rows('user.deleted', player.user_id)).toEqual([]);
    await w.t.auth().delete('/t/acme/me').set('Authorization', `Bearer ${player.access_token}`).expect(200);
    expect(await rows('user.deleted', player.user_id)).toEqual([{ by: 'self' }]);
  });
});
