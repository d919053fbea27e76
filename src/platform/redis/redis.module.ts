import { Global, Inject, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import Redis, { Cluster, type RedisOptions } from 'ioredis';
import { APP_CONFIG, type AppConfig, type RedisSettings } from '../../config/config';
import type { RedisClient } from './redis-client';
import { RedisEvictionPolicy } from './redis-eviction-policy';

export const REDIS = Symbol('REDIS');

/**
 * Redis is the authoritative session store, so commands must fail fast instead of queueing
 * while it is away: no offline queue, a command timeout, and a capped reconnect backoff so
 * the service serves again within seconds of Redis returning.
 *
 * A command whose connection drops is failed, never sent again after the reconnect (contract 13):
 * the caller has already answered 503, and a rotation resent behind its back would turn the
 * caller's retry into a replay. A rotation that did run before the drop or a timeout is covered by
 * the reuse interval instead.
 */
export function createRedis(config: RedisSettings): RedisClient {
  const logger = new Logger('Redis');
  const common: RedisOptions = {
    keyPrefix: config.redisKeyPrefix,
    enableOfflineQueue: false,
    commandTimeout: config.dependencyTimeoutMs,
    connectTimeout: config.dependencyTimeoutMs,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (times) => Math.min(100 * times, 1000),
    lazyConnect: false,
  };
  const client: RedisClient =
    config.redisClusterNodes.length > 0
      ? new Cluster(
          config.redisClusterNodes.map((n) => {
            const [host, port] = n.split(':');
            return { host: host ?? '127.0.0.1', port: Number(port) };
          }),
          {
            keyPrefix: config.redisKeyPrefix,
            enableOfflineQueue: false,
            clusterRetryStrategy: (times) => Math.min(100 * times, 1000),
            redisOptions: { ...common, ...clusterNodeAuth(config.redisUrl), keyPrefix: undefined },
          },
        )
      : new Redis(config.redisUrl, common);
  let healthy = true;
  client.on('error', (err: Error) => {
    if (healthy) logger.warn({ err: err.message }, 'redis connection error');
    healthy = false;
  });
  client.on('ready', () => {
    if (!healthy) logger.log('redis connection restored');
    healthy = true;
  });
  return client;
}

/**
 * What every node connection of a cluster takes from REDIS_URL: its user and password, and TLS
 * for `rediss://`. The cluster's nodes come from REDIS_CLUSTER_NODES, so without this a cluster
 * that requires a password is never authenticated and a TLS one is spoken to in cleartext.
 */
export function clusterNodeAuth(redisUrl: string): Pick<RedisOptions, 'username' | 'password' | 'tls'> {
  const url = new URL(redisUrl);
  return {
    ...(url.username ? { username: decodeURIComponent(url.username) } : {}),
    ...(url.password ? { password: decodeURIComponent(url.password) } : {}),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/** Resolves when `client` is ready, connecting it first when it waits to be used (a cluster's node connections are lazy). */
export function whenReady(client: RedisClient): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    client.once('ready', () => resolve());
    if (client.status === 'wait') client.connect().catch(() => undefined);
  });
}

@Global()
@Module({
  providers: [
    { provide: REDIS, useFactory: createRedis, inject: [APP_CONFIG] },
    {
      provide: RedisEvictionPolicy,
      useFactory: (redis: RedisClient) => new RedisEvictionPolicy(redis),
      inject: [REDIS],
    },
  ],
  exports: [REDIS, RedisEvictionPolicy],
})
export class RedisModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Redis');

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly evictionPolicy: RedisEvictionPolicy,
  ) {}

  /**
   * Waits (bounded) for the first connection before the service accepts traffic, so a fresh
   * instance does not answer 503 while a cluster client is still discovering its slots or
   * connecting to a master (without an offline queue, a command for a master whose connection
   * is not up yet fails). If Redis stays away the service starts anyway and fails closed per
   * request. Refuses to start on a Redis that evicts keys (contract section 10); every later
   * connection (a failover) is checked again and /readyz reports what it found.
   */
  async onApplicationBootstrap(): Promise<void> {
    const ready = await this.firstConnection();
    this.redis.on('ready', () => void this.evictionPolicy.check().catch(() => undefined));
    if (!ready) {
      this.logger.warn('redis not ready at start-up; requests fail closed until it is');
      return;
    }
    await this.checkDatabase();
    const policy = await this.evictionPolicy.check();
    if (policy.verdict === 'evicting') {
      throw new Error(
        `REDIS_URL: Redis runs with maxmemory-policy ${policy.policy}; svc-auth needs noeviction, since an evicted replay marker, one-time record or budget makes it fail open`,
      );
    }
  }

  /**
   * ioredis meets a SELECT refused on connecting (a database beyond the server's `databases`) with
   * an 'error' event only, and goes on in database 0, among whatever else keeps its keys there.
   */
  private async checkDatabase(): Promise<void> {
    if (this.redis instanceof Cluster || !this.redis.options.db) return;
    const db = this.redis.options.db;
    await this.redis.select(db).catch((err: unknown) => {
      throw new Error(`REDIS_URL: Redis refuses database ${db} (${err instanceof Error ? err.message : String(err)})`);
    });
  }

  private firstConnection(): Promise<boolean> {
    return connectedWithin(this.redis, this.config.dependencyTimeoutMs * 5);
  }

  async onApplicationShutdown(): Promise<void> {
    await closeRedis(this.redis, this.config.dependencyTimeoutMs);
  }
}

/**
 * Whether the client is ready within `ms`, a cluster's masters included (their connections are
 * lazy, and without an offline queue a command for one not yet up fails).
 */
export function connectedWithin(client: RedisClient, ms: number): Promise<boolean> {
  return within(ms, async () => {
    await whenReady(client);
    if (client instanceof Cluster) await Promise.all(client.nodes('master').map(whenReady));
  });
}

/**
 * Quits the client. Connections still in their handshake are let finish it first (for at most
 * `timeoutMs`): ioredis, cutting one mid-handshake, arms a two-second timer for a socket that has
 * already closed, and that timer holds the process up after everything else has stopped.
 */
export async function closeRedis(client: RedisClient, timeoutMs: number): Promise<void> {
  const handshakes = connectionsOf(client).filter(inHandshake);
  if (handshakes.length > 0) await within(timeoutMs, () => Promise.all(handshakes.map(settled)));
  await client.quit().catch(() => client.disconnect());
}

function connectionsOf(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes() : [client];
}

const inHandshake = (connection: Redis): boolean =>
  connection.status === 'connecting' || connection.status === 'connect';

/** Resolves when the connection is ready or has closed. */
const settled = (connection: Redis): Promise<void> =>
  new Promise((resolve) => {
    connection.once('ready', resolve);
    connection.once('close', resolve);
  });

/** Whether `work` finished within `ms`; never waits longer. */
async function within(ms: number, work: () => Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work().then(() => true as const), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
