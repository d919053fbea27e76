import { Inject, Injectable } from '@nestjs/common';
import { Pseudonymizer, safeEqual, sha256 } from '../crypto/digests';
import { newId } from '../crypto/ids';
import { REDIS, type RedisClient } from '../redis/redis.module';
import { stringsReply } from '../redis/decode';
import { RedisScript } from '../redis/redis-script';
import { UserSessionIndex } from './user-sessions';

/**
 * The authoritative store of live sessions, for the control plane and customer tenants alike.
 *
 * Layout: `s:{sid}`, a hash `tid uid cid scope email gen [guest] [upg] [revoked]`.
 *
 * A refresh token is `<sid>.<gen>.<mac>`: the session's generation when it was issued and an HMAC
 * of both under the privacy key. Every rotation raises `gen` by one. Presenting a genuine token
 * of an earlier generation is a replay and revokes the whole session (spec 2.2), however many
 * rotations ago it was issued: the counter is all the store keeps, so replay detection lasts the
 * session's whole life at a constant cost. The MAC is checked before Redis is asked, so nobody
 * who merely knows a session id (it is in every access token) can forge an "old" token to revoke
 * it, and Redis holds nothing from which a token could be rebuilt.
 *
 * `upg` marks a guest session whose upgrade has begun (spec 4.3 rule 4), counting the upgrades
 * under way: should the revocation after the committed move fail, the refresh grant sees the mark
 * and asks PostgreSQL whether the session was superseded before it rotates anything.
 *
 * Every session is also listed in its user's index (user-sessions.ts), so deactivating a user
 * revokes all of its sessions at once (contract 12).
 */
const REFRESH_TOKEN_DOMAIN = 'svc:refresh-token';

export interface SessionView {
  readonly sessionId: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly clientId: string;
  readonly scope: string;
  readonly email: string;
  /**
   * Customer sessions: whether the subject was a guest when the session began. It stays so for
   * the session's life, because an upgrade replaces the session (spec 4.3 rule 4). Undefined for
   * sessions written before the field existed.
   */
  readonly guest?: boolean;
}

export type RotateResult =
  | { readonly outcome: 'rotated'; readonly session: SessionView; readonly refreshToken: string }
  | { readonly outcome: 'replayed'; readonly sessionId: string; readonly userId: string }
  | { readonly outcome: 'invalid' };

/** Asked only for a session marked by an upgrade: whether that upgrade committed and replaced it. */
export type SupersededCheck = (sessionId: string) => Promise<boolean>;

const CREATE = new RedisScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'tid', ARGV[1], 'uid', ARGV[2], 'cid', ARGV[3], 'scope', ARGV[4], 'email', ARGV[5], 'gen', '0')
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'guest', ARGV[7]) end
redis.call('EXPIRE', KEYS[1], ARGV[6])
return 1`);

// Returns {status, tid, uid, cid, scope, email, gen, guest}. A token of another realm or client is
// 'invalid' before anything changes. Compare-and-swap on the generation makes concurrent use of
// one refresh token yield exactly one 'ok'; the others present an older generation: a replay.
// ARGV[4] = '1' once the caller has checked an upgrade mark against PostgreSQL.
const ROTATE = new RedisScript(`
local s = redis.call('HMGET', KEYS[1], 'gen', 'tid', 'uid', 'cid', 'scope', 'email', 'revoked', 'upg', 'guest')
if not s[1] or s[7] or s[2] ~= ARGV[2] or s[4] ~= ARGV[3] then return {'invalid'} end
local gen = tonumber(s[1])
local presented = tonumber(ARGV[1])
if presented == gen then
  if tonumber(s[8] or '0') > 0 and ARGV[4] ~= '1' then return {'marked'} end
  redis.call('HSET', KEYS[1], 'gen', gen + 1)
  return {'ok', s[2], s[3], s[4], s[5], s[6], tostring(gen + 1), s[9] or ''}
end
if presented < gen then
  redis.call('DEL', KEYS[1])
  return {'replayed', s[3]}
end
return {'invalid'}`);

// A session stored by the release before generations (`rth` = sha256 of the token's secret, and a
// `:used` list) moves to generation 1 on its first refresh, so a deploy signs nobody out and a
// guest who never linked a credential keeps the account. Its older tokens are then refused as
// invalid without revoking: that release's bounded history is not carried over.
const ROTATE_LEGACY = new RedisScript(`
local s = redis.call('HMGET', KEYS[1], 'rth', 'tid', 'uid', 'cid', 'scope', 'email', 'revoked', 'gen')
if not s[1] or s[7] or s[8] or s[2] ~= ARGV[2] or s[4] ~= ARGV[3] or s[1] ~= ARGV[1] then return {'invalid'} end
redis.call('HDEL', KEYS[1], 'rth')
redis.call('HSET', KEYS[1], 'gen', 1)
redis.call('DEL', KEYS[2])
return {'ok', s[2], s[3], s[4], s[5], s[6], '1', ''}`);

// A revocation that arrives before the session is created (authorization-code replay racing the
// first exchange) leaves a short tombstone so the later CREATE refuses.
const REVOKE = new RedisScript(`
local existed = redis.call('HEXISTS', KEYS[1], 'tid')
redis.call('DEL', KEYS[1])
if ARGV[1] == '1' then
  redis.call('HSET', KEYS[1], 'revoked', '1')
  redis.call('EXPIRE', KEYS[1], 300)
end
return existed`);

// RFC 7009 revocation by refresh token: any genuine token of the session's chain (current or
// rotated) proves possession; the realm and client must match.
const REVOKE_BY_REFRESH = new RedisScript(`
local s = redis.call('HMGET', KEYS[1], 'gen', 'tid', 'cid', 'uid')
if not s[1] or s[2] ~= ARGV[2] or s[3] ~= ARGV[3] or tonumber(ARGV[1]) > tonumber(s[1]) then return 0 end
redis.call('DEL', KEYS[1])
return s[4]`);

// The upgrade's own liveness check (spec 4.3 rules 2 and 4): the session must still be live and
// the guest's, at the moment the upgrade begins, not only when the bearer was checked.
const MARK_UPGRADE = new RedisScript(`
local s = redis.call('HMGET', KEYS[1], 'uid', 'cid', 'revoked')
if not s[1] or s[3] or s[1] ~= ARGV[1] or s[2] ~= ARGV[2] then return 0 end
redis.call('HINCRBY', KEYS[1], 'upg', 1)
return 1`);

// Upgrades of one session may run in parallel (all but one are refused): the mark counts them, so
// a refused one does not take the mark away from one that is committing.
const UNMARK_UPGRADE = new RedisScript(`
if redis.call('HEXISTS', KEYS[1], 'upg') == 0 then return 0 end
if redis.call('HINCRBY', KEYS[1], 'upg', -1) <= 0 then redis.call('HDEL', KEYS[1], 'upg') end
return 1`);

@Injectable()
export class SessionStore {
  private readonly users: UserSessionIndex;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly macs: Pseudonymizer,
  ) {
    this.users = new UserSessionIndex(redis);
  }

  newSessionId(): string {
    return newId('ses');
  }

  /**
   * Creates the live session and returns its first refresh token; false if the id was revoked
   * first or the user was deactivated meanwhile. The session and its index entry are written in
   * parallel (different hash slots, one round trip of latency).
   */
  async create(
    session: SessionView,
    ttlSeconds: number,
  ): Promise<{ created: true; refreshToken: string } | { created: false }> {
    const [created, indexed] = await Promise.all([
      CREATE.run(
        this.redis,
        [key(session.sessionId)],
        [
          session.tenantId,
          session.userId,
          session.clientId,
          session.scope,
          session.email,
          String(ttlSeconds),
          session.guest === undefined ? '' : session.guest ? '1' : '0',
        ],
      ),
      this.users.add(session.userId, session.sessionId, ttlSeconds),
    ]);
    if (created === 1 && !indexed) await this.revoke(session.sessionId, { tombstone: true });
    return created === 1 && indexed
      ? { created: true, refreshToken: this.token(session.sessionId, 0) }
      : { created: false };
  }

  /**
   * Contract 12: revokes every live session of the user in one step and refuses new ones. The
   * extra ids (sessions recorded in PostgreSQL, which predate the index) are revoked too.
   */
  async revokeUser(userId: string, alsoSessionIds: readonly string[] = []): Promise<string[]> {
    const indexed = await this.users.deactivate(userId);
    const all = [...new Set([...indexed, ...alsoSessionIds])];
    const revoked = await Promise.all(all.map((sid) => this.revoke(sid, { tombstone: true })));
    return all.filter((_, i) => revoked[i]);
  }

  /** Ids of the user's live sessions listed in its index. */
  listUserSessions(userId: string): Promise<string[]> {
    return this.users.list(userId);
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

  /**
   * The rotating refresh (spec 2.2). `superseded` is consulted only for a session an upgrade has
   * marked; a superseded session is revoked and the token refused.
   */
  async rotate(
    refreshToken: string,
    expected: { tenantId: string; clientId: string },
    superseded?: SupersededCheck,
  ): Promise<RotateResult> {
    const parsed = this.parse(refreshToken);
    if (!parsed) return this.rotateLegacy(refreshToken, expected);
    const run = async (checked: boolean): Promise<string[]> =>
      stringsReply(
        await ROTATE.run(
          this.redis,
          [key(parsed.sessionId)],
          [parsed.generation, expected.tenantId, expected.clientId, checked ? '1' : '0'],
        ),
      );
    let reply = await run(false);
    if (reply[0] === 'marked') {
      if (!superseded || (await superseded(parsed.sessionId))) {
        await this.revoke(parsed.sessionId);
        return { outcome: 'invalid' };
      }
      reply = await run(true);
    }
    const rotated = this.rotated(parsed.sessionId, reply);
    if (rotated) return rotated;
    const status = reply[0];
    // The replayed session's owner names the subject of the `refresh.replayed` audit row.
    const owner = reply[1];
    return status === 'replayed' && owner
      ? { outcome: 'replayed', sessionId: parsed.sessionId, userId: owner }
      : { outcome: 'invalid' };
  }

  private async rotateLegacy(
    refreshToken: string,
    expected: { tenantId: string; clientId: string },
  ): Promise<RotateResult> {
    const m = /^(ses_[A-Za-z0-9_-]{16,64})\.([A-Za-z0-9_-]{43})$/.exec(refreshToken);
    if (!m?.[1] || !m[2]) return { outcome: 'invalid' };
    const reply = stringsReply(
      await ROTATE_LEGACY.run(
        this.redis,
        [key(m[1]), `${key(m[1])}:used`],
        [sha256(m[2]), expected.tenantId, expected.clientId],
      ),
    );
    return this.rotated(m[1], reply) ?? { outcome: 'invalid' };
  }

  /** The rotated session from a rotation script's `ok` reply; null for any other reply. */
  private rotated(sessionId: string, reply: string[]): RotateResult | null {
    const [status, tid, uid, cid, scope, email, gen, guest] = reply;
    if (status !== 'ok' || !tid || !uid || !cid || !gen) return null;
    return {
      outcome: 'rotated',
      session: {
        sessionId,
        tenantId: tid,
        userId: uid,
        clientId: cid,
        scope: scope ?? '',
        email: email ?? '',
        ...(guest === '1' || guest === '0' ? { guest: guest === '1' } : {}),
      },
      refreshToken: this.token(sessionId, Number(gen)),
    };
  }

  /** The revoked session and its owner, or null when the token revoked nothing. */
  async revokeByRefreshToken(
    refreshToken: string,
    expected: { tenantId: string; clientId: string },
  ): Promise<{ sessionId: string; userId: string } | null> {
    const parsed = this.parse(refreshToken);
    if (!parsed) return null;
    const owner = await REVOKE_BY_REFRESH.run(
      this.redis,
      [key(parsed.sessionId)],
      [parsed.generation, expected.tenantId, expected.clientId],
    );
    return typeof owner === 'string' ? { sessionId: parsed.sessionId, userId: owner } : null;
  }

  /** Returns whether a live session was revoked. `tombstone` also blocks a later create of this id. */
  async revoke(sessionId: string, opts: { tombstone?: boolean } = {}): Promise<boolean> {
    const existed = await REVOKE.run(this.redis, [key(sessionId)], [opts.tombstone ? '1' : '0']);
    return existed === 1;
  }

  /** Marks a live session of this user and client as being upgraded; false when it is not live. */
  async markUpgrade(sessionId: string, owner: { userId: string; clientId: string }): Promise<boolean> {
    return (await MARK_UPGRADE.run(this.redis, [key(sessionId)], [owner.userId, owner.clientId])) === 1;
  }

  /** Takes back this upgrade's mark after it was refused without committing. */
  async unmarkUpgrade(sessionId: string): Promise<void> {
    await UNMARK_UPGRADE.run(this.redis, [key(sessionId)], []);
  }

  private token(sessionId: string, generation: number): string {
    return `${sessionId}.${generation}.${this.macs.mac(REFRESH_TOKEN_DOMAIN, `${sessionId}.${generation}`)}`;
  }

  /** A genuine token's session and generation; null for anything this service did not issue. */
  private parse(token: string): { sessionId: string; generation: number } | null {
    const m = /^(ses_[A-Za-z0-9_-]{16,64})\.(0|[1-9]\d{0,8})\.[A-Za-z0-9_-]{43}$/.exec(token);
    if (!m?.[1] || !m[2]) return null;
    const generation = Number(m[2]);
    // Contract 12: a token MACed under an older PRIVACY_KEY of the list stays genuine, so a key
    // rotation signs nobody out; every candidate is compared so timing does not tell which key.
    const mac = token.slice(token.lastIndexOf('.') + 1);
    const macs = this.macs.macs(REFRESH_TOKEN_DOMAIN, `${m[1]}.${generation}`);
    const genuine = macs.reduce((found, candidate) => safeEqual(mac, candidate) || found, false);
    return genuine ? { sessionId: m[1], generation } : null;
  }
}

const key = (sid: string): string => `s:{${sid}}`;
