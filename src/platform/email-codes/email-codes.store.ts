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

// Every attempt counts against the code, right or wrong, atomically with the comparison
// (spec 3: at most EMAIL_CODE_MAX_ATTEMPTS). The code lives in its flow's key, so attempts made in
// another flow never touch it (contract section 10). The MACs compared here are of secrets the
// caller does not know, so Lua's string compare leaks nothing useful about the code.
const CHECK = new RedisScript(`
local c = redis.call('HMGET', KEYS[1], 'code', 'email')
if not c[1] then return 'missing' end
local n = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if n > tonumber(ARGV[3]) then redis.call('DEL', KEYS[1]); return 'exhausted' end
if c[1] == ARGV[1] and c[2] == ARGV[2] then redis.call('DEL', KEYS[1]); return 'ok' end
if n >= tonumber(ARGV[3]) then redis.call('DEL', KEYS[1]) end
return 'wrong'`);

/**
 * Six-digit email codes (spec 2.3, 3), for management sign-in and tenant email verification alike:
 * one live code per flow, stored only as an HMAC under the privacy key, valid EMAIL_CODE_TTL, at
 * most EMAIL_CODE_MAX_ATTEMPTS attempts per code. How many codes an address gets, and so how many
 * guesses, is bounded where they are sent (EmailCodeBudgets).
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

  /** Whether the flow holds a code for this address that can still be used. */
  async holdsLiveCode(realm: CodeRealm, flowId: string, email: string): Promise<boolean> {
    const [mac, attempts] = await this.redis.hmget(codeKey(realm, flowId), 'email', 'attempts');
    return mac === this.emailMac(realm, email) && Number(attempts) < this.config.ttl.emailCodeMaxAttempts;
  }

  async check(realm: CodeRealm, flowId: string, email: string, code: string): Promise<boolean> {
    const result = await CHECK.run(
      this.redis,
      [codeKey(realm, flowId)],
      [this.codeMac(realm, flowId, code), this.emailMac(realm, email), this.config.ttl.emailCodeMaxAttempts],
    );
    return result === 'ok';
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
