import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, type RateLimitBudget } from '../../config/config';
import { AppError, DependencyUnavailableError } from '../../errors/app-error';
import { Pseudonymizer } from '../crypto/digests';
import { MetricsService } from '../metrics/metrics.service';
import { REDIS } from '../redis/redis.module';
import type { RedisClient } from '../redis/redis-client';
import { isNumber } from '../redis/decode';
import { RedisScript } from '../redis/redis-script';

/**
 * GCRA, the token bucket kept as one timestamp (the theoretical arrival time, TAT): LIMIT
 * requests at once, then one every WINDOW/LIMIT, so no window boundary lets twice the budget
 * through (contract section 10). One key per subject whatever the traffic, and a refused request
 * writes nothing, so a flood cannot grow Redis. Redis's own clock, so instances agree.
 * rate-limiter-flexible's Redis limiter was considered: it counts fixed windows.
 *
 * Takes one token from every key (ARGV holds window, limit and a floor per key) or from none: the
 * reply is {0, 0} when all had room, else {i, seconds} for the first key i that had none. The
 * floor is the bucket's time under an earlier PRIVACY_KEY (0 when none), so a rotation starts no
 * budget afresh (contract section 12).
 */
const TAKE_ALL = new RedisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tats = {}
for i, key in ipairs(KEYS) do
  local window = tonumber(ARGV[3 * i - 2]) * 1000000
  local interval = window / tonumber(ARGV[3 * i - 1])
  local tat = tonumber(redis.call('GET', key) or now)
  local floor = tonumber(ARGV[3 * i])
  if floor > tat then tat = floor end
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
  /**
   * Names the coarse network tier (`ipv6-48`, ...) a per-network budget counts: a refusal by
   * one means a spread of addresses, so it is counted apart and logged (contract section 10).
   */
  readonly coarseTier?: string;
}

/** At most one warning per budget in this many milliseconds, however long a flood lasts. */
const COARSE_WARNING_INTERVAL_MS = 60_000;

/** Atomic rate limits in Redis over HMAC-pseudonymised subjects (spec section 8). */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger('RateLimiter');
  private readonly lastCoarseWarning = new Map<string, number>();

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
      const slots = this.slotDigests(group[0]);
      const keys = group.map((c) => this.keys(c, slots));
      const floors = await this.floors(keys);
      const reply = await TAKE_ALL.run(
        this.redis,
        keys.map((k) => k[0] as string),
        group.flatMap((c, i) => [c.budget.windowSeconds, c.budget.limit, floors[i] ?? '0']),
      );
      // A reply that does not say "all taken" or name the refusing budget cannot say the budgets
      // had room: fail closed, never open.
      const [index, retryAfter] = Array.isArray(reply) ? (reply as unknown[]) : [];
      const refused = isNumber(index) && index > 0 ? group[index - 1] : undefined;
      if (index === 0 && retryAfter === 0) continue;
      if (!refused || !isNumber(retryAfter) || retryAfter <= 0)
        throw new DependencyUnavailableError('redis', new Error('unexpected rate-limit reply'));
      this.metrics.rateLimited.inc({ budget: refused.name });
      if (refused.coarseTier !== undefined) this.coarseTierTripped(refused.name, refused.coarseTier);
      throw new AppError('rate_limited', undefined, { retryAfterSeconds: retryAfter });
    }
  }

  /**
   * The bucket's key under every privacy key, current first (contract section 12: the first key
   * makes new digests, all verify). Only the first is written.
   */
  private keys(check: RateLimitCheck, slots: readonly string[] | undefined): string[] {
    const subjects = this.pseudonymizer.macs(`${check.domain}:rate-limit:${check.name}`, check.subject);
    if (slots === undefined) return subjects.map((subject) => `rl:${check.name}:{${subject}}`);
    return subjects.map((subject, i) => `rl:${check.name}:{${slots[i] ?? ''}}:${subject}`);
  }

  /** The hash tag of a group's keys under every privacy key; made once per group, as its checks share it. */
  private slotDigests(check: RateLimitCheck | undefined): string[] | undefined {
    if (check?.slot === undefined) return undefined;
    return this.pseudonymizer.macs(`${check.domain}:rate-limit-slot`, check.slot);
  }

  /**
   * While a PRIVACY_KEY rotates, each bucket's latest time under the earlier keys: those keys are
   * no longer written, so reading them apart (they may live in other hash slots) is exact enough.
   * No round trip at all outside a rotation.
   */
  private async floors(keys: readonly string[][]): Promise<string[]> {
    if (this.config.privacyKeys.length < 2) return keys.map(() => '0');
    return Promise.all(
      keys.map(async ([, ...earlier]) => {
        const values = await Promise.all(earlier.map((k) => this.redis.get(k)));
        const times = values.map(Number).filter((v) => Number.isFinite(v) && v > 0);
        return times.length === 0 ? '0' : String(Math.max(...times));
      }),
    );
  }

  /** A coarse tier refusing means many addresses of one network at once: worth an operator's look. */
  private coarseTierTripped(budget: string, tier: string): void {
    this.metrics.networkTierRefusals.inc({ budget, tier });
    const now = Date.now();
    if (now - (this.lastCoarseWarning.get(budget) ?? 0) < COARSE_WARNING_INTERVAL_MS) return;
    this.lastCoarseWarning.set(budget, now);
    this.logger.warn({ budget, tier }, 'a coarse network budget refused requests: many addresses of one network');
  }
}

/**
 * Runs of consecutive checks that share a slot (and the domain its digest is made under); a check
 * without one is a group of its own.
 */
function slotGroups(checks: readonly RateLimitCheck[]): RateLimitCheck[][] {
  const groups: RateLimitCheck[][] = [];
  for (const check of checks) {
    const last = groups.at(-1);
    const first = last?.[0];
    if (last && check.slot !== undefined && first?.slot === check.slot && first.domain === check.domain)
      last.push(check);
    else groups.push([check]);
  }
  return groups;
}
