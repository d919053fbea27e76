import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, type RateLimitBudget } from '../../config/config';
import { AppError } from '../../errors/app-error';
import { Pseudonymizer } from '../crypto/digests';
import { MetricsService } from '../metrics/metrics.service';
import { REDIS, type RedisClient } from '../redis/redis.module';
import { RedisScript } from '../redis/redis-script';

// Fixed window counter: INCR and EXPIRE in one script so a crash between them cannot leave a
// counter without expiry (which would lock a subject out for good).
const HIT = new RedisScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
if n > tonumber(ARGV[2]) then
  local ttl = redis.call('TTL', KEYS[1])
  if ttl < 0 then redis.call('EXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
  return ttl
end
return 0`);

export interface RateLimitCheck {
  /** Names the budget; part of the key, so one subject has one counter per budget. */
  readonly name: string;
  /** Domain separator of the pseudonymisation (management and each tenant have their own). */
  readonly domain: string;
  /** The raw subject (IP, email, flow id, user id); only its HMAC reaches Redis. */
  readonly subject: string;
  readonly budget: RateLimitBudget;
}

/** Atomic rate limits in Redis over HMAC-pseudonymised subjects (spec section 8). */
@Injectable()
export class RateLimiter {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly pseudonymizer: Pseudonymizer,
    private readonly metrics: MetricsService,
  ) {}

  /** Counts one hit against every budget; throws 429 with the seconds to wait when one is exhausted. */
  async hit(...checks: RateLimitCheck[]): Promise<void> {
    if (!this.config.rateLimits.enabled) return;
    for (const check of checks) {
      const subject = this.pseudonymizer.mac(`${check.domain}:rate-limit:${check.name}`, check.subject);
      const retryAfter = (await HIT.run(
        this.redis,
        [`rl:${check.name}:{${subject}}`],
        [check.budget.windowSeconds, check.budget.limit],
      )) as number;
      if (retryAfter > 0) {
        this.metrics.rateLimited.inc({ budget: check.name });
        throw new AppError('rate_limited', undefined, { retryAfterSeconds: retryAfter });
      }
    }
  }
}
