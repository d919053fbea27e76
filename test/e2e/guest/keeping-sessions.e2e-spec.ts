import { createHmac, randomBytes } from 'node:crypto';
import {
  rawGuest as guest,
  refreshGrant as refresh,
  startGuestWorld,
  type GuestWorld,
} from '../../support/guest-fixtures';

/**
 * Contract 13: ordinary play (two tabs, retries after a lost answer, months of daily play) never
 * costs a player the session: idempotent rotation within the reuse interval, sliding sessions
 * whose row and live record agree, and refresh tokens nobody can make from configuration.
 */
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The session's end in PostgreSQL and in Redis, in ms since the epoch. */
async function ends(w: GuestWorld, sessionId: string): Promise<{ row: number; live: number; lastUsed: Date | null }> {
  const { rows } = await w.t.pg.query<{ ms: string; last_used_at: Date | null }>(
    'SELECT (extract(epoch FROM expires_at) * 1000)::bigint AS ms, last_used_at FROM sessions WHERE id = $1',
    [sessionId],
  );
  const live = Number(await w.t.redis.pexpiretime(`s:{${sessionId}}`));
  return { row: Number(rows[0]?.ms), live, lastUsed: rows[0]?.last_used_at ?? null };
}

/** A guest whose first rotation Redis then lost (a restart, a failover): the token it answered. */
async function rotationRedisLost(w: GuestWorld): Promise<{ g: Awaited<ReturnType<typeof guest>>; answered: string }> {
  const g = await guest(w);
  const answered = (await refresh(w, g.refresh).expect(200)).body.refresh_token as string;
  // Redis comes back without that rotation: the session as it was before it.
  await w.t.redis.hset(`s:{${g.sessionId}}`, 'gen', '0');
  await w.t.redis.hdel(`s:{${g.sessionId}}`, 'rat');
  return { g, answered };
}

describe('idempotent rotation (contract 13)', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await w.close();
  });

  it('two refreshes with one token both answer the same successor, and the session goes on', async () => {
    const g = await guest(w);
    const [a, b] = await Promise.all([refresh(w, g.refresh), refresh(w, g.refresh)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.refresh_token).toBe(b.body.refresh_token);
    expect(a.body.session_id).toBe(g.sessionId);
    // Fresh access tokens for both: each answer is a complete token set.
    expect(typeof a.body.access_token).toBe('string');
    expect(typeof b.body.access_token).toBe('string');
    await refresh(w, a.body.refresh_token).expect(200);
  });

  it('of 20 parallel refreshes with one token, all answer one successor; nothing is revoked', async () => {
    const g = await guest(w);
    const results = await Promise.all(Array.from({ length: 20 }, () => refresh(w, g.refresh)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(results.map((r) => r.body.refresh_token)).size).toBe(1);
    expect(await w.t.redis.hget(`s:{${g.sessionId}}`, 'gen')).toBe('1');
    await refresh(w, results[0]?.body.refresh_token).expect(200);
  });

  it('a retry after a lost answer gets the answer it lost', async () => {
    const g = await guest(w);
    const lost = await refresh(w, g.refresh).expect(200);
    const retry = await refresh(w, g.refresh).expect(200);
    expect(retry.body.refresh_token).toBe(lost.body.refresh_token);
  });

  it('a rotation Redis lost (a restart, a failover) leaves the token it answered current', async () => {
    const { g, answered } = await rotationRedisLost(w);
    const next = await refresh(w, answered).expect(200);
    expect(next.body.session_id).toBe(g.sessionId);
    expect(await w.t.redis.hget(`s:{${g.sessionId}}`, 'gen')).toBe('2');
    // Two generations back is still a replay.
    expect((await refresh(w, g.refresh).expect(400)).body.error).toBe('invalid_grant');
    expect(await w.t.redis.exists(`s:{${g.sessionId}}`)).toBe(0);
  });

  it('after a rotation Redis lost, the token it answered also signs the player out (RFC 7009)', async () => {
    const { g, answered } = await rotationRedisLost(w);
    await w.t.auth().post('/t/acme/revoke').type('form').send({ token: answered, client_id: 'cli_game' }).expect(200);
    expect(await w.t.redis.exists(`s:{${g.sessionId}}`)).toBe(0);
  });

  it('once the successor was used, the token before it is a replay and revokes the session', async () => {
    const g = await guest(w);
    const next = await refresh(w, g.refresh).expect(200);
    const after = await refresh(w, next.body.refresh_token).expect(200);
    const replay = await refresh(w, g.refresh).expect(400);
    expect(replay.body.error).toBe('invalid_grant');
    await refresh(w, after.body.refresh_token).expect(400);
    const audit = await w.t.pg.query(`SELECT 1 FROM audit_events WHERE type = 'refresh.replayed' AND subject = $1`, [
      g.userId,
    ]);
    expect(audit.rowCount).toBe(1);
    // The row says the session ended when the replay revoked it, not at the end the replayed
    // token's slide had just moved 90 days on: the guest purge counts from it (contract 13).
    const row = await w.t.pg.query<{ revoked_at: Date | null; expires_at: Date }>(
      `SELECT revoked_at, expires_at FROM sessions WHERE id = $1`,
      [g.sessionId],
    );
    expect(row.rows[0]?.revoked_at).toBeInstanceOf(Date);
    expect(Date.now() - (row.rows[0]?.revoked_at?.getTime() ?? 0)).toBeLessThan(60_000);
  });
});

describe('the reuse interval ends, or is off', () => {
  let short: GuestWorld;
  let off: GuestWorld;
  beforeAll(async () => {
    short = await startGuestWorld({ RATE_LIMITS: 'off', REFRESH_REUSE_INTERVAL: '1' });
    off = await startGuestWorld({ RATE_LIMITS: 'off', REFRESH_REUSE_INTERVAL: '0' });
  });
  afterAll(async () => {
    await short.close();
    await off.close();
  });

  it('after the interval the rotated token is a replay', async () => {
    const g = await guest(short);
    const next = await refresh(short, g.refresh).expect(200);
    await sleep(1300);
    expect((await refresh(short, g.refresh).expect(400)).body.error).toBe('invalid_grant');
    await refresh(short, next.body.refresh_token).expect(400);
  });

  it('REFRESH_REUSE_INTERVAL=0 keeps the strict rule: the second use revokes the session', async () => {
    const g = await guest(off);
    const [a, b] = await Promise.all([refresh(off, g.refresh), refresh(off, g.refresh)]);
    expect([a.status, b.status].sort()).toEqual([200, 400]);
    const winner = a.status === 200 ? a : b;
    await refresh(off, winner.body.refresh_token).expect(400);
  });
});

describe('sliding customer sessions (contract 13)', () => {
  let w: GuestWorld;
  let capped: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off', CUSTOMER_SESSION_IDLE_TTL: '3' });
    capped = await startGuestWorld({
      RATE_LIMITS: 'off',
      CUSTOMER_SESSION_IDLE_TTL: '60',
      CUSTOMER_SESSION_ABSOLUTE_TTL: '3',
    });
  });
  afterAll(async () => {
    await w.close();
    await capped.close();
  });

  it('a session that refreshes outlives its idle lifetime; one left idle ends', async () => {
    const g = await guest(w);
    let token = g.refresh;
    const started = Date.now();
    while (Date.now() - started < 4500) {
      await sleep(1500);
      token = (await refresh(w, token).expect(200)).body.refresh_token;
    }
    await sleep(3300);
    expect((await refresh(w, token).expect(400)).body.error).toBe('invalid_grant');
  });

  it('each refresh moves the row and the live session to the same new end, and records the use', async () => {
    const g = await guest(w);
    const before = await ends(w, g.sessionId);
    expect(before.lastUsed).toBeNull();
    await sleep(1100);
    const at = Date.now();
    await refresh(w, g.refresh).expect(200);
    const after = await ends(w, g.sessionId);
    expect(after.row).toBe(after.live);
    expect(after.row).toBeGreaterThan(before.row + 900);
    expect(Math.abs(after.row - (at + 3000))).toBeLessThan(1000);
    expect(after.lastUsed).not.toBeNull();
    // The user's session index keeps pace, so a deactivation still finds the session.
    expect(Number(await w.t.redis.zscore(`u:{${g.userId}}`, g.sessionId))).toBe(after.row);
  });

  it('CUSTOMER_SESSION_ABSOLUTE_TTL ends a session however often it refreshes', async () => {
    const g = await guest(capped);
    const first = await ends(capped, g.sessionId);
    await sleep(1000);
    const next = await refresh(capped, g.refresh).expect(200);
    const slid = await ends(capped, g.sessionId);
    // Capped at creation + 3 s, not pushed to now + 60 s.
    expect(slid.row).toBeLessThanOrEqual(first.row + 50);
    await sleep(2300);
    expect((await refresh(capped, next.body.refresh_token).expect(400)).body.error).toBe('invalid_grant');
  });
});

describe('refresh tokens prove a secret of the session (contract 13)', () => {
  let w: GuestWorld;
  beforeAll(async () => {
    w = await startGuestWorld({ RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await w.close();
  });

  /** The previous release's token: a MAC of public ids under PRIVACY_KEY, which any operator holds. */
  function fromConfiguration(sessionId: string, generation: number): string {
    const key = Buffer.from(w.t.env.PRIVACY_KEY?.split(',')[0] ?? '', 'base64url');
    const mac = createHmac('sha256', key)
      .update('svc:refresh-token')
      .update('\0')
      .update(`${sessionId}.${generation}`)
      .digest('base64url');
    return `${sessionId}.${generation}.${mac}`;
  }

  /** What a refresh may change of the session's row. */
  const row = async (sessionId: string) =>
    (await w.t.pg.query('SELECT expires_at, last_used_at, revoked_at FROM sessions WHERE id = $1', [sessionId]))
      .rows[0];

  it('configuration plus the session id makes no token, and the attempt moves and revokes nothing', async () => {
    const g = await guest(w);
    const before = await row(g.sessionId);
    const minted = fromConfiguration(g.sessionId, 0);
    expect((await refresh(w, minted).expect(400)).body.error).toBe('invalid_grant');
    expect(await row(g.sessionId)).toEqual(before);
    await refresh(w, g.refresh).expect(200);
  });

  it('a session id with any secret in the oldest format moves and revokes nothing', async () => {
    const g = await guest(w);
    const before = await row(g.sessionId);
    const forged = `${g.sessionId}.${randomBytes(32).toString('base64url')}`;
    expect((await refresh(w, forged).expect(400)).body.error).toBe('invalid_grant');
    expect(await row(g.sessionId)).toEqual(before);
    await refresh(w, g.refresh).expect(200);
  });

  it('a genuine token presented to another tenant moves and revokes nothing', async () => {
    const g = await guest(w);
    const before = await row(g.sessionId);
    const res = await w.t
      .auth()
      .post('/t/beta/token')
      .type('form')
      .send({ grant_type: 'refresh_token', refresh_token: g.refresh, client_id: 'cli_beta' });
    expect([res.status, res.body.error]).toEqual([400, 'invalid_grant']);
    expect(await row(g.sessionId)).toEqual(before);
    await refresh(w, g.refresh).expect(200);
  });

  it('a token of the previous release moves its session to a secret on first use, so nobody is signed out', async () => {
    const g = await guest(w);
    // The session as the previous release wrote it: a generation and no secret digest.
    await w.t.redis.hdel(`s:{${g.sessionId}}`, 'sh');
    const old = fromConfiguration(g.sessionId, 0);
    const moved = await refresh(w, old).expect(200);
    expect(moved.body.refresh_token).toMatch(
      new RegExp(`^${g.sessionId}\\.1\\.[A-Za-z0-9_-]{43}\\.[A-Za-z0-9_-]{43}$`),
    );
    expect(await w.t.redis.hget(`s:{${g.sessionId}}`, 'sh')).not.toBeNull();
    // From now on configuration makes nothing for this session either.
    expect((await refresh(w, fromConfiguration(g.sessionId, 1)).expect(400)).body.error).toBe('invalid_grant');
    await refresh(w, moved.body.refresh_token).expect(200);
  });
});
