import Redis, { Cluster } from 'ioredis';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { createApp } from '../../../src/app.setup';
import { loadConfig } from '../../../src/config/config';
import { ControlPlaneSeedService } from '../../../src/directory/control-plane-seed.service';
import type { RedisClient } from '../../../src/platform/redis/redis-client';
import { MIGRATIONS } from '../../../src/platform/database/data-source-options';
import { REDIS, whenReady } from '../../../src/platform/redis/redis.module';
import { createSuiteDatabase, dropSuiteDatabase, freshDatabase, PG_BASE } from '../../support/database';
import { freePort, REDIS_URL, startTestApp, testEnv } from '../../support/test-app';

/**
 * Spec 1.6: a missing or conflicting control-plane seed stops the service at start-up; so does a
 * migration of the release not yet applied.
 */
describe('start-up checks of the schema and the control-plane seed', () => {
  let db: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    db = await createSuiteDatabase();
    env = testEnv(await freePort(), db, 'smtp://127.0.0.1:9');
  });
  afterAll(async () => {
    await dropSuiteDatabase(db);
  });

  async function listenError(overrides: Record<string, string> = {}): Promise<string | null> {
    const app = await createApp(loadConfig({ ...env, ...overrides }));
    try {
      await app.listen(0);
      return null;
    } catch (err) {
      return (err as Error).message;
    } finally {
      await app.close().catch(() => undefined);
    }
  }

  it('refuses to start without a seed, naming the problem and the fix', async () => {
    const message = await listenError();
    expect(message).toContain('control-plane seed: control-plane realm is missing');
    expect(message).toContain('seed-control-plane');
  });

  it('starts once seeded, and refuses a conflicting secret or callback without printing the secret', async () => {
    const app = await createApp(loadConfig(env));
    await app.get(ControlPlaneSeedService).seed();
    await app.close();
    expect(await listenError()).toBeNull();
    const otherSecret = 'another-secret-of-at-least-thirty-two-chars!!';
    const conflict = await listenError({ CONSOLE_CLIENT_SECRET: otherSecret });
    expect(conflict).toContain('console client secret does not match CONSOLE_CLIENT_SECRET');
    expect(conflict).not.toContain(otherSecret);
    expect(await listenError({ CONSOLE_ORIGIN: 'http://127.0.0.1:1' })).toContain(
      'redirect URI does not match CONSOLE_ORIGIN',
    );
  });

  // A rolling release started before `migrate` would report ready and answer 500 to every request
  // that touches the new schema; it refuses to start instead, and starts once migrated.
  it('refuses to start while a migration of the release is pending, naming the fix', async () => {
    const ds = await new DataSource({ type: 'postgres', url: `${PG_BASE}/${db}`, migrations: MIGRATIONS }).initialize();
    try {
      await ds.undoLastMigration({ transaction: 'each' });
      const message = await listenError();
      expect(message).toContain('DATABASE_URL: the database lacks migrations of this release');
      expect(message).toContain('npm run admin -- migrate');
      await ds.runMigrations({ transaction: 'each' });
    } finally {
      await ds.destroy();
    }
    expect(await listenError()).toBeNull();
  });

  // `migrate` alone changes the schema: an instance starting while it runs must not race it by
  // creating the migrations table (TypeORM's showMigrations did).
  it('refuses to start on a database never migrated, and leaves it as it found it', async () => {
    const empty = `${db}_empty`;
    const url = await freshDatabase(empty);
    try {
      expect(await listenError({ DATABASE_URL: url })).toContain(
        'DATABASE_URL: the database lacks migrations of this release',
      );
      const pg = new Client({ connectionString: url });
      await pg.connect();
      const { rows } = await pg.query(`SELECT relname FROM pg_class WHERE relnamespace = 'public'::regnamespace`);
      await pg.end();
      expect(rows).toEqual([]);
    } finally {
      await dropSuiteDatabase(empty);
    }
  });

  it('the seed stores a digest of the client secret, never the secret', async () => {
    const pg = new Client({ connectionString: `${PG_BASE}/${db}` });
    await pg.connect();
    const { rows } = await pg.query('SELECT secret_digest, redirect_uris FROM clients WHERE id = $1', ['cli_console']);
    await pg.end();
    expect(rows[0].secret_digest).not.toContain(env.CONSOLE_CLIENT_SECRET);
    expect(rows[0].redirect_uris).toEqual([`${env.CONSOLE_ORIGIN}/api/auth/callback`]);
  });
});

/**
 * Start-up waits for Redis (RedisModule): a command for a connection that is not up yet fails
 * without an offline queue, and a cluster client connects to its masters lazily, so a fresh
 * instance would answer its first requests with 503.
 */
describe('start-up waits for every Redis connection', () => {
  it('connects a lazy connection before calling it ready', async () => {
    const lazy = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false });
    try {
      expect(lazy.status).toBe('wait');
      await whenReady(lazy);
      expect(lazy.status).toBe('ready');
    } finally {
      lazy.disconnect();
    }
  });

  it('accepts traffic with every connection up, each master of a cluster included', async () => {
    const t = await startTestApp();
    try {
      const redis = t.app.get<RedisClient>(REDIS);
      const connections = redis instanceof Cluster ? redis.nodes('master') : [redis];
      expect(connections.map((c) => c.status)).toEqual(connections.map(() => 'ready'));
    } finally {
      await t.close();
    }
  });
});
