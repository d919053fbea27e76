import { DataSource } from 'typeorm';
import { DailyStatsShards1764000019000 } from '../../../migrations/1764000019000-daily-stats-shards';
import { GuestClient } from '../../../sdk/src/guest-client';
import { MemoryCookieJar } from '../../../sdk/src/cookie-jar';
import { MemorySecureStorage } from '../../../sdk/src/secure-storage';
import { createClient, emailUserId } from '../../support/console-fixtures';
import { auditTrail, startConsoleTenant, type ConsoleTenant } from '../../support/console-tenant';

const T = '/management/tenants/acme';

/** Contract 15: the audit trail (newest first, 50 a page) and the daily counts of a tenant. */
describe('management API: audit trail and daily stats (contract 15)', () => {
  let w: ConsoleTenant;
  const player = (): GuestClient =>
    new GuestClient({
      baseUrl: w.t.authOrigin,
      tenantId: 'acme',
      clientId: 'cli_acme_web',
      storage: new MemorySecureStorage(),
      cookies: new MemoryCookieJar(),
      autoRefresh: false,
    });
  const emailProof = async (c: GuestClient, email: string): Promise<string> => {
    const after = w.t.smtp.messages.length;
    await c.startEmail(email);
    return (await c.verifyEmail(email, await w.t.smtp.waitForCode(email, { after }))).proof_id;
  };
  const allPages = (query: Record<string, string> = {}) => auditTrail(w, query);

  beforeAll(async () => {
    w = await startConsoleTenant();
    await createClient(w.t, 'acme', { id: 'cli_acme_web', name: 'Acme Web', scopes: ['openid', 'offline_access'] });
  });
  afterAll(async () => {
    await w.close();
  });

  describe('GET audit', () => {
    beforeAll(async () => {
      await w.t.pg.query(
        `INSERT INTO audit_events (type, tenant_id, subject, data)
         SELECT 'test.seeded', 'acme', 'usr_seeded_' || n, jsonb_build_object('n', n) FROM generate_series(1, 120) n`,
      );
      await w.t.pg.query(
        `INSERT INTO audit_events (type, tenant_id, subject) SELECT 'test.seeded', 'other-team', 'usr_other' FROM generate_series(1, 5)`,
      );
    });

    it('pages the tenant’s rows newest first, 50 a page, next_before until the last page, nothing of another tenant', async () => {
      const { events, pages } = await allPages({ type: 'test.seeded' });
      expect(pages).toEqual([50, 50, 20]);
      expect(events.map((e) => e.data.n)).toEqual(Array.from({ length: 120 }, (_, i) => 120 - i));
      expect(events.every((e) => e.subject.startsWith('usr_seeded_'))).toBe(true);
      expect(new Set(events.map((e) => e.id)).size).toBe(120);
      expect(events[0]).toEqual({
        id: expect.stringMatching(/^\d+$/),
        type: 'test.seeded',
        subject: 'usr_seeded_120',
        created_at: expect.any(String),
        data: { n: 120 },
      });
    });

    it('without a type, shows every type of the tenant, still newest first', async () => {
      const { events } = await allPages();
      const ids = events.map((e) => BigInt(e.id));
      expect(ids).toEqual([...ids].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
      expect(events.filter((e) => e.type === 'test.seeded')).toHaveLength(120);
      expect(events.some((e) => e.subject === 'usr_other')).toBe(false);
    });

    it('with a type, shows that type alone; a last page that is exactly full has no next_before', async () => {
      // 50 rows of one type, then rows of another type of the same tenant after them (newer).
      await w.t.pg.query(
        `INSERT INTO audit_events (type, tenant_id, subject, data)
         SELECT 'test.exact', 'acme', 'usr_exact_' || n, jsonb_build_object('n', n) FROM generate_series(1, 50) n`,
      );
      await w.t.pg.query(
        `INSERT INTO audit_events (type, tenant_id, subject) SELECT 'test.other', 'acme', 'usr_other_type' FROM generate_series(1, 3)`,
      );
      const first = await w.as('viewer').get(`${T}/audit`).query({ type: 'test.exact' }).expect(200);
      expect(first.body.events).toHaveLength(50);
      expect(first.body.events.every((e: { type: string }) => e.type === 'test.exact')).toBe(true);
      expect(first.body.events.map((e: { data: { n: number } }) => e.data.n)).toEqual(
        Array.from({ length: 50 }, (_, i) => 50 - i),
      );
      expect(first.body.next_before).toBeNull();
      const { events } = await allPages({ type: 'test.other' });
      expect(events.map((e) => [e.type, e.subject])).toEqual(Array(3).fill(['test.other', 'usr_other_type']));
    });

    it.each([
      ['a malformed before', { before: 'abc' }],
      ['a before beyond any id', { before: '99999999999999999999' }],
      ['a malformed type', { type: 'DROP TABLE' }],
      ['an unknown parameter', { after: '1' }],
    ])('refuses %s with 400', async (_label, query) => {
      expect((await w.as('viewer').get(`${T}/audit`).query(query).expect(400)).body.error).toBe('invalid_request');
    });

    it('never shows an erased player’s address, even from a row that held it', async () => {
      const address = 'erased.player@example.com';
      const id = await emailUserId(w.t, 'acme', address);
      await w.t.pg.query(
        `INSERT INTO audit_events (type, tenant_id, subject, data) VALUES ('identity.linked', 'acme', $1, $2)`,
        [id, JSON.stringify({ provider: 'email', email: address })],
      );
      expect(JSON.stringify((await allPages()).events)).toContain(address);
      await w.as('admin').delete(`${T}/users/${id}`).expect(200);
      const { events } = await allPages();
      expect(JSON.stringify(events)).not.toContain('erased.player');
      expect(events.find((e) => e.type === 'console.user.delete')).toEqual(
        expect.objectContaining({ subject: id, data: { actor_id: w.userIds.admin, revoked_sessions: 0 } }),
      );
    });
  });

  describe('GET stats', () => {
    const utcDay = (daysAgo: number): string => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10);
    let before: { guests_created: number; upgrades: number; sign_ins: number };

    beforeAll(async () => {
      // Known days in the past; today's row is left to the service's own counting.
      for (const [daysAgo, guests, upgrades, signIns] of [
        [1, 3, 1, 2],
        [5, 7, 0, 0],
        [40, 9, 8, 6],
        [95, 4, 4, 4],
      ] as const)
        await w.t.pg.query(
          `INSERT INTO tenant_daily_stats (tenant_id, day, guests_created, upgrades, sign_ins)
           VALUES ('acme', (clock_timestamp() AT TIME ZONE 'UTC')::date - $1::int, $2, $3, $4)`,
          [daysAgo, guests, upgrades, signIns],
        );
      await w.t.pg.query(
        `INSERT INTO tenant_daily_stats (tenant_id, day, guests_created) VALUES ('other-team', (clock_timestamp() AT TIME ZONE 'UTC')::date - 1, 50)`,
      );
      const today = (await w.as('viewer').get(`${T}/stats`).query({ days: '1' }).expect(200)).body.days[0];
      before = { guests_created: today.guests_created, upgrades: today.upgrades, sign_ins: today.sign_ins };
    });

    it('gives the last N UTC days oldest first, zeros where nothing happened, only this tenant’s counts', async () => {
      const res = await w.as('viewer').get(`${T}/stats`).query({ days: '7' }).expect(200);
      expect(res.body.days.map((d: { date: string }) => d.date)).toEqual([6, 5, 4, 3, 2, 1, 0].map(utcDay));
      expect(res.body.days.slice(0, 6)).toEqual([
        { date: utcDay(6), guests_created: 0, upgrades: 0, sign_ins: 0 },
        { date: utcDay(5), guests_created: 7, upgrades: 0, sign_ins: 0 },
        { date: utcDay(4), guests_created: 0, upgrades: 0, sign_ins: 0 },
        { date: utcDay(3), guests_created: 0, upgrades: 0, sign_ins: 0 },
        { date: utcDay(2), guests_created: 0, upgrades: 0, sign_ins: 0 },
        { date: utcDay(1), guests_created: 3, upgrades: 1, sign_ins: 2 },
      ]);
    });

    it('defaults to 30 days and goes back at most 90', async () => {
      const thirty = (await w.as('viewer').get(`${T}/stats`).expect(200)).body.days as Array<{ date: string }>;
      expect(thirty).toHaveLength(30);
      expect(thirty[0]?.date).toBe(utcDay(29));
      const ninety = (await w.as('viewer').get(`${T}/stats`).query({ days: '90' }).expect(200)).body.days;
      expect(ninety).toHaveLength(90);
      expect(ninety.find((d: { date: string }) => d.date === utcDay(40))).toEqual({
        date: utcDay(40),
        guests_created: 9,
        upgrades: 8,
        sign_ins: 6,
      });
      expect(ninety.some((d: { date: string }) => d.date === utcDay(95))).toBe(false);
    });

    it('adds up the day’s shards, and the shard migration keeps every count both ways', async () => {
      await w.t.pg.query(
        `INSERT INTO tenant_daily_stats (tenant_id, day, shard, guests_created, upgrades, sign_ins)
         VALUES ('acme', (clock_timestamp() AT TIME ZONE 'UTC')::date - 3, 4, 2, 1, 0),
                ('acme', (clock_timestamp() AT TIME ZONE 'UTC')::date - 3, 9, 5, 0, 1)`,
      );
      const day3 = async (): Promise<unknown> =>
        (await w.as('viewer').get(`${T}/stats`).query({ days: '7' }).expect(200)).body.days[3];
      const expected = { date: utcDay(3), guests_created: 7, upgrades: 1, sign_ins: 1 };
      expect(await day3()).toEqual(expected);
      const runner = w.t.app.get(DataSource).createQueryRunner();
      try {
        await new DailyStatsShards1764000019000().down(runner);
        // Down: one row per day, the shards added up.
        expect(
          await runner.query(
            `SELECT guests_created, upgrades, sign_ins FROM tenant_daily_stats
              WHERE tenant_id = 'acme' AND day = (clock_timestamp() AT TIME ZONE 'UTC')::date - 3`,
          ),
        ).toEqual([{ guests_created: 7, upgrades: 1, sign_ins: 1 }]);
        await new DailyStatsShards1764000019000().up(runner);
      } finally {
        await runner.release();
      }
      expect(await day3()).toEqual(expected);
    });

    it.each(['0', '91', 'x', '-1', '1.5'])('refuses days=%s with 400', async (days) => {
      expect((await w.as('viewer').get(`${T}/stats`).query({ days }).expect(400)).body.error).toBe('invalid_request');
    });

    it('counts today’s guests, upgrades and sign-ins as players make them', async () => {
      const upgraded = player();
      await upgraded.createGuest();
      await upgraded.createLinkingIntent();
      await upgraded.upgrade(await emailProof(upgraded, 'counted@example.com'));
      const returning = player();
      await returning.signIn(await emailProof(returning, 'counted@example.com'));
      await player().createGuest();
      const today = (await w.as('viewer').get(`${T}/stats`).query({ days: '1' }).expect(200)).body.days;
      expect(today).toEqual([
        {
          date: utcDay(0),
          guests_created: before.guests_created + 2,
          upgrades: before.upgrades + 1,
          sign_ins: before.sign_ins + 1,
        },
      ]);
    });
  });
});
