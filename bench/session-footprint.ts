// npm run bench:sessions: what one idle player costs (contract 13: sessions live as long as players
// play). Creates guests through the built service, refreshes each once (an idle session has been
// used), upgrades some by email, then prints the bytes each holds in Redis (MEMORY USAGE of its
// keys, and the server's used_memory) and in PostgreSQL (table and index growth), and the sizing
// for 10 million players. docs/operations.md#sizing quotes a run.
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { Client } from 'pg';
import { startService, type BenchService } from './service';

const GUESTS = Number(process.env.FOOTPRINT_GUESTS ?? 2000);
const UPGRADED = Number(process.env.FOOTPRINT_UPGRADED ?? 200);
const TABLES = ['users', 'sessions', 'identities'] as const;

type Json = Record<string, string>;
interface Guest {
  readonly browserFlowId: string;
  readonly cookie: string | undefined;
  readonly user: string;
  readonly tokens: Json;
}

const flowId = () => `flw_${randomBytes(18).toString('base64url')}`;

async function call(
  s: BenchService,
  path: string,
  body: Record<string, string>,
  { bearer, cookie }: { bearer?: string; cookie?: string } = {},
): Promise<{ json: Json; cookie: string | undefined }> {
  const res = await fetch(`${s.t.authOrigin}/t/bench/${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...(cookie ? { cookie } : {}),
    },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as Json;
  if (!res.ok) throw new Error(`${path}: ${res.status} ${json.error}`);
  const setCookie = res.headers.getSetCookie().find((c) => c.startsWith('__Host-svc_flow_'));
  return { json, cookie: setCookie ? setCookie.split(';')[0] : cookie };
}

async function guest(s: BenchService): Promise<Guest> {
  const browserFlowId = flowId();
  const created = await call(s, 'guest', { client_id: 'cli_bench', browser_flow_id: browserFlowId });
  const refreshed = await call(s, 'token', {
    grant_type: 'refresh_token',
    client_id: 'cli_bench',
    refresh_token: created.json.refresh_token as string,
  });
  return { browserFlowId, cookie: created.cookie, user: created.json.user_id as string, tokens: refreshed.json };
}

async function upgrade(s: BenchService, g: Guest, i: number): Promise<string> {
  const base = { client_id: 'cli_bench', browser_flow_id: g.browserFlowId };
  const email = `player-${i}-${randomBytes(3).toString('hex')}@footprint.example`;
  const as = { bearer: g.tokens.access_token as string, ...(g.cookie ? { cookie: g.cookie } : {}) };
  await call(s, 'guest/linking-intent', base, as);
  const after = s.t.smtp.messages.length;
  await call(s, 'email/start', { ...base, email }, { cookie: as.cookie });
  const code = await s.t.smtp.waitForCode(email, { after });
  const proof = await call(s, 'email/verify', { ...base, email, code }, { cookie: as.cookie });
  const upgraded = await call(s, 'guest/upgrade', { ...base, proof_id: proof.json.proof_id as string }, as);
  // The replacement session refreshed once, as an idle player's would have been.
  await call(s, 'token', {
    grant_type: 'refresh_token',
    client_id: 'cli_bench',
    refresh_token: upgraded.json.refresh_token as string,
  });
  return upgraded.json.session_id as string;
}

async function pgBytes(pg: Client): Promise<Record<string, number>> {
  // VACUUM first, so the sizes hold rows rather than the dead versions the refreshes left.
  await pg.query(`VACUUM ${TABLES.join(', ')}`);
  const sizes: Record<string, number> = {};
  for (const t of TABLES) {
    const { rows } = await pg.query<{ b: string }>('SELECT pg_total_relation_size($1::regclass) AS b', [t]);
    sizes[t] = Number(rows[0]?.b);
  }
  return sizes;
}

async function dropTransientKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    const transient = keys.filter((k) => !/^(s|u):\{/.test(k.slice(prefix.length)));
    if (transient.length > 0) await redis.del(...transient);
  } while (cursor !== '0');
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]);
}

async function main(): Promise<void> {
  if (!process.versions.node.startsWith('24.')) throw new Error('run it with npm run bench:sessions');
  // Thousands of guests from one address: budgets are not what this measures.
  const s = await startService({ env: { RATE_LIMITS: 'off' } });
  const redis = new Redis(s.env.REDIS_URL as string);
  const pg = new Client({ connectionString: s.env.DATABASE_URL });
  await pg.connect();
  try {
    const redisBefore = await usedMemory(redis);
    const pgBefore = await pgBytes(pg);
    const guests: Guest[] = [];
    for (let i = 0; i < GUESTS; i += 50)
      guests.push(...(await Promise.all(Array.from({ length: Math.min(50, GUESTS - i) }, () => guest(s)))));
    const redisGuests = await usedMemory(redis);
    const pgGuests = await pgBytes(pg);
    const upgradedSessions: string[] = [];
    for (let i = 0; i < UPGRADED; i++) upgradedSessions.push(await upgrade(s, guests[i] as Guest, i));
    const pgUpgraded = await pgBytes(pg);
    // What stays once the hour of a browser flow has passed: only sessions and their users' indexes.
    const p = s.env.REDIS_KEY_PREFIX as string;
    await dropTransientKeys(redis, p);
    const redisIdle = await usedMemory(redis);

    const usage = async (keys: readonly string[]) =>
      (await Promise.all(keys.map((k) => redis.memory('USAGE', `${p}${k}`, 'SAMPLES', '0')))).reduce<number>(
        (a, b) => a + Number(b),
        0,
      ) / keys.length;
    const sample = guests.slice(UPGRADED, UPGRADED + 200);
    const guestSessionKey = await usage(sample.map((g) => `s:{${g.tokens.session_id}}`));
    const guestIndexKey = await usage(sample.map((g) => `u:{${g.user}}`));
    const upgradedSessionKey = await usage(upgradedSessions.map((sid) => `s:{${sid}}`));
    const perGuestRedis = (redisGuests - redisBefore) / GUESTS;
    const perIdleGuestRedis = (redisIdle - redisBefore) / GUESTS;
    const per = (after: Record<string, number>, before: Record<string, number>, n: number) =>
      Object.fromEntries(TABLES.map((t) => [t, ((after[t] ?? 0) - (before[t] ?? 0)) / n]));
    const perGuestPg = per(pgGuests, pgBefore, GUESTS);
    const perUpgradePg = per(pgUpgraded, pgGuests, UPGRADED);
    const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
    const rounded = (o: Record<string, number>) =>
      Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Math.round(v)]));
    const guestPg = sum(perGuestPg);
    // An upgraded player keeps the guest's user row and gains an identity and a replacement session.
    const upgradedPg = guestPg + sum(perUpgradePg);
    const gib = (bytes: number) => (bytes / 2 ** 30).toFixed(1);
    const figures = {
      guests: GUESTS,
      upgraded: UPGRADED,
      redis: {
        session_key_bytes: Math.round(guestSessionKey),
        user_index_key_bytes: Math.round(guestIndexKey),
        upgraded_session_key_bytes: Math.round(upgradedSessionKey),
        used_memory_per_new_guest_bytes: Math.round(perGuestRedis),
        used_memory_per_idle_player_bytes: Math.round(perIdleGuestRedis),
      },
      postgres: { per_guest_bytes: rounded(perGuestPg), per_upgrade_extra_bytes: rounded(perUpgradePg) },
      ten_million_players: {
        redis_gib: gib(perIdleGuestRedis * 1e7),
        postgres_gib_all_guests: gib(guestPg * 1e7),
        postgres_gib_all_upgraded: gib(upgradedPg * 1e7),
      },
    };
    process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  } finally {
    redis.disconnect();
    await pg.end();
    await s.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    process.stderr.write(`${err.stack ?? String(err)}\n`);
    process.exit(1);
  },
);
