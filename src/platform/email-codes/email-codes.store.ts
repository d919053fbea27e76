import { Inject, Injectable } from '@nestjs/common';
import { randomInt } from 'node:crypto';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { Pseudonymizer, safeEqual } from '../crypto/digests';
import { REDIS } from '../redis/redis.module';
import type { RedisClient } from '../redis/redis-client';
import { arrayReply } from '../redis/decode';
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

/**
 * How long the guesses a fresh code buys may be spent, resends included (contract section 10):
 * a resend keeps its flow's attempt count only while the new code expires within this time of
 * the fresh one; after that a send buys a fresh allowance from the address's budget. So every
 * wrong guess falls within this time of a send the per-address budget counted (emailGuessBound).
 */
export const CODE_ALLOWANCE_SECONDS = 3600;

/** A code that matched and is spent. */
export interface TakenCode {
  /** Puts it back as it was, for a caller whose use of it a dependency refused (503). */
  readonly restore: () => Promise<void>;
  /**
   * Keeps what it was answered with for `ttlSeconds`, so that the same flow presenting it again
   * after the answer was lost (a phone's dropped connection) is answered alike (`answerOfSpent`).
   */
  readonly remember: (answer: string, ttlSeconds: number) => Promise<void>;
}

/** Whether a send buys fresh attempts (the per-address budget paid) or keeps the flow's count. */
export type CodeAllowance = 'fresh' | 'kept';

// Every attempt counts against the code, right or wrong, atomically with the comparison
// (spec 3: at most EMAIL_CODE_MAX_ATTEMPTS). The code lives in its flow's key, so attempts made in
// another flow never touch it (contract section 10). The MACs compared here are of secrets the
// caller does not know, so Lua's string compare leaks nothing useful about the code. ARGV holds
// the maximum, the number of privacy keys n, then n code MACs and n address MACs: a code sent
// before a PRIVACY_KEY rotation still verifies after it (contract section 12).
// A match answers the record as it was (with this attempt counted) and the milliseconds it had
// left, so a caller whose next step a dependency refused can put the code back (RESTORE).
const CHECK = new RedisScript(`
local c = redis.call('HMGET', KEYS[1], 'code', 'email', 'until')
if not c[1] then return 'missing' end
local max = tonumber(ARGV[1])
local keys = tonumber(ARGV[2])
local n = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if n > max then redis.call('DEL', KEYS[1]); return 'exhausted' end
local code, email = false, false
for i = 1, keys do
  if c[1] == ARGV[2 + i] then code = true end
  if c[2] == ARGV[2 + keys + i] then email = true end
end
if code and email then
  local ttl = redis.call('PTTL', KEYS[1])
  redis.call('DEL', KEYS[1])
  return {'ok', c[1], c[2], tostring(n), c[3] or '', ttl}
end
if n >= max then redis.call('DEL', KEYS[1]) end
return 'wrong'`);

// Puts a matched code back as CHECK found it, unless the flow holds a code again (a new one sent
// meanwhile stays). ARGV: code MAC, address MAC, attempts, allowance deadline, milliseconds left.
const RESTORE = new RedisScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'code', ARGV[1], 'email', ARGV[2], 'attempts', ARGV[3], 'until', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`);

// Shared by LIVE and ISSUE: whether the record in KEYS[k] is a live code for one of the address
// MACs in ARGV[first..], whose allowance outlasts a code sent now (ARGV[2]: now + EMAIL_CODE_TTL).
const LIVE_FOR = `
local function liveFor(key, first, sentUntil, max)
  local r = redis.call('HMGET', key, 'email', 'attempts', 'until')
  if not r[1] or not tonumber(r[2]) or not tonumber(r[3]) then return nil end
  if tonumber(r[2]) >= max or tonumber(r[3]) < sentUntil then return nil end
  for i = first, #ARGV do
    if r[1] == ARGV[i] then return r end
  end
  return nil
end`;

// ARGV: maximum attempts, EMAIL_CODE_TTL, then the address MACs under every key.
const LIVE = new RedisScript(`${LIVE_FOR}
local now = tonumber(redis.call('TIME')[1])
if liveFor(KEYS[1], 3, now + tonumber(ARGV[2]), tonumber(ARGV[1])) then return 1 end
return 0`);

// Writes the flow's new code apart (KEYS[2]), unusable until activated, and removes the live one
// (KEYS[1]). A fresh allowance starts at 0 attempts; a kept one takes the count and the deadline
// of the flow's live code (or of one still being sent) for the address, so a resend buys no
// guesses. A kept allowance with no such code, which only a race can cause, starts exhausted.
// ARGV: maximum attempts, EMAIL_CODE_TTL, the code MAC, 'fresh' or 'kept', CODE_ALLOWANCE_SECONDS,
// then the address MACs, current first.
const ISSUE = new RedisScript(`${LIVE_FOR}
local now = tonumber(redis.call('TIME')[1])
local max = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local attempts, deadline = max, now + tonumber(ARGV[5])
if ARGV[4] == 'fresh' then
  attempts = 0
else
  local kept = liveFor(KEYS[1], 6, now + ttl, max) or liveFor(KEYS[2], 6, now + ttl, max)
  if kept then attempts, deadline = tonumber(kept[2]), tonumber(kept[3]) end
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[2], 'code', ARGV[3], 'email', ARGV[6], 'attempts', attempts, 'until', deadline)
redis.call('EXPIRE', KEYS[2], ttl)
return attempts`);

/**
 * Six-digit email codes (spec 2.3, 3), for management sign-in and tenant email verification alike:
 * one live code per flow, stored only as an HMAC under the privacy key, valid EMAIL_CODE_TTL, at
 * most EMAIL_CODE_MAX_ATTEMPTS attempts per allowance, which a resend keeps. How many fresh
 * allowances an address gets, and so how many guesses, is bounded where they are sent
 * (EmailCodeBudgets).
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
   * even if removing it fails too. A `kept` allowance carries the flow's attempt count over.
   */
  async issue(realm: CodeRealm, flowId: string, email: string, allowance: CodeAllowance): Promise<string> {
    const code = randomInt(0, 1_000_000).toString().padStart(6, '0');
    const { emailCode, emailCodeMaxAttempts } = this.config.ttl;
    await ISSUE.run(
      this.redis,
      [codeKey(realm, flowId), pendingKey(realm, flowId)],
      [
        emailCodeMaxAttempts,
        emailCode,
        this.pseudonymizer.mac(`${realm.domain}:email-code`, `${flowId}:${code}`),
        allowance,
        CODE_ALLOWANCE_SECONDS,
        ...this.emailMacs(realm, email),
      ],
    );
    return code;
  }

  /** Makes the flow's issued code the one `check` compares against (both keys share the flow's slot). */
  async activate(realm: CodeRealm, flowId: string): Promise<void> {
    await this.redis.rename(pendingKey(realm, flowId), codeKey(realm, flowId));
  }

  async discard(realm: CodeRealm, flowId: string): Promise<void> {
    await this.redis.del(pendingKey(realm, flowId));
  }

  /**
   * Whether the flow holds a code for this address that can still be used and whose allowance
   * outlasts a code sent now: a resend then keeps the attempt count instead of buying a fresh one.
   */
  async holdsLiveCode(realm: CodeRealm, flowId: string, email: string): Promise<boolean> {
    const live = await LIVE.run(
      this.redis,
      [codeKey(realm, flowId)],
      [this.config.ttl.emailCodeMaxAttempts, this.config.ttl.emailCode, ...this.emailMacs(realm, email)],
    );
    return live === 1;
  }

  /**
   * Checks a code (each try counts against it) and spends it when it matches; `restore` puts it
   * back for the rest of its lifetime, with the attempts it had, for a caller whose use of it a
   * dependency refused (503, contract 13), unless the flow holds another code by then. Null when
   * the code does not match.
   */
  async take(realm: CodeRealm, flowId: string, email: string, code: string): Promise<TakenCode | null> {
    const codeMacs = this.codeMacs(realm, flowId, code);
    const [status, codeMac, emailMac, attempts, until, ttlMs] = stringsOrNumbers(
      await CHECK.run(
        this.redis,
        [codeKey(realm, flowId)],
        [this.config.ttl.emailCodeMaxAttempts, codeMacs.length, ...codeMacs, ...this.emailMacs(realm, email)],
      ),
    );
    if (status !== 'ok') return null;
    const restore = async (): Promise<void> => {
      if (codeMac === undefined || emailMac === undefined || attempts === undefined) return;
      if (typeof ttlMs !== 'number' || ttlMs <= 0 || until === undefined || until === '') return;
      await RESTORE.run(this.redis, [codeKey(realm, flowId)], [codeMac, emailMac, attempts, until, ttlMs]);
    };
    const remember = async (answer: string, ttlSeconds: number): Promise<void> => {
      if (typeof codeMac !== 'string' || typeof emailMac !== 'string') return;
      // One SET with its expiry: MACs and record ids hold no space.
      await this.redis.set(answeredKey(realm, flowId), `${codeMac} ${emailMac} ${answer}`, 'EX', ttlSeconds);
    };
    return { restore, remember };
  }

  /**
   * What the flow's spent code was answered with (`TakenCode.remember`), when this is that code
   * for that address; else null. Asking counts no attempt and touches no live code of the flow.
   */
  async answerOfSpent(realm: CodeRealm, flowId: string, email: string, code: string): Promise<string | null> {
    const [codeMac, emailMac, answer] = ((await this.redis.get(answeredKey(realm, flowId))) ?? '').split(' ');
    if (!codeMac || !emailMac || !answer) return null;
    const codeMatches = this.codeMacs(realm, flowId, code).some((mac) => safeEqual(mac, codeMac));
    const emailMatches = this.emailMacs(realm, email).some((mac) => safeEqual(mac, emailMac));
    return codeMatches && emailMatches ? answer : null;
  }

  /** The flow's code's MAC under every privacy key, current first (contract section 12). */
  private codeMacs(realm: CodeRealm, flowId: string, code: string): string[] {
    return this.pseudonymizer.macs(`${realm.domain}:email-code`, `${flowId}:${code}`);
  }

  /** The address's MAC under every privacy key, current first (contract section 12). */
  private emailMacs(realm: CodeRealm, email: string): string[] {
    return this.pseudonymizer.macs(`${realm.domain}:email`, email);
  }
}

/** A script's array reply with its strings and integers kept, anything else left out as undefined. */
const stringsOrNumbers = (reply: unknown): Array<string | number | undefined> =>
  arrayReply(reply).map((v) => (typeof v === 'string' || typeof v === 'number' ? v : undefined));

const codeKey = (realm: CodeRealm, flowId: string): string => `cc:${realm.keyScope}{${flowId}}`;
const answeredKey = (realm: CodeRealm, flowId: string): string => `${codeKey(realm, flowId)}:answered`;
const pendingKey = (realm: CodeRealm, flowId: string): string => `${codeKey(realm, flowId)}:unsent`;
