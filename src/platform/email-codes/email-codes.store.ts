import { Inject, Injectable } from '@nestjs/common';
import { randomInt } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { Pseudonymizer } from '../crypto/digests';
import { REDIS, type RedisClient } from '../redis/redis.module';
import { RedisScript } from '../redis/redis-script';

/**
 * Whose codes these are: the control plane or one customer tenant. The domain separates the
 * HMACs (a code or address digest of one realm never matches another's) and the key namespace
 * separates the records.
 */
export interface CodeRealm {
  readonly domain: string;
  readonly keyScope: string;
}

export const MANAGEMENT_CODES: CodeRealm = { domain: 'svc:management', keyScope: '' };

export function tenantCodes(tenantId: string): CodeRealm {
  return { domain: `svc:tenant:${tenantId}`, keyScope: `${tenantId}:` };
}

// Every confirm attempt counts, right or wrong, atomically with the comparison. The MACs
// compared here are of secrets the caller does not know, so Lua's string compare leaks nothing
// useful about the code.
const CHECK = new RedisScript(`
local c = redis.call('HMGET', KEYS[1], 'code', 'email')
if not c[1] then return 'missing' end
local n = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if n > tonumber(ARGV[3]) then redis.call('DEL', KEYS[1]); return 'exhausted' end
if c[1] == ARGV[1] and c[2] == ARGV[2] then redis.call('DEL', KEYS[1]); return 'ok' end
if n >= tonumber(ARGV[3]) then redis.call('DEL', KEYS[1]) end
return 'wrong'`);

// The per-address budget is reserved before comparing, so parallel flows for one address cannot
// multiply the guesses an attacker gets.
const RESERVE = new RedisScript(`
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n`);

/**
 * Six-digit email codes (spec 2.3, 3), for management sign-in and tenant email verification alike:
 * one live code per flow, stored only as an HMAC under the privacy key, valid EMAIL_CODE_TTL, at
 * most EMAIL_CODE_MAX_ATTEMPTS attempts per code and per address across flows.
 */
@Injectable()
export class EmailCodesStore {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly pseudonymizer: Pseudonymizer,
  ) {}

  /**
   * Generates a fresh code for the flow, replacing any earlier one. It is stored apart, unusable,
   * until `activate` says its mail was accepted: a code whose mail failed can then never be used,
   * even if removing it fails too.
   */
  async issue(realm: CodeRealm, flowId: string, email: string): Promise<string> {
    const code = randomInt(0, 1_000_000).toString().padStart(6, '0');
    const pending = pendingKey(realm, flowId);
    await this.redis
      .multi()
      .del(codeKey(realm, flowId))
      .hset(pending, 'code', this.codeMac(realm, flowId, code), 'email', this.emailMac(realm, email), 'attempts', '0')
      .expire(pending, this.config.ttl.emailCode)
      .exec()
      .then(assertExecOk);
    return code;
  }

  /** Makes the flow's issued code the one `check` compares against (both keys share the flow's slot). */
  async activate(realm: CodeRealm, flowId: string): Promise<void> {
    await this.redis.rename(pendingKey(realm, flowId), codeKey(realm, flowId));
  }

  async discard(realm: CodeRealm, flowId: string): Promise<void> {
    await this.redis.del(pendingKey(realm, flowId));
  }

  async check(realm: CodeRealm, flowId: string, email: string, code: string): Promise<boolean> {
    const emailMac = this.emailMac(realm, email);
    const used = (await RESERVE.run(this.redis, [addressKey(emailMac)], [this.config.ttl.emailCode])) as number;
    if (used > this.config.ttl.emailCodeMaxAttempts) return false;
    const result = await CHECK.run(
      this.redis,
      [codeKey(realm, flowId)],
      [this.codeMac(realm, flowId, code), emailMac, this.config.ttl.emailCodeMaxAttempts],
    );
    if (result === 'ok') {
      await this.redis.del(addressKey(emailMac));
      return true;
    }
    return false;
  }

  private codeMac(realm: CodeRealm, flowId: string, code: string): string {
    return this.pseudonymizer.mac(`${realm.domain}:email-code`, `${flowId}:${code}`);
  }

  private emailMac(realm: CodeRealm, email: string): string {
    return this.pseudonymizer.mac(`${realm.domain}:email`, email);
  }
}

function assertExecOk(results: [Error | null, unknown][] | null): void {
  const failed = results?.find(([err]) => err !== null);
  if (!results || failed) throw failed?.[0] ?? new Error('redis transaction aborted');
}

const codeKey = (realm: CodeRealm, flowId: string): string => `cc:${realm.keyScope}{${flowId}}`;
const pendingKey = (realm: CodeRealm, flowId: string): string => `${codeKey(realm, flowId)}:unsent`;
const addressKey = (emailMac: string): string => `cca:{${emailMac}}`;
