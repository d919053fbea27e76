import type { NestExpressApplication } from '@nestjs/platform-express';
import Redis, { Cluster } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Client } from 'pg';
import type request from 'supertest';
import { createApp } from '../../src/app.setup';
import { loadConfig, type AppConfig } from '../../src/config/config';
import { ControlPlaneSeedService } from '../../src/directory/control-plane-seed.service';
import { OpenApiController } from '../../src/openapi/openapi.controller';
import { clusterNodeAuth } from '../../src/platform/redis/redis.module';
import { createSuiteDatabase, dropSuiteDatabase, PG_BASE } from './database';
import { OpenApiResponses, type OpenApiDocument } from './openapi-responses';
import { CONSOLE_CLIENT_ID, viaHost } from './service-agents';
import { SmtpCatcher } from './smtp-catcher';
import { readTestSecrets } from './test-secrets';

export { consoleBasic, CONSOLE_CLIENT_ID } from './service-agents';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Set by scripts/test.sh to run suites against a 3-master Redis Cluster. */
const CLUSTER_NODES = process.env.TEST_REDIS_CLUSTER_NODES ?? '';

export interface TestApp {
  readonly app: NestExpressApplication;
  readonly config: AppConfig;
  readonly port: number;
  readonly authOrigin: string;
  readonly consoleOrigin: string;
  readonly smtp: SmtpCatcher;
  /** Direct PostgreSQL access for assertions about rows. */
  readonly pg: Client;
  /** Direct Redis access (already prefixed with the suite's key prefix). */
  readonly redis: Redis | Cluster;
  /**
   * Every key of this deployment, without the prefix, on a single server or a cluster; sorted, as
   * KEYS answers in hash-table order, which a rehash between two snapshots changes.
   */
  redisKeys(): Promise<string[]>;
  readonly databaseName: string;
  readonly env: Readonly<Record<string, string>>;
  /** The served OpenAPI document, which every answer to auth() and console() is checked against. */
  readonly openapi: OpenApiResponses;
  auth(): ReturnType<typeof request>;
  console(): ReturnType<typeof request>;
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** The environment a suite's service runs with; `overrides` shorten lifetimes and the like. */
export function testEnv(
  port: number,
  databaseName: string,
  smtpUrl: string,
  overrides: Record<string, string> = {},
): Record<string, string> {
  const secrets = readTestSecrets();
  return {
    NODE_ENV: 'test',
    PORT: String(port),
    AUTH_ORIGIN: `http://localhost:${port}`,
    CONSOLE_ORIGIN: `http://127.0.0.1:${port}`,
    DATABASE_URL: `${PG_BASE}/${databaseName}`,
    REDIS_URL,
    // Suites that bring their own Redis (REDIS_URL override) stay on it in a cluster run too.
    ...(CLUSTER_NODES && !overrides.REDIS_URL ? { REDIS_CLUSTER_NODES: CLUSTER_NODES } : {}),
    REDIS_KEY_PREFIX: `t${randomBytes(5).toString('hex')}:`,
    CONSOLE_CLIENT_ID,
    CONSOLE_CLIENT_SECRET: secrets.CONSOLE_CLIENT_SECRET,
    CONSOLE_SESSION_KEY: secrets.CONSOLE_SESSION_KEY,
    PRIVACY_KEY: secrets.PRIVACY_KEY,
    SIGNING_KEYS: secrets.SIGNING_KEYS,
    MAIL_TRANSPORT: 'smtp',
    SMTP_URL: smtpUrl,
    MAIL_FROM: 'svc-auth@test.invalid',
    LOG_LEVEL: 'silent',
    DEPENDENCY_TIMEOUT_MS: '1000',
    ...overrides,
  };
}

/**
 * Starts the real service on a free port against a fresh PostgreSQL database (migrated from the
 * template), the shared Redis under a suite-unique key prefix, and a real SMTP server.
 */
export interface StartOptions {
  /** Collects every log line the service writes. */
  readonly logLines?: string[];
  /**
   * Another instance of the same deployment: same database, Redis key prefix and origins, on its
   * own port. Its close() leaves the shared database to the first instance.
   */
  readonly shareWith?: TestApp;
}

export async function startTestApp(overrides: Record<string, string> = {}, opts: StartOptions = {}): Promise<TestApp> {
  // A port free when picked may be taken before the app listens (the origins name it, so the app
  // is built for it first): by then another suite's outgoing connection may hold it. Start afresh.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnFreePort(overrides, opts);
    } catch (err) {
      if (attempt >= 3 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
}

async function startOnFreePort(overrides: Record<string, string>, opts: StartOptions): Promise<TestApp> {
  const shared = opts.shareWith;
  const [port, smtp, databaseName] = await Promise.all([
    freePort(),
    SmtpCatcher.start(),
    shared ? Promise.resolve(shared.databaseName) : createSuiteDatabase(),
  ]);
  const env = shared
    ? { ...shared.env, SMTP_URL: smtp.url, PORT: String(port), ...overrides }
    : testEnv(port, databaseName, smtp.url, overrides);
  const config = loadConfig(env);
  const logLines = opts.logLines;
  const app = await createApp(
    config,
    logLines ? { logDestination: { write: (line: string) => void logLines.push(line) } } : {},
  );
  await app.get(ControlPlaneSeedService).seed();
  await app.listen(port).catch(async (err: unknown) => {
    await app.close();
    await smtp.stop();
    if (!shared) await dropSuiteDatabase(databaseName);
    throw err;
  });
  const pg = new Client({ connectionString: env.DATABASE_URL });
  // Fault tests cut the database; the assertion connection must not crash the suite then.
  pg.on('error', () => undefined);
  await pg.connect();
  const prefix = env.REDIS_KEY_PREFIX ?? '';
  const clusterNodes = env.REDIS_CLUSTER_NODES ?? '';
  const redis = clusterNodes
    ? new Cluster(
        clusterNodes.split(',').map((n) => ({ host: n.split(':')[0], port: Number(n.split(':')[1]) })),
        // The service's nodes take REDIS_URL's credentials; so do the test's.
        { keyPrefix: prefix, redisOptions: clusterNodeAuth(env.REDIS_URL ?? REDIS_URL) },
      )
    : new Redis(env.REDIS_URL ?? REDIS_URL, { keyPrefix: prefix });
  // Fault tests stop Redis or withhold its password; a failing command still rejects.
  redis.on('error', () => undefined);
  const redisKeys = async (): Promise<string[]> => {
    const servers = redis instanceof Cluster ? redis.nodes('master') : [redis];
    const keys = (await Promise.all(servers.map((s) => s.keys(`${prefix}*`)))).flat();
    // ioredis never prefixes KEYS patterns, so the prefix is matched and stripped here.
    return [...new Set(keys.map((k) => (k.startsWith(prefix) ? k.slice(prefix.length) : k)))].sort();
  };
  const authOrigin = config.authOrigin;
  const consoleOrigin = config.consoleOrigin;
  // The document the service serves at /openapi.json, taken from the controller that serves it.
  const openapi = new OpenApiResponses(app.get(OpenApiController).openapi() as unknown as OpenApiDocument);
  const checked = { responses: openapi, trustProxy: config.trustProxy > 0 };
  return {
    app,
    config,
    port,
    authOrigin,
    consoleOrigin,
    smtp,
    pg,
    redis,
    redisKeys,
    databaseName,
    env,
    openapi,
    auth: () => viaHost(port, new URL(authOrigin).host, checked),
    console: () => viaHost(port, new URL(consoleOrigin).host, checked),
    async close() {
      await app.close();
      await pg.end().catch(() => undefined);
      if (!shared) {
        for (const k of await redisKeys()) await redis.del(k);
      }
      redis.disconnect();
      await smtp.stop();
      if (!shared) await dropSuiteDatabase(databaseName);
    },
  };
}
