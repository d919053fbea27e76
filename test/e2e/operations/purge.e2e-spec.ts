import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { RetentionRepository } from '../../../src/directory/retention.repository';
import { dataSourceOptions } from '../../../src/platform/database/data-source-options';
import { admin } from '../../support/admin-cli';
import { createSuiteDatabase, dropSuiteDatabase, PG_BASE } from '../../support/database';

const id = (prefix: string): string => `${prefix}_${randomBytes(12).toString('base64url')}`;

/** Contract 12: `purge` deletes what retention names, in batches that skip locked rows. */
describe('purge (contract 12)', () => {
  let db: string;
  let env: Record<string, string>;
  let pg: Client;

  /** A user of acme; with an email identity (a credential) unless `credential` is false. */
  async function user(kind: string, ageHours: number, credential = true): Promise<string> {
    const uid = id('usr');
    await pg.query(
      `INSERT INTO users (id, tenant_id, kind, status, created_at) VALUES ($1, 'acme', $2, 'active', now() - make_interval(hours => $3))`,
      [uid, kind, ageHours],
    );
    if (credential)
      await pg.query(
        `INSERT INTO identities (id, tenant_id, user_id, provider, provider_subject, email) VALUES ($1, 'acme', $2, 'email', $3, $3)`,
        [id('idn'), uid, `${uid}@example.com`],
      );
    return uid;
  }

  async function sessions(userId: string, n: number, expiresInHours: number): Promise<void> {
    await pg.query(
      `INSERT INTO sessions (id, tenant_id, user_id, client_id, expires_at)
       SELECT 'ses_' || md5(random()::text || g), 'acme', $1, 'cli_game', now() + make_interval(hours => $3)
         FROM generate_series(1, $2) g`,
      [userId, n, expiresInHours],
    );
  }

  const count = async (sql: string): Promise<number> =>
    (await pg.query(`SELECT count(*)::int AS n FROM ${sql}`)).rows[0].n;

  beforeAll(async () => {
    db = await createSuiteDatabase();
    env = { DATABASE_URL: `${PG_BASE}/${db}` };
    pg = new Client({ connectionString: env.DATABASE_URL });
    await pg.connect();
    await pg.query(
      `INSERT INTO tenants (id, name, kind) VALUES ('acme', 'Acme', 'customer'), ('control-plane', 'Control plane', 'control_plane')`,
    );
    await pg.query(
      `INSERT INTO clients (id, tenant_id, name, type, scopes) VALUES ('cli_game', 'acme', 'Game', 'browser', '{openid}')`,
    );
  });
  afterAll(async () => {
    await pg.end();
    await dropSuiteDatabase(db);
  });

  it('deletes expired sessions, day-old provisional users that never linked, and audit rows past retention', async () => {
    const player = await user('regular', 72);
    await sessions(player, 3, -1);
    await sessions(player, 2, 5);
    const stale = await user('provisional', 25);
    const fresh = await user('provisional', 2);
    const used = await user('provisional', 48);
    await sessions(used, 1, 5);
    for (const days of [400, 40, 0]) {
      await pg.query(
        `INSERT INTO audit_events (type, tenant_id, subject, created_at) VALUES ('guest.upgraded', 'acme', 'x', now() - make_interval(days => $1))`,
        [days],
      );
    }

    const r = await admin(env, 'purge');
    expect(r.stderr).toBe('');
    expect(r.out).toEqual({
      purged: { sessions: 3, provisional_users: 1, audit_events: 1, guests: 0, erased_users: 0 },
    });
    expect(await count(`users WHERE id = '${stale}'`)).toBe(0);
    expect(await count(`identities WHERE user_id = '${stale}'`)).toBe(0);
    for (const kept of [player, fresh, used]) expect(await count(`users WHERE id = '${kept}'`)).toBe(1);
    expect(await count('sessions')).toBe(3);

    // AUDIT_RETENTION_DAYS shortens retention; the purge itself is audited.
    const shorter = await admin({ ...env, AUDIT_RETENTION_DAYS: '30' }, 'purge');
    expect(shorter.out).toEqual({
      purged: { sessions: 0, provisional_users: 0, audit_events: 1, guests: 0, erased_users: 0 },
    });
    const { rows } = await pg.query(`SELECT type, data FROM audit_events WHERE type = 'admin.purge' ORDER BY id`);
    expect(rows.map((row) => row.data)).toEqual([
      {
        sessions: 3,
        provisional_users: 1,
        audit_events: 1,
        guests: 0,
        erased_users: 0,
        audit_retention_days: 365,
        guest_retention_days: 7,
      },
      {
        sessions: 0,
        provisional_users: 0,
        audit_events: 1,
        guests: 0,
        erased_users: 0,
        audit_retention_days: 30,
        guest_retention_days: 7,
      },
    ]);
    expect((await admin({ ...env, AUDIT_RETENTION_DAYS: 'forever' }, 'purge')).stderr).toContain(
      'AUDIT_RETENTION_DAYS: must be an integer',
    );
  });

  describe('guests that never linked a credential (contract 13)', () => {
    /**
     * One session row of `userId` that ended `endedHoursAgo` hours ago (negative: still live), by
     * expiry, or by revocation while its expiry lies 80 days ahead (a sliding session).
     */
    async function endedSession(userId: string, endedHoursAgo: number, by: 'expiry' | 'revocation'): Promise<string> {
      const sid = id('ses');
      // A session made 200 days ago that slid until now (its expiry is in the past or 80 days ahead).
      await pg.query(
        `INSERT INTO sessions (id, tenant_id, user_id, client_id, created_at, expires_at)
         VALUES ($1, 'acme', $2, 'cli_game', now() - interval '200 days', now() + interval '80 days')`,
        [sid, userId],
      );
      await pg.query(
        by === 'expiry'
          ? `UPDATE sessions SET expires_at = now() - make_interval(secs => $2::float8 * 3600) WHERE id = $1`
          : `UPDATE sessions SET revoked_at = now() - make_interval(secs => $2::float8 * 3600) WHERE id = $1`,
        [sid, endedHoursAgo],
      );
      return sid;
    }
    const exists = async (userId: string): Promise<boolean> => (await count(`users WHERE id = '${userId}'`)) === 1;
    const DAY = 24;

    it('keeps guests that play, players with a credential and recent guests; purges a guest gone for 8 days with all its rows', async () => {
      const playing = await user('guest', 300 * DAY, false);
      await endedSession(playing, 100 * DAY, 'expiry');
      await endedSession(playing, -DAY, 'expiry');
      const upgraded = await user('regular', 300 * DAY);
      await endedSession(upgraded, 100 * DAY, 'expiry');
      const linkedGuest = await user('guest', 300 * DAY);
      await endedSession(linkedGuest, 100 * DAY, 'expiry');
      const recent = await user('guest', 30 * DAY, false);
      const recentSession = await endedSession(recent, 2 * DAY, 'expiry');
      const recentlyRevoked = await user('guest', 30 * DAY, false);
      await endedSession(recentlyRevoked, 2 * DAY, 'revocation');
      const gone = await user('guest', 30 * DAY, false);
      await endedSession(gone, 8 * DAY, 'expiry');
      await endedSession(gone, 9 * DAY, 'revocation');
      await pg.query(
        `INSERT INTO consents (tenant_id, user_id, client_id, scopes) VALUES ('acme', $1, 'cli_game', '{openid}')`,
        [gone],
      );
      const revoked = await user('guest', 30 * DAY, false);
      await endedSession(revoked, 8 * DAY, 'revocation');

      const r = await admin(env, 'purge');
      expect(r.stderr).toBe('');
      // The upgraded player's ended session goes; the guests' rows wait for the guest purge.
      expect(r.out).toEqual({
        purged: { sessions: 1, provisional_users: 0, audit_events: 0, guests: 2, erased_users: 0 },
      });
      for (const purged of [gone, revoked]) {
        expect(await exists(purged)).toBe(false);
        for (const table of ['sessions', 'consents'])
          expect(await count(`${table} WHERE user_id = '${purged}'`)).toBe(0);
      }
      for (const kept of [playing, upgraded, linkedGuest, recent, recentlyRevoked])
        expect(await exists(kept)).toBe(true);
      expect(await count(`sessions WHERE user_id = '${playing}'`)).toBe(2);
      expect(await count(`sessions WHERE user_id = '${upgraded}'`)).toBe(0);
      // The recent guest's expired row is its only record of when it last played: it stays, so a
      // later run does not take the guest for session-less.
      expect(await count(`sessions WHERE id = '${recentSession}'`)).toBe(1);
      expect((await admin(env, 'purge')).out.purged).toEqual({
        sessions: 0,
        provisional_users: 0,
        audit_events: 0,
        guests: 0,
        erased_users: 0,
      });
      expect(await exists(recent)).toBe(true);

      // GUEST_RETENTION_DAYS=0: a guest goes as soon as its last session ended, never before.
      const justEnded = await user('guest', DAY, false);
      await endedSession(justEnded, 0.05, 'expiry');
      const zero = await admin({ ...env, GUEST_RETENTION_DAYS: '0' }, 'purge');
      expect(zero.out.purged.guests).toBe(3);
      for (const purged of [recent, recentlyRevoked, justEnded]) expect(await exists(purged)).toBe(false);
      for (const kept of [playing, upgraded, linkedGuest]) expect(await exists(kept)).toBe(true);
      const { rows } = await pg.query(
        `SELECT data FROM audit_events WHERE type = 'admin.purge' ORDER BY id DESC LIMIT 1`,
      );
      expect(rows[0].data).toMatchObject({ guests: 3, guest_retention_days: 0 });
      expect((await admin({ ...env, GUEST_RETENTION_DAYS: 'never' }, 'purge')).stderr).toContain(
        'GUEST_RETENTION_DAYS',
      );
    });
  });

  it('passes over a row another transaction holds instead of waiting for it', async () => {
    const player = await user('regular', 1);
    await sessions(player, 2, -1);
    const holder = new Client({ connectionString: env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      const locked = await holder.query<{ id: string }>(
        `SELECT id FROM sessions WHERE user_id = $1 LIMIT 1 FOR UPDATE`,
        [player],
      );
      const started = Date.now();
      const r = await admin(env, 'purge');
      expect(Date.now() - started).toBeLessThan(3000);
      expect(r.out.purged.sessions).toBe(1);
      expect(await count(`sessions WHERE id = '${locked.rows[0]!.id}'`)).toBe(1);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    expect((await admin(env, 'purge')).out.purged.sessions).toBe(1);
  });

  it('runs in batches, and instances purging at once delete each row exactly once', async () => {
    const player = await user('regular', 1);
    await sessions(player, 2500, -1);
    // 250 abandoned guests, each with one session that ended 30 days ago.
    await pg.query(
      `WITH g AS (
         INSERT INTO users (id, tenant_id, kind, status, created_at)
         SELECT 'usr_batch' || lpad(g::text, 12, '0'), 'acme', 'guest', 'active', now() - interval '40 days'
           FROM generate_series(1, 250) g RETURNING id)
       INSERT INTO sessions (id, tenant_id, user_id, client_id, created_at, expires_at)
       SELECT 'ses_' || md5(id), 'acme', id, 'cli_game', now() - interval '40 days', now() - interval '30 days' FROM g`,
    );
    const sources = await Promise.all(
      [0, 1, 2].map(async () =>
        new DataSource(dataSourceOptions({ databaseUrl: env.DATABASE_URL!, dependencyTimeoutMs: 2000 })).initialize(),
      ),
    );
    try {
      const policy = { auditRetentionDays: 365, guestRetentionDays: 7 };
      const results = await Promise.all(sources.map((ds) => new RetentionRepository(ds, 100).purge(policy)));
      expect(results.reduce((sum, r) => sum + r.sessions, 0)).toBe(2500);
      expect(results.reduce((sum, r) => sum + r.guests, 0)).toBe(250);
      expect(await count(`sessions WHERE user_id = '${player}'`)).toBe(0);
      expect(await count(`users WHERE id LIKE 'usr_batch%'`)).toBe(0);
      expect(await count(`sessions WHERE user_id LIKE 'usr_batch%'`)).toBe(0);
    } finally {
      await Promise.all(sources.map((ds) => ds.destroy()));
    }
  });
});
