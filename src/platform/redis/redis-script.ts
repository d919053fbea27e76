import { createHash } from 'node:crypto';
import type { RedisClient } from './redis-client';

/**
 * A Lua script run by its SHA-1 (EVALSHA), falling back to EVAL when the server does not know it
 * yet (first use, restart, failover). Sending the body on every call cost a measurable share of
 * the refresh grant's CPU time.
 */
export class RedisScript {
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async run(redis: RedisClient, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (err) {
      if (err instanceof Error && err.message.startsWith('NOSCRIPT'))
        return redis.eval(this.lua, keys.length, ...keys, ...args);
      throw err;
    }
  }
}
