import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Redis, { Cluster } from 'ioredis';
import { Client } from 'pg';
import { createApp } from '../../../src/app.setup';
import { loadConfig } from '../../../src/config/config';
import { ControlPlaneSeedService } from '../../../src/directory/control-plane-seed.service';
import { REDIS, type RedisClient, whenReady } from '../../../src/platform/redis/redis.module';
import { createSuiteDatabase, dropSuiteDatabase, PG_BASE } from '../../support/database';
import { freePort, REDIS_URL, startTestApp, testEnv } from '../../support/test-app';

/** Spec 1.6: a missing or conflicting control-plane seed stops the service at start-up. */
describe('start-up checks of the control-plane seed', () => {
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

  it('the seed stores a digest of the client secret, never the secret', async () => {
    const pg = new Client({ connectionString: `${PG_BASE}/${db}` });
    await pg.connect();
    const { rows } = await pg.query('SELECT secret_digest, redirect_uris FROM clients WHERE id = $1', ['cli_console']);
    await pg.end();
    expect(rows[0].secret_digest).not.toContain(env.CONSOLE_CLIENT_SECRET);
    expect(rows[0].redirect_uris).toEqual([`${env.CONSOLE_ORIGIN}/api/auth/callback`]);
  });
});

describe('admin CLI (compiled, as operators run it)', () => {
  const cli = join(__dirname, '../../../dist/src/cli/admin.js');
  let db: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    if (!existsSync(cli)) throw new Error('build first: npm run build (npm test does)');
    db = await createSuiteDatabase();
    env = { ...process.env, ...testEnv(await freePort(), db, 'smtp://127.0.0.1:9') } as Record<string, string>;
  });
  afterAll(async () => {
    await dropSuiteDatabase(db);
  });

  /** The compiled CLI; a last `{stdin}` argument is what it reads on stdin (else none). */
  const run = (...argv: Array<string | { stdin: string }>): { code: number; out: unknown; err: string } => {
    const last = argv.at(-1);
    const input = typeof last === 'object' ? last.stdin : undefined;
    const args = argv.filter((a): a is string => typeof a === 'string');
    try {
      const out = execFileSync('node', [cli, ...args], {
        env,
        encoding: 'utf8',
        input,
        stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
      return { code: 0, out: JSON.parse(out), err: '' };
    } catch (e) {
      const err = e as { status: number; stderr: string };
      return { code: err.status, out: null, err: err.stderr };
    }
  };

  it('runs the contract commands, prints JSON and exits non-zero on errors', () => {
    expect(run('migrate')).toMatchObject({ code: 0, out: { migrated: [] } });
    expect(run('seed-control-plane')).toMatchObject({
      code: 0,
      out: { realm: 'control-plane', client_id: 'cli_console' },
    });
    expect(run('tenant', 'create', '--id', 'acme', '--name', 'Acme')).toMatchObject({
      code: 0,
      out: { tenant: { id: 'acme', status: 'active' } },
    });
    const dup = run('tenant', 'create', '--id', 'acme', '--name', 'Acme');
    expect(dup.code).not.toBe(0);
    expect(JSON.parse(dup.err)).toEqual({ error: 'invalid_input', message: 'tenant acme already exists' });
    expect(run('tenant', 'create', '--id', 'control-plane', '--name', 'x').code).not.toBe(0);
    expect(
      run(
        'client',
        'create',
        '--tenant',
        'acme',
        '--id',
        'cli_acme',
        '--name',
        'Acme Web',
        '--type',
        'browser',
        '--scopes',
        'openid offline_access',
        '--redirect-uri',
        'https://play.acme.example/cb',
        '--web-origins',
        'https://Portal.example:443 http://127.0.0.1:3001',
      ),
    ).toMatchObject({
      code: 0,
      out: {
        client: {
          client_id: 'cli_acme',
          scopes: ['openid', 'offline_access'],
          // Contract section 11: the redirect URI's origin plus the given ones, canonical.
          web_origins: ['https://play.acme.example', 'https://portal.example', 'http://127.0.0.1:3001'],
        },
      },
    });
    const webOrigins = (type: string, origins: string) =>
      run(
        'client',
        'create',
        '--tenant',
        'acme',
        '--id',
        'cli_wo',
        '--name',
        'x',
        '--type',
        type,
        '--scopes',
        '',
        '--web-origins',
        origins,
      );
    expect(JSON.parse(webOrigins('browser', 'https://play.example/game').err)).toEqual({
      error: 'invalid_input',
      message: '--web-origins: https://play.example/game is not an http(s) origin (scheme://host[:port])',
    });
    expect(webOrigins('browser', 'null').code).not.toBe(0);
    expect(JSON.parse(webOrigins('native', 'https://play.example').err)).toEqual({
      error: 'invalid_input',
      message: '--web-origins is for browser clients only',
    });
    expect(
      run(
        'client',
        'create',
        '--tenant',
        'acme',
        '--id',
        'cli_bad',
        '--name',
        'x',
        '--type',
        'spa',
        '--scopes',
        '',
        '--redirect-uri',
        'https://x',
      ).code,
    ).not.toBe(0);
    expect(
      run(
        'client',
        'create',
        '--tenant',
        'acme',
        '--id',
        'cli_bad',
        '--name',
        'x',
        '--type',
        'native',
        '--scopes',
        'admin',
        '--redirect-uri',
        'https://x',
      ).code,
    ).not.toBe(0);
    expect(
      run('membership', 'add', '--tenant', 'acme', '--email', 'Dev@Acme.example', '--role', 'owner'),
    ).toMatchObject({ code: 0, out: { membership: { tenant: 'acme', role: 'owner' } } });
    expect(run('membership', 'add', '--tenant', 'acme', '--email', 'dev@acme.example', '--role', 'root').code).not.toBe(
      0,
    );
    expect(run('membership', 'remove', '--tenant', 'acme', '--email', 'dev@acme.example')).toMatchObject({ code: 0 });
    expect(run('membership', 'remove', '--tenant', 'acme', '--email', 'dev@acme.example').code).not.toBe(0);
    expect(run('client', 'disable', '--tenant', 'acme', '--id', 'cli_acme')).toMatchObject({
      code: 0,
      out: { client: { enabled: false } },
    });
    expect(run('client', 'disable', '--tenant', 'control-plane', '--id', 'cli_console').code).not.toBe(0);
    // The chat secret comes on stdin (`-`) or from a file (issue 22, point 6); contract 7's
    // --client-secret still works (with a warning on stderr).
    const chat = ['chat', 'configure', '--tenant', 'acme', '--client-id', '123'];
    const callback = ['--redirect-uri', 'http://localhost:3000/t/acme/chat/callback'];
    expect(run(...chat, '--client-secret-file', '-', ...callback, { stdin: 's3cret\n' })).toMatchObject({
      code: 0,
      out: { chat_platform: { tenant: 'acme', client_id: '123' } },
    });
    const onArgv = run(...chat, '--client-secret', 's3cret', ...callback);
    expect(onArgv).toMatchObject({ code: 0, out: { chat_platform: { tenant: 'acme', client_id: '123' } } });
    expect(run(...chat, '--client-secret', 's3cret', '--client-secret-file', '-', ...callback).code).toBe(1);
    expect(JSON.parse(run(...chat, '--client-secret-file', '-', ...callback, { stdin: '' }).err)).toEqual({
      error: 'invalid_input',
      message: '--client-secret-file: must hold the secret alone, on one line',
    });
    expect(run('tenant', 'deactivate', '--id', 'acme')).toMatchObject({
      code: 0,
      out: { tenant: { id: 'acme', status: 'inactive' } },
    });
    expect(run('nonsense').code).not.toBe(0);
  });

  it('stores the chat-platform secret sealed, not in clear', async () => {
    const pg = new Client({ connectionString: `${PG_BASE}/${db}` });
    await pg.connect();
    const { rows } = await pg.query('SELECT client_secret_sealed FROM chat_platform_apps');
    await pg.end();
    expect(rows).toHaveLength(1);
    expect(rows[0].client_secret_sealed).not.toContain('s3cret');
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
