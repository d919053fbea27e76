import type { Response } from 'supertest';
import { GuestClient } from '../../../sdk/src/guest-client';
import { ClientsRepository } from '../../../src/directory/clients.repository';
import { admin } from '../../support/admin-cli';
import { chatProof as chatProofOf, emailProof, startGuestWorld, type GuestWorld } from '../../support/guest-fixtures';

// cli_game's web origin (its redirect URI's); cli_other is another browser client of acme.
const GAME_ORIGIN = 'https://play.acme.example';
const OTHER_CLIENT_ORIGIN = 'https://other.acme.example';

/** Contract 13: a player reads and deletes its own account, guests included. */
describe('GET and DELETE /t/{tenantId}/me (contract 13)', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
    await w.t.app.get(ClientsRepository).insert({
      id: 'cli_other',
      tenantId: 'acme',
      name: 'Other',
      type: 'browser',
      enabled: true,
      scopes: ['openid', 'offline_access'],
      redirectUris: [`${OTHER_CLIENT_ORIGIN}/cb`],
      secretDigest: null,
    });
  });
  afterAll(async () => {
    await w.close();
  });

  const me = (method: 'get' | 'delete', token: string | null, opts: { origin?: string; tenant?: string } = {}) => {
    let req = w.t.auth()[method](`/t/${opts.tenant ?? 'acme'}/me`);
    if (token !== null) req = req.set('Authorization', `Bearer ${token}`);
    if (opts.origin !== undefined) req = req.set('Origin', opts.origin);
    return req;
  };
  const refresh = (refreshToken: string, clientId = 'cli_game') =>
    w.t
      .auth()
      .post('/t/acme/token')
      .send({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
  const rows = async (sql: string, params: unknown[] = []): Promise<number> =>
    (await w.t.pg.query(`SELECT count(*)::int AS n FROM ${sql}`, params)).rows[0].n;
  const createdAt = async (userId: string): Promise<string> =>
    (
      (await w.t.pg.query('SELECT created_at FROM users WHERE id = $1', [userId])).rows[0].created_at as Date
    ).toISOString();

  async function upgradedByEmail(email: string, c = w.client()): Promise<GuestClient> {
    await c.createGuest();
    await c.createLinkingIntent();
    await c.upgrade(await emailProof(w, c, email));
    return c;
  }

  const chatProof = (c: GuestClient, user: { id: string; username: string; email: string }): Promise<string> =>
    chatProofOf(w, c, user);

  async function upgradedByChat(user: { id: string; username: string; email: string }): Promise<GuestClient> {
    const c = w.client();
    await c.createGuest();
    await c.createLinkingIntent();
    await c.upgrade(await chatProof(c, user));
    return c;
  }

  describe('GET', () => {
    it('answers a guest: guest true, its creation time, no identities, not cacheable', async () => {
      const c = w.client();
      const created = await c.createGuest();
      const res = await me('get', created.access_token).expect(200);
      expect(res.body).toEqual({
        user: { id: created.user_id, guest: true, created_at: await createdAt(created.user_id), identities: [] },
      });
      expect(res.headers['cache-control']).toBe('no-store');
    });

    it('answers an upgraded player with its email identity', async () => {
      const c = await upgradedByEmail('Me.Reader@Example.com');
      const res = await me('get', c.accessToken).expect(200);
      expect(res.body).toEqual({
        user: {
          id: c.userId,
          guest: false,
          created_at: await createdAt(c.userId as string),
          identities: [
            { provider: 'email', provider_subject: 'me.reader@example.com', email: 'me.reader@example.com' },
          ],
        },
      });
    });

    it('states no email for a chat-platform identity, though the platform gave an address', async () => {
      const c = await upgradedByChat({ id: '555000111', username: 'reader', email: 'reader.chat@example.com' });
      const res = await me('get', c.accessToken).expect(200);
      expect(res.body.user).toMatchObject({ id: c.userId, guest: false });
      expect(res.body.user.identities).toEqual([{ provider: 'chat_platform', provider_subject: '555000111' }]);
      expect(res.body.user.identities[0]).not.toHaveProperty('email');
      expect(await rows(`identities WHERE user_id = $1 AND email = 'reader.chat@example.com'`, [c.userId])).toBe(1);
    });

    it('refuses a missing token, and a token at another tenant or the control plane', async () => {
      const created = await w.client().createGuest();
      expect((await me('get', null)).status).toBe(401);
      expect((await me('get', created.access_token, { tenant: 'beta' })).status).toBe(401);
      expect([401, 404]).toContain((await me('get', created.access_token, { tenant: 'control-plane' })).status);
      expect((await me('delete', created.access_token, { tenant: 'beta' })).status).toBe(401);
      expect(await rows('users WHERE id = $1', [created.user_id])).toBe(1);
    });
  });

  describe('DELETE', () => {
    it('erases the player: every session revoked, rows gone, audit by=self without the address, the email free again', async () => {
      const c = await upgradedByEmail('Erase.Self@Example.com');
      const userId = c.userId as string;
      const firstRefresh = (await c.refresh()).refresh_token as string;
      // A second session of the same player, on another device.
      const other = w.client();
      const signedIn = await other.signIn(await emailProof(w, other, 'erase.self@example.com'));
      expect(signedIn.user_id).toBe(userId);

      const res = await me('delete', c.accessToken).expect(200);
      expect(res.body).toEqual({ deleted: true });
      expect(res.headers['cache-control']).toBe('no-store');

      for (const token of [c.accessToken, other.accessToken]) await me('get', token).expect(401);
      for (const token of [firstRefresh, signedIn.refresh_token as string]) {
        const refused = await refresh(token).expect(400);
        expect(refused.body.error).toBe('invalid_grant');
      }
      for (const table of [
        'users WHERE id',
        'identities WHERE user_id',
        'sessions WHERE user_id',
        'consents WHERE user_id',
      ])
        expect(await rows(`${table} = $1`, [userId])).toBe(0);
      const deleted = await w.t.pg.query(`SELECT data FROM audit_events WHERE type = 'user.deleted' AND subject = $1`, [
        userId,
      ]);
      expect(deleted.rows).toEqual([{ data: { by: 'self' } }]);
      const everything = await w.t.pg.query('SELECT type, subject, data::text AS data FROM audit_events');
      expect(JSON.stringify(everything.rows)).not.toContain('erase.self@example.com');

      // Another player links the erased address.
      const next = await upgradedByEmail('erase.self@example.com');
      expect(next.userId).not.toBe(userId);
      expect((await me('get', next.accessToken).expect(200)).body.user.identities).toEqual([
        { provider: 'email', provider_subject: 'erase.self@example.com', email: 'erase.self@example.com' },
      ]);
    });

    it('erases a guest, and the erased chat account can be linked by another player', async () => {
      const guest = w.client();
      const created = await guest.createGuest();
      await me('delete', created.access_token).expect(200, { deleted: true });
      expect(await rows('users WHERE id = $1', [created.user_id])).toBe(0);
      expect((await refresh(created.refresh_token as string).expect(400)).body.error).toBe('invalid_grant');

      const chatUser = { id: '777000222', username: 'leaver', email: 'leaver@example.com' };
      const first = await upgradedByChat(chatUser);
      await me('delete', first.accessToken).expect(200);
      const second = await upgradedByChat(chatUser);
      expect(second.userId).not.toBe(first.userId);
      expect((await me('get', second.accessToken).expect(200)).body.user.identities).toEqual([
        { provider: 'chat_platform', provider_subject: '777000222' },
      ]);
    });

    it('is the erasure of the admin CLI’s user delete, which records by=admin', async () => {
      const c = await upgradedByEmail('erased.by.admin@example.com');
      const r = await admin(w.t.env, 'user', 'delete', '--tenant', 'acme', '--id', c.userId as string);
      expect(r.out).toEqual({ deleted: { id: c.userId, tenant: 'acme' }, revoked_sessions: 1 });
      const deleted = await w.t.pg.query(`SELECT data FROM audit_events WHERE type = 'user.deleted' AND subject = $1`, [
        c.userId,
      ]);
      expect(deleted.rows).toEqual([{ data: { by: 'admin' } }]);
      await me('get', c.accessToken).expect(401);
    });

    const noCors = (res: Response) => expect(res.headers['access-control-allow-origin']).toBeUndefined();

    it.each([
      ['another client’s web origin', OTHER_CLIENT_ORIGIN],
      ['an unregistered origin', 'https://evil.example'],
      ['the null origin', 'null'],
    ])('refuses a DELETE from %s with 403 forbidden, changing nothing', async (_, origin) => {
      const c = await upgradedByEmail(`keep.${origin.length}.${Date.now()}@example.com`);
      const res = await me('delete', c.accessToken, { origin }).expect(403);
      expect(res.body.error).toBe('forbidden');
      noCors(res);
      expect(await rows('users WHERE id = $1', [c.userId])).toBe(1);
      expect(await rows('identities WHERE user_id = $1', [c.userId])).toBe(1);
      expect(await rows(`audit_events WHERE type = 'user.deleted' AND subject = $1`, [c.userId])).toBe(0);
      await me('get', c.accessToken).expect(200);
      await c.refresh();
    });

    it('judges the Origin by the token’s client, never by a client a body names', async () => {
      const c = w.client();
      const created = await c.createGuest();
      await me('delete', created.access_token, { origin: OTHER_CLIENT_ORIGIN })
        .send({ client_id: 'cli_other' })
        .expect(403);
      expect(await rows('users WHERE id = $1', [created.user_id])).toBe(1);
      // A player of cli_other deletes its account from cli_other's page.
      const otherPlayer = await w.client({ clientId: 'cli_other' }).createGuest();
      const res = await me('delete', otherPlayer.access_token, { origin: OTHER_CLIENT_ORIGIN }).expect(200);
      expect(res.headers['access-control-allow-origin']).toBe(OTHER_CLIENT_ORIGIN);
    });

    it('accepts a DELETE from a web origin of the token’s client, with CORS headers', async () => {
      const created = await w.client().createGuest();
      const res = await me('delete', created.access_token, { origin: GAME_ORIGIN }).expect(200);
      expect(res.body).toEqual({ deleted: true });
      expect(res.headers['access-control-allow-origin']).toBe(GAME_ORIGIN);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(await rows('users WHERE id = $1', [created.user_id])).toBe(0);
    });

    it('has its preflight allow DELETE for a registered web origin, and nothing for another', async () => {
      const preflight = (origin: string) =>
        w.t
          .auth()
          .options('/t/acme/me')
          .set('Origin', origin)
          .set('Access-Control-Request-Method', 'DELETE')
          .set('Access-Control-Request-Headers', 'authorization');
      const ok = await preflight(GAME_ORIGIN).expect(204);
      expect(ok.headers['access-control-allow-origin']).toBe(GAME_ORIGIN);
      expect(ok.headers['access-control-allow-methods']?.split(',')).toContain('DELETE');
      expect(ok.headers['access-control-allow-headers']).toBe('authorization,content-type');
      noCors(await preflight('https://evil.example'));
    });

    it('answers concurrent DELETEs of one player with exactly one {deleted: true}, the rest 401, never a 500', async () => {
      const c = await upgradedByEmail('twice.gone@example.com');
      const answers = await Promise.all(Array.from({ length: 8 }, () => me('delete', c.accessToken)));
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).toEqual([200, 401, 401, 401, 401, 401, 401, 401]);
      expect(answers.find((a) => a.status === 200)?.body).toEqual({ deleted: true });
      for (const refused of answers.filter((a) => a.status === 401)) expect(refused.body.error).toBe('unauthorized');
      expect(await rows(`audit_events WHERE type = 'user.deleted' AND subject = $1`, [c.userId])).toBe(1);
      expect(await rows('users WHERE id = $1', [c.userId])).toBe(0);
      await expect(c.refresh()).rejects.toMatchObject({ status: 400, code: 'invalid_grant' });
    });
  });
});
