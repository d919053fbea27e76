import { Logger } from '@nestjs/common';
import { Cluster } from 'ioredis';
import { dependencyOf } from '../../errors/dependency-failure';
import type { RedisClient } from './redis-client';

export type EvictionPolicyState =
  | { readonly verdict: 'noeviction' }
  /** CONFIG GET is not allowed here (a managed Redis, an ACL): the operator must vouch for it. */
  | { readonly verdict: 'unverified'; readonly reason: string }
  | { readonly verdict: 'evicting'; readonly policy: string };

/**
 * Redis must never evict (spec 1.6, contract section 10): an evicted replay marker, refresh
 * history, one-time record or budget bucket makes the service fail open, while `noeviction` makes
 * a full Redis refuse writes, which the service answers with 503. Every master is asked.
 * Built by RedisModule's factory.
 */
export class RedisEvictionPolicy {
  private readonly logger = new Logger('Redis');
  private current: EvictionPolicyState = { verdict: 'unverified', reason: 'not checked yet' };

  constructor(private readonly redis: RedisClient) {}

  get state(): EvictionPolicyState {
    return this.current;
  }

  async check(): Promise<EvictionPolicyState> {
    this.current = await this.read();
    if (this.current.verdict === 'unverified')
      this.logger.warn(
        { reason: this.current.reason },
        'cannot read maxmemory-policy; Redis must run with noeviction, or the service fails open under memory pressure',
      );
    if (this.current.verdict === 'evicting')
      this.logger.error(
        { policy: this.current.policy },
        'Redis evicts keys; it must run with maxmemory-policy noeviction',
      );
    return this.current;
  }

  private async read(): Promise<EvictionPolicyState> {
    const servers = this.redis instanceof Cluster ? this.redis.nodes('master') : [this.redis];
    for (const server of servers) {
      let reply: unknown;
      try {
        reply = await server.config('GET', 'maxmemory-policy');
      } catch (err) {
        if (dependencyOf(err)) throw err;
        return { verdict: 'unverified', reason: err instanceof Error ? err.message : String(err) };
      }
      const policy = Array.isArray(reply) ? (reply[1] as unknown) : undefined;
      if (typeof policy !== 'string') return { verdict: 'unverified', reason: 'CONFIG GET named no maxmemory-policy' };
      if (policy !== 'noeviction') return { verdict: 'evicting', policy };
    }
    return { verdict: 'noeviction' };
  }
}
