import { Inject, Injectable } from '@nestjs/common';
import { sha256 } from '../platform/crypto/digests';
import { newSecret } from '../platform/crypto/ids';
import { arrayReply, decodeJson, isString, objectDecoder } from '../platform/redis/decode';
import { REDIS } from '../platform/redis/redis.module';
import type { RedisClient } from '../platform/redis/redis-client';
import { RedisScript } from '../platform/redis/redis-script';

export const AUTHORIZATION_CODE_TTL_SECONDS = 60;

export interface AuthorizationGrant {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly scope: string;
  readonly userId: string;
  readonly email: string;
  /** The session id the exchange will create, allocated now so a replay can revoke it. */
  readonly sessionId: string;
}

const decodeGrant = objectDecoder<AuthorizationGrant>({
  clientId: isString,
  redirectUri: isString,
  codeChallenge: isString,
  scope: isString,
  userId: isString,
  email: isString,
  sessionId: isString,
});

// Consuming leaves a marker naming the session the code was for, in the same hash slot, so a
// second use (contract section 3) can revoke what the first one issued. The marker (a session id,
// about a hundred bytes) lives as long as that session can, so a replay long after the code's own
// 60 s still revokes it.
const CONSUME = new RedisScript(`
local v = redis.call('GETDEL', KEYS[1])
if v then
  redis.call('SET', KEYS[2], cjson.decode(v).sessionId, 'EX', ARGV[1])
  return {'fresh', v}
end
local used = redis.call('GET', KEYS[2])
if used then return {'replayed', used} end
return {'unknown'}`);

export type ConsumeResult =
  | { readonly outcome: 'fresh'; readonly grant: AuthorizationGrant }
  | { readonly outcome: 'replayed'; readonly sessionId: string }
  | { readonly outcome: 'unknown' };

/** Single-use authorization codes (60 s); only sha256 of the code is a key. */
@Injectable()
export class AuthorizationCodesStore {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  async create(grant: AuthorizationGrant): Promise<string> {
    const code = newSecret();
    await this.redis.set(codeKey(code), JSON.stringify(grant), 'EX', AUTHORIZATION_CODE_TTL_SECONDS);
    return code;
  }

  /** `sessionLifetimeSeconds`: how long the session the code creates can live. */
  async consume(code: string, sessionLifetimeSeconds: number): Promise<ConsumeResult> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(code)) return { outcome: 'unknown' };
    const reply = await CONSUME.run(this.redis, [codeKey(code), usedKey(code)], [sessionLifetimeSeconds]);
    const [outcome, value] = arrayReply(reply);
    const grant = outcome === 'fresh' ? decodeJson(value, decodeGrant) : null;
    if (grant) return { outcome: 'fresh', grant };
    if (outcome === 'replayed' && isString(value)) return { outcome: 'replayed', sessionId: value };
    return { outcome: 'unknown' };
  }
}

const codeKey = (code: string): string => `ac:{${sha256(code)}}`;
const usedKey = (code: string): string => `ac:{${sha256(code)}}:used`;
