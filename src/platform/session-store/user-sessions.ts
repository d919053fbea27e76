import { stringsReply } from '../redis/decode';
import { RedisScript } from '../redis/redis-script';
import type { RedisClient } from '../redis/redis-client';

/**
 * The per-user index of live sessions (contract 12: a user's sessions are revoked at once).
 *
 * Layout (cluster-safe: both keys of one user share the `{usr_…}` hash tag):
 *   u:{uid}      sorted set  session ids scored by their expiry (ms); expired members are pruned
 *                            on every add, so the index holds live sessions only
 *   u:{uid}:off  string      the user was deactivated: no session may join the index any more
 *
 * A session joins the index in parallel with its creation. Deactivation sets the mark and empties
 * the index in one script, then revokes each listed session with a tombstone. A creation racing
 * it either joined the index first (and is revoked, or its create refused by the tombstone) or
 * finds the mark and undoes itself, so no session of a deactivated user outlives the command.
 */
const ADD = new RedisScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[4]) then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
return 1`);

// A sliding session (contract 13) moves its entry's expiry forward; an entry already pruned or
// removed by a deactivation is not brought back.
const TOUCH = new RedisScript(`
if redis.call('ZADD', KEYS[1], 'XX', 'GT', 'CH', ARGV[2], ARGV[1]) == 1 and redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 1`);

const DEACTIVATE = new RedisScript(`
redis.call('SET', KEYS[2], '1', 'EX', ARGV[1])
local sids = redis.call('ZRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1])
return sids`);

/**
 * How long the deactivation mark refuses new index entries. Only creations already in flight
 * when the command ran can race it (each checks PostgreSQL first), and they take milliseconds;
 * a day is a wide margin that still lets a user reactivated in the database sign in tomorrow.
 */
const DEACTIVATION_MARK_SECONDS = 86_400;

export class UserSessionIndex {
  constructor(private readonly redis: RedisClient) {}

  /** False when the user is marked deactivated: the caller must not keep the session. */
  async add(userId: string, sessionId: string, expiresAtMs: number): Promise<boolean> {
    const now = Date.now();
    const ttlMs = Math.max(1, expiresAtMs - now);
    const added = await ADD.run(this.redis, [indexKey(userId), markKey(userId)], [sessionId, expiresAtMs, now, ttlMs]);
    return added === 1;
  }

  /** Moves a listed session's expiry to `expiresAtMs`, never backwards. */
  async touch(userId: string, sessionId: string, expiresAtMs: number): Promise<void> {
    await TOUCH.run(this.redis, [indexKey(userId)], [sessionId, expiresAtMs, Math.max(1, expiresAtMs - Date.now())]);
  }

  /** Marks the user and returns the ids of its indexed live sessions, emptying the index. */
  async deactivate(userId: string): Promise<string[]> {
    const reply = await DEACTIVATE.run(this.redis, [indexKey(userId), markKey(userId)], [DEACTIVATION_MARK_SECONDS]);
    return stringsReply(reply).filter(Boolean);
  }

  /** The ids of the user's indexed sessions that have not expired. */
  async list(userId: string): Promise<string[]> {
    return this.redis.zrangebyscore(indexKey(userId), Date.now(), '+inf');
  }
}

const indexKey = (uid: string): string => `u:{${uid}}`;
const markKey = (uid: string): string => `u:{${uid}}:off`;
