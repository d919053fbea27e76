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
 *
 * Takes one token from every key (ARGV holds window and limit per key) or from none: the reply
 * is {0, 0} when all had room, else {i, seconds} for the first key i that had none.
 */
const TAKE_ALL = new RedisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tats = {}
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[2 * i - 1]) * 1000000
  local interval = window / tonumber(ARGV[2 * i])
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then tat = now end
  local newTat = tat + interval
  local allowAt = newTat - window
  if allowAt > now then return {i, math.max(1, math.ceil((allowAt - now) / 1000000))} end
  tats[i] = newTat
end
for i, key in ipairs(KEYS) do
  redis.call('SET', key, string.format('%.0f', tats[i]), 'PX', math.ceil((tats[i] - now) / 1000))
end
return {0, 0}`);

export interface RateLimitCheck {
  /** Names the budget; part of the key, so one subject has one bucket per budget. */
  readonly name: string;
  /** Domain separator of the pseudonymisation (management and each tenant have their own). */
  readonly domain: string;
  /** The raw subject (IP network, email, flow id, user id); only its HMAC reaches Redis. */
  readonly subject: string;
  readonly budget: RateLimitBudget;
  /**
   * What the subjects of one request's budgets share (the address, the network). Budgets with the
   * same slot live in one Redis Cluster hash slot, so consecutive ones are taken in one script,
   * all or none. A budget is always checked with the same slot (or none), so its key never moves.
   */
  readonly slot?: string;
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
   * Takes one token from every budget; throws 429 with Retry-After naming the first that is empty.
   * Consecutive budgets of one slot are taken together, all or none, in one round trip; budgets
   * after a refusing group are not touched.
   */
  async hit(...checks: RateLimitCheck[]): Promise<void> {
    if (!this.config.rateLimits.enabled) return;
    for (const group of slotGroups(checks)) {
      const reply = await TAKE_ALL.run(
        this.redis,
        group.map((c) => this.key(c)),
        group.flatMap((c) => [c.budget.windowSeconds, c.budget.limit]),
      );
      // A reply that does not say "all taken" or name the refusing budget cannot say the budgets
      // had room: fail closed, never open.
      const [index, retryAfter] = Array.isArray(reply) ? (reply as unknown[]) : [];
      const refused = isNumber(index) && index > 0 ? group[index - 1] : undefined;
      if (index === 0 && retryAfter === 0) continue;
      if (!refused || !isNumber(retryAfter) || retryAfter <= 0)
        throw new DependencyUnavailableError('redis', new Error('unexpected rate-limit reply'));
      this.metrics.rateLimited.inc({ budget: refused.name });
      throw new AppError('rate_limited', undefined, { retryAfterSeconds: retryAfter });
    }
  }

  private key(check: RateLimitCheck): string {
    const subject = this.pseudonymizer.mac(`${check.domain}:rate-limit:${check.name}`, check.subject);
    if (check.slot === undefined) return `rl:${check.name}:{${subject}}`;
    const slot = this.pseudonymizer.mac(`${check.domain}:rate-limit-slot`, check.slot);
    return `rl:${check.name}:{${slot}}:${subject}`;
  }
}

/** Runs of consecutive checks that share a slot; a check without one is a group of its own. */
function slotGroups(checks: readonly RateLimitCheck[]): RateLimitCheck[][] {
  const groups: RateLimitCheck[][] = [];
  for (const check of checks) {
    const last = groups.at(-1);
    if (last && check.slot !== undefined && last[0]?.slot === check.slot) last.push(check);
    else groups.push([check]);
  }
  return groups;
}
