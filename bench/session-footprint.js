'use strict';
// What one idle player costs (contract 13: sessions now live as long as players play). Creates
// guests through the built service, refreshes each once (an idle session has been used), upgrades
// some by email, then prints the bytes each holds in Redis (MEMORY USAGE of its keys, and the
// server's used_memory) and in PostgreSQL (table and index growth), and the sizing for 10 million
// players. docs/operations.md#sizing quotes a run.
const { randomBytes } = require('node:crypto');
const Redis = require('ioredis');
const { Client } = require('pg');
const service = require('./service');

const GUESTS = Number(process.env.FOOTPRINT_GUESTS ?? 2000);
const UPGRADED = Number(process.env.FOOTPRINT_UPGRADED ?? 200);
const TABLES = ['users', 'sessions', 'identities'];

const flowId = () => `flw_${randomBytes(18).toString('base64url')}`;

async function call(ctx, path, body, { bearer, cookie } = {}) {
  const res = await fetch(`${ctx.authOrigin}/t/bench/${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...(cookie ? { cookie } : {}),
    },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${json.error}`);
  const setCookie = res.headers.getSetCookie().find((c) => c.startsWith('__Host-svc_flow_'));
  return { json, cookie: setCookie ? setCookie.split(';')[0] : cookie };
}

async function guest(ctx) {
  const browserFlowId = flowId();
  const created = await call(ctx, 'guest', { client_id: 'cli_bench', browser_flow_id: browserFlowId });
  const refreshed = await call(ctx, 'token', {
    grant_type: 'refresh_token',
    client_id: 'cli_bench',
    refresh_token: created.json.refresh_token,
  });
  return { browserFlowId, cookie: created.cookie, user: created.json.user_id, tokens: refreshed.json };
}

async function upgrade(ctx, g, i) {
  const base = { client_id: 'cli_bench', browser_flow_id: g.browserFlowId };
  const email = `player-${i}-${randomBytes(3).toString('hex')}@footprint.example`;
  await call(ctx, 'guest/linking-intent', base, { bearer: g.tokens.access_token, cookie: g.cookie });
  await call(ctx, 'email/start', { ...base, email }, { cookie: g.cookie });
  const code = await ctx.smtp.code(email);
  const proof = await call(ctx, 'email/verify', { ...base, email, code }, { cookie: g.cookie });
  const upgraded = await call(
    ctx,
    'guest/upgrade',
    { ...base, proof_id: proof.json.proof_id },
    {
      bearer: g.tokens.access_token,
      cookie: g.cookie,
    },
  );
  // The replacement session refreshed once, as an idle player's would have been.
  await call(ctx, 'token', {
    grant_type: 'refresh_token',
    client_id: 'cli_bench',
    refresh_token: upgraded.json.refresh_token,
  });
  return upgraded.json.session_id;
}

async function pgBytes(pg) {
  // VACUUM first, so the sizes hold rows rather than the dead versions the refreshes left.
  await pg.query(`VACUUM ${TABLES.join(', ')}`);
  const sizes = {};
  for (const t of TABLES) {
    const { rows } = await pg.query('SELECT pg_total_relation_size($1::regclass) AS b', [t]);
    sizes[t] = Number(rows[0].b);
  }
  return sizes;
}

async function dropTransientKeys(redis, prefix) {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    const transient = keys.filter((k) => !/^(s|u):\{/.test(k.slice(prefix.length)));
    if (transient.length > 0) await redis.del(...transient);
  } while (cursor !== '0');
}

async function usedMemory(redis) {
  return Number(/used_memory:(\d+)/.exec(await redis.info('memory'))[1]);
}

async function main() {
  if (!process.versions.node.startsWith('24.')) throw new Error('run it with npm run bench:sessions');
  // Thousands of guests from one address: budgets are not what this measures.
  process.env.RATE_LIMITS = 'off';
  const { ctx, env, stop } = await service.startService();
  const redis = new Redis(env.REDIS_URL);
  const pg = new Client({ connectionString: env.DATABASE_URL });
  await pg.connect();
  try {
    const redisBefore = await usedMemory(redis);
    const pgBefore = await pgBytes(pg);
    const guests = [];
    for (let i = 0; i < GUESTS; i += 50)
      guests.push(...(await Promise.all(Array.from({ length: Math.min(50, GUESTS - i) }, () => guest(ctx)))));
    const redisGuests = await usedMemory(redis);
    const pgGuests = await pgBytes(pg);
    const upgradedSessions = [];
    for (let i = 0; i < UPGRADED; i++) upgradedSessions.push(await upgrade(ctx, guests[i], i));
    const pgUpgraded = await pgBytes(pg);
    // What stays once the hour of a browser flow has passed: only sessions and their users' indexes.
    await dropTransientKeys(redis, env.REDIS_KEY_PREFIX);
    const redisIdle = await usedMemory(redis);

    const p = env.REDIS_KEY_PREFIX;
    const usage = async (keys) =>
      (await Promise.all(keys.map((k) => redis.memory('USAGE', `${p}${k}`, 'SAMPLES', '0')))).reduce(
        (a, b) => a + Number(b),
        0,
      ) / keys.length;
    const sample = guests.slice(UPGRADED, UPGRADED + 200);
    const guestSessionKey = await usage(sample.map((g) => `s:{${g.tokens.session_id}}`));
    const guestIndexKey = await usage(sample.map((g) => `u:{${g.user}}`));
    const upgradedSessionKey = await usage(upgradedSessions.map((sid) => `s:{${sid}}`));
    const perGuestRedis = (redisGuests - redisBefore) / GUESTS;
    const perIdleGuestRedis = (redisIdle - redisBefore) / GUESTS;
    const perGuestPg = Object.fromEntries(TABLES.map((t) => [t, (pgGuests[t] - pgBefore[t]) / GUESTS]));
    const perUpgradePg = Object.fromEntries(TABLES.map((t) => [t, (pgUpgraded[t] - pgGuests[t]) / UPGRADED]));
    const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0);
    const guestPg = sum(perGuestPg);
    // An upgraded player keeps the guest's user row and gains an identity and a replacement session.
    const upgradedPg = guestPg + sum(perUpgradePg);
    const gib = (bytes) => (bytes / 2 ** 30).toFixed(1);
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
      postgres: {
        per_guest_bytes: Object.fromEntries(Object.entries(perGuestPg).map(([k, v]) => [k, Math.round(v)])),
        per_upgrade_extra_bytes: Object.fromEntries(Object.entries(perUpgradePg).map(([k, v]) => [k, Math.round(v)])),
      },
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
    await stop();
  }
}

main().catch((err) => {
  process.stderr.write(`${err.stack ?? err}\n`);
  process.exit(1);
});
