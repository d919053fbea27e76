import { Inject, Injectable } from '@nestjs/common';
import { newId, newSecret } from '../crypto/ids';
import { sha256 } from '../crypto/digests';
import { REDIS, type RedisClient } from '../redis/redis.module';
import { RedisScript } from '../redis/redis-script';

/**
 * The authoritative store of live sessions, for the control plane and customer tenants alike.
 *
 * Layout (cluster-safe: both keys of a session share the `{ses_…}` hash tag):
 *   s:{sid}       hash  tid uid cid scope email rth(current refresh-token digest) [revoked]
 *   s:{sid}:used  list  digests of the last USED_HISTORY refresh tokens rotated away
 *
 * A refresh token is `<sid>.<secret>`; only sha256(secret) is stored. Presenting a digest found
 * in `used` is a replay and revokes the whole session (spec 2.2). The history is bounded so a
 * session refreshed every five minutes for a month costs about a kilobyte, not megabytes; a token
 * older than the history is refused as invalid without revoking.
 */
const USED_HISTORY = 16;
export interface SessionView {
  readonly sessionId: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly clientId: string;
  readonly scope: string;
  readonly email: string;
}

export type RotateResult =
  | { readonly outcome: 'rotated'; readonly session: SessionView; readonly refreshToken: string }
  | { readonly outcome: 'replayed' | 'invalid' };

const CREATE = new RedisScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'tid', ARGV[1], 'uid', ARGV[2], 'cid', ARGV[3], 'scope', ARGV[4], 'email', ARGV[5], 'rth', ARGV[6])
redis.call('EXPIRE', KEYS[1], ARGV[7])
return 1`);

// Returns {status, tid, uid, cid, scope, email}. A token of another realm or client is 'invalid'
// before anything changes. Compare-and-swap of the current digest makes
// concurrent use of one refresh token yield exactly one 'ok'; the losers see it in `used`.
const ROTATE = new RedisScript(`
local s = redis.call('HMGET', KEYS[1], 'rth', 'tid', 'uid', 'cid', 'scope', 'email', 'revoked')
if not s[1] or s[7] or s[2] ~= ARGV[3] or s[4] ~= ARGV[4] then return {'invalid'} end
if s[1] == ARGV[1] then
  redis.call('HSET', KEYS[1], 'rth', ARGV[2])
  redis.call('LPUSH', KEYS[2], ARGV[1])
  redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[5]) - 1)
  redis.call('EXPIRE', KEYS[2], redis.call('TTL', KEYS[1]))
  return {'ok', s[2], s[3], s[4], s[5], s[6]}
end
for _, used in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  if used == ARGV[1] then
    redis.call('DEL', KEYS[1], KEYS[2])
    return {'replayed'}
  end
end
return {'invalid'}`);

// A revocation that arrives before the session is created (authorization-code replay racing the
// first exchange) leaves a short tombstone so the later CREATE refuses.
const REVOKE = new RedisScript(`
local existed = redis.call('HEXISTS', KEYS[1], 'tid')
redis.call('DEL', KEYS[1], KEYS[2])
if ARGV[1] == '1' then
  redis.call('HSET', KEYS[1], 'revoked', '1')
  redis.call('EXPIRE', KEYS[1], 300)
end
return existed`);

// RFC 7009 revocation by refresh token: any token of the session's chain (current or rotated)
// proves possession; the realm and client must match.
const REVOKE_BY_REFRESH = new RedisScript(`
local s = redis.call('HMGET', KEYS[1], 'rth', 'tid', 'cid')
if not s[1] or s[2] ~= ARGV[2] or s[3] ~= ARGV[3] then return 0 end
local known = s[1] == ARGV[1]
for _, used in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  if used == ARGV[1] then known = true end
end
if known then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 1
end
return 0`);

@Injectable()
export class SessionStore {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  newSessionId(): string {
    return newId('ses');
  }

  /** Creates the live session and returns its first refresh token; false if the id was revoked first. */
  async create(
    session: SessionView,
    ttlSeconds: number,
  ): Promise<{ created: true; refreshToken: string } | { created: false }> {
    const secret = newSecret();
    const created = await CREATE.run(
      this.redis,
      [key(session.sessionId)],
      [
        session.tenantId,
        session.userId,
        session.clientId,
        session.scope,
        session.email,
        sha256(secret),
        String(ttlSeconds),
      ],
    );
    return created === 1 ? { created: true, refreshToken: `${session.sessionId}.${secret}` } : { created: false };
  }

  /** One Redis read: the live session or null (revoked, expired, unknown). */
  async get(sessionId: string): Promise<SessionView | null> {
    const [tid, uid, cid, scope, email, revoked] = await this.redis.hmget(
      key(sessionId),
      'tid',
      'uid',
      'cid',
      'scope',
      'email',
      'revoked',
    );
    if (!tid || !uid || !cid || revoked) return null;
    return { sessionId, tenantId: tid, userId: uid, clientId: cid, scope: scope ?? '', email: email ?? '' };
  }

  async rotate(refreshToken: string, expected: { tenantId: string; clientId: string }): Promise<RotateResult> {
    const parsed = parseRefreshToken(refreshToken);
    if (!parsed) return { outcome: 'invalid' };
    const secret = newSecret();
    const reply = (await ROTATE.run(
      this.redis,
      [key(parsed.sessionId), usedKey(parsed.sessionId)],
      [sha256(parsed.secret), sha256(secret), expected.tenantId, expected.clientId, USED_HISTORY],
    )) as string[];
    const [status, tid, uid, cid, scope, email] = reply;
    if (status === 'ok' && tid && uid && cid) {
      return {
        outcome: 'rotated',
        session: {
          sessionId: parsed.sessionId,
          tenantId: tid,
          userId: uid,
          clientId: cid,
          scope: scope ?? '',
          email: email ?? '',
        },
        refreshToken: `${parsed.sessionId}.${secret}`,
      };
    }
    return { outcome: status === 'replayed' ? 'replayed' : 'invalid' };
  }

  async revokeByRefreshToken(refreshToken: string, expected: { tenantId: string; clientId: string }): Promise<boolean> {
    const parsed = parseRefreshToken(refreshToken);
    if (!parsed) return false;
    const sid = parsed.sessionId;
    return (
      (await REVOKE_BY_REFRESH.run(
        this.redis,
        [key(sid), usedKey(sid)],
        [sha256(parsed.secret), expected.tenantId, expected.clientId],
      )) === 1
    );
  }

  /** Returns whether a live session was revoked. `tombstone` also blocks a later create of this id. */
  async revoke(sessionId: string, opts: { tombstone?: boolean } = {}): Promise<boolean> {
    const existed = await REVOKE.run(this.redis, [key(sessionId), usedKey(sessionId)], [opts.tombstone ? '1' : '0']);
    return existed === 1;
  }
}

function parseRefreshToken(token: string): { sessionId: string; secret: string } | null {
  const m = /^(ses_[A-Za-z0-9_-]{16,64})\.([A-Za-z0-9_-]{43})$/.exec(token);
  return m && m[1] && m[2] ? { sessionId: m[1], secret: m[2] } : null;
}

const key = (sid: string): string => `s:{${sid}}`;
const usedKey = (sid: string): string => `s:{${sid}}:used`;
