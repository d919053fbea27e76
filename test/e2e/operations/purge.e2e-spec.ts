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

  async function user(kind: string, ageHours: number): Promise<string> {
    const uid = id('usr');
    await pg.query(
      `INSERT INTO users (id, tenant_id, kind, status, created_at) VALUES ($1, 'acme', $2, 'active', now() - make_interval(hours => $3))`,
      [uid, kind, ageHours],
    );
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
    const guest = await user('guest', 72);
    await sessions(guest, 3, -1);
    await sessions(guest, 2, 5);
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
    expect(r.out).toEqual({ purged: { sessions: 3, provisional_users: 1, audit_events: 1 } });
    expect(await count(`users WHERE id = '${stale}'`)).toBe(0);
    expect(await count(`identities WHERE user_id = '${stale}'`)).toBe(0);
    for (const kept of [guest, fresh, used]) expect(await count(`users WHERE id = '${kept}'`)).toBe(1);
    expect(await count('sessions')).toBe(3);

    // AUDIT_RETENTION_DAYS shortens retention; the purge itself is audited.
    const shorter = await admin({ ...env, AUDIT_RETENTION_DAYS: '30' }, 'purge');
    expect(shorter.out).toEqual({ purged: { sessions: 0, provisional_users: 0, audit_events: 1 } });
    const { rows } = await pg.query(`SELECT type, data FROM audit_events WHERE type = 'admin.purge' ORDER BY id`);
    expect(rows.map((row) => row.data)).toEqual([
      { sessions: 3, provisional_users: 1, audit_events: 1, audit_retention_days: 365 },
      { sessions: 0, provisional_users: 0, audit_events: 1, audit_retention_days: 30 },
    ]);
    expect((await admin({ ...env, AUDIT_RETENTION_DAYS: 'forever' }, 'purge')).stderr).toContain(
      'AUDIT_RETENTION_DAYS: must be an integer',
    );
  });

  it('passes over a row another transaction holds instead of waiting for it', async () => {
    const guest = await user('guest', 1);
    await sessions(guest, 2, -1);
    const holder = new Client({ connectionString: env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      const locked = await holder.query<{ id: string }>(
        `SELECT id FROM sessions WHERE user_id = $1 LIMIT 1 FOR UPDATE`,
        [guest],
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
    const guest = await user('guest', 1);
    await sessions(guest, 2500, -1);
    const sources = await Promise.all(
      [0, 1, 2].map(async () =>
        new DataSource(dataSourceOptions({ databaseUrl: env.DATABASE_URL!, dependencyTimeoutMs: 2000 })).initialize(),
      ),
    );
    try {
      const results = await Promise.all(sources.map((ds) => new RetentionRepository(ds, 100).purge(365)));
      expect(results.reduce((sum, r) => sum + r.sessions, 0)).toBe(2500);
      expect(await count(`sessions WHERE user_id = '${guest}'`)).toBe(0);
    } finally {
      await Promise.all(sources.map((ds) => ds.destroy()));
    }
  });
});
