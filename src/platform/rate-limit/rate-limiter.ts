import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, type RateLimitBudget } from '../../config/config';
import { AppError, DependencyUnavailableError } from '../../errors/app-error';
import { Pseudonymizer } from '../crypto/digests';
import { MetricsService } from '../metrics/metrics.service';
import { REDIS, type RedisClient } from '../redis/redis.module';
import { isNumber } from '../redis/decode';
import { RedisScript } from '../redis/redis-script';

/**
 * GCRA, the token bucket kept as one timestamp (the theoretical arrival time, TAT): LIMIT
 * requests at once, then one every WINDOW/LIMIT, so no window boundary lets twice the budget
 * through (contract section 10). One key per subject whatever the traffic, and a refused request
 * writes nothing, so a flood cannot grow Redis. Redis's own clock, so instances agree.
 * rate-limiter-flexible's Redis limiter was considered: it counts fixed windows.
 * Returns 0 when allowed, else the seconds until the next request would be.
 */
const HIT = new RedisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local window = tonumber(ARGV[1]) * 1000000
local interval = window / tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local newTat = tat + interval
local allowAt = newTat - window
if allowAt > now then return math.max(1, math.ceil((allowAt - now) / 1000000)) end
redis.call('SET', KEYS[1], string.format('%.0f', newTat), 'PX', math.ceil((newTat - now) / 1000))
return 0`);

export interface RateLimitCheck {
  /** Names the budget; part of the key, so one subject has one bucket per budget. */
  readonly name: string;
  /** Domain separator of the pseudonymisation (management and each tenant have their own). */
  readonly domain: string;
  /** The raw subject (IP network, email, flow id, user id); only its HMAC reaches Redis. */
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

  /**
   * Takes one token from every budget in order; throws 429 with Retry-After at the first that is
   * empty. Budgets after the refusing one are not touched.
   */
  async hit(...checks: RateLimitCheck[]): Promise<void> {
    if (!this.config.rateLimits.enabled) return;
    for (const check of checks) {
      const retryAfter = await this.take(check);
      if (retryAfter > 0) {
        this.metrics.rateLimited.inc({ budget: check.name });
        throw new AppError('rate_limited', undefined, { retryAfterSeconds: retryAfter });
      }
    }
  }

  /** Takes one token; 0 when taken, else the seconds until one is free (nothing is written then). */
  async take(check: RateLimitCheck): Promise<number> {
    if (!this.config.rateLimits.enabled) return 0;
    const reply = await HIT.run(this.redis, [this.key(check)], [check.budget.windowSeconds, check.budget.limit]);
    // A reply that is not a number cannot say the budget has room: fail closed, never open.
    if (!isNumber(reply)) throw new DependencyUnavailableError('redis', new Error('unexpected rate-limit reply'));
    return reply;
  }

  private key(check: RateLimitCheck): string {
    const subject = this.pseudonymizer.mac(`${check.domain}:rate-limit:${check.name}`, check.subject);
    return `rl:${check.name}:{${subject}}`;
  }
}
