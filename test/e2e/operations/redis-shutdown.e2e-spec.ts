import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '../../..');
const MODULE = join(ROOT, 'dist/src/platform/redis/redis.module.js');

/**
 * Stops the built RedisModule while its connection is in the handshake (the socket is up, the ready
 * check under way). Once stopped, nothing may hold the process: a second later it must be gone, or
 * it says what still runs and exits with 3.
 */
const STOP_DURING_HANDSHAKE = `
const { createRedis, RedisModule } = require(${JSON.stringify(MODULE)});
const config = { redisUrl: 'redis://127.0.0.1:6379', redisClusterNodes: [], redisKeyPrefix: 'shutdown:', dependencyTimeoutMs: 1000 };
const redis = createRedis(config);
redis.once('connect', async () => {
  process.stdout.write(redis.status + '\\n');
  await new RedisModule(redis, config, undefined).onApplicationShutdown();
  setTimeout(() => {
    process.stdout.write('held by ' + process.getActiveResourcesInfo().join(' '));
    process.exit(3);
  }, 1000).unref();
});`;

/**
 * A service told to stop while a Redis connection is still in its handshake (a failover, a
 * reconnect, a slow start) must not be held up afterwards: ioredis, cutting a connection
 * mid-handshake, arms a two-second timer for a socket that has already closed.
 */
describe('Redis at shutdown', () => {
  it('leaves nothing running when a connection is stopped during its handshake', () => {
    if (!existsSync(MODULE)) throw new Error('build first: npm run build (npm test does)');
    const child = spawnSync(process.execPath, ['-e', STOP_DURING_HANDSHAKE], { encoding: 'utf8' });
    expect({ status: child.status, stdout: child.stdout }).toEqual({ status: 0, stdout: 'connect\n' });
  });
});
