import { Inject, Injectable } from '@nestjs/common';
import { Pseudonymizer, safeEqual } from '../crypto/digests';
import { newId } from '../crypto/ids';
import { REDIS } from '../redis/redis.module';
import type { RedisClient } from '../redis/redis-client';
import { stringsReply } from '../redis/decode';
import { RedisScript } from '../redis/redis-script';
import { RefreshTokens, type ParsedRefreshToken, type SessionSecret } from './refresh-tokens';
import { UserSessionIndex } from './user-sessions';

/**
 * The authoritative store of live sessions, for the control plane and customer tenants alike.
 *
 * Layout: `s:{sid}`, a hash `tid uid cid scope email gen sh [rat] [guest] [upg] [revoked]`.
 *
 * A refresh token is `<sid>.<gen>.<secret>.<mac>` (refresh-tokens.ts): the session's generation
 * when it was issued, the session's random secret, and an HMAC of all three under the privacy
 * key. Redis keeps only `sh`, a digest of the secret, so neither configuration plus public ids
 * (the session id is in every access token) nor a copy of Redis makes a token (contract 13).
 * Every rotation raises `gen` by one. A genuine token of an earlier generation is a replay and
 * revokes the whole session (spec 2.2), with one exception for customer sessions (contract 13):
 * the token rotated last, presented again within the reuse interval (`rat` is when it was
 * rotated) while its successor is unused (`gen` is still one ahead of it), answers that same
 * successor. Two tabs, or a retry after a lost answer, then keep the session. A genuine token one
 * generation ahead of `gen` can only come from a rotation Redis lost (a restart, a failover): it
 * is taken as current, so losing a second of writes signs nobody out.
 *
 * Customer sessions slide: a rotation moves the key's expiry to the end the caller computed (the
 * session row's new `expires_at`), so PostgreSQL and Redis agree on when a session ends.
 *
 * `upg` marks a guest session whose upgrade has begun (spec 4.3 rule 4), counting the upgrades
 * under way: should the revocation after the committed move fail, the refresh grant sees the mark
 * and asks PostgreSQL whether the session was superseded before it rotates anything. The upgrade's
 * hand-over (which session replaced it, for a lost answer) is kept with the rows, not here, so a
 * Redis that fails after the upgrade's commit costs the player nothing (`successor`).
 *
 * Every session is also listed in its user's index (user-sessions.ts), so deactivating a user
 * revokes all of its sessions at once (contract 12).
 *
 * A customer session Redis lost (a flush, a restart without persistence, a failover to an empty
 * replica) can be rebuilt from its PostgreSQL row: ROTATE answers `absent` when nothing at all is
 * stored under the id, and only then is the caller's `recover` asked (session-recovery.service.ts),
 * so a refresh of a session Redis holds costs nothing more.
 */
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

/**
 * A genuine token of the newest format whose session Redis holds nothing of, presented to the
 * realm and client its row names: what session recovery is asked to judge. `userId` and
 * `expiresAtMs` are what the row's slide answered for this very refresh.
 */
export interface LostSession extends SessionBinding {
  readonly sessionId: string;
  readonly generation: number;
  readonly secretDigest: string;
  readonly userId: string;
  readonly expiresAtMs: number;
}

/** A customer session as its row rebuilds it: at the presented generation, with its secret's digest. */
export interface RebuiltSession extends Omit<SessionView, 'email' | 'guest'> {
  readonly guest: boolean;
  readonly generation: number;
  readonly secretDigest: string;
  /** A replacement rebuilt for its hand-over: the secret it had before, whose token is then a replay. */
  readonly formerSecretDigest?: string;
}

export interface RotateOptions {
  /** Asked only for a session marked by an upgrade: whether that upgrade committed and replaced it. */
  readonly superseded?: (sessionId: string) => Promise<boolean>;
  /** Contract 13: milliseconds in which the token rotated last answers its successor again; 0 or unset: never. */
  readonly reuseIntervalMs?: number;
  /**
   * Contract 13: a sliding session's new end, asked before anything rotates (so a failure leaves
   * the token as it was), for the realm and client the token is presented to, and the generation
   * presented (0 for the format before generations).
   */
  readonly slide?: (sessionId: string, expected: SessionBinding, generation: number) => Promise<Slide>;
  /**
   * Asked only when Redis holds nothing under the token's session id, after the slide found the
   * row live: may rebuild the live session (`rebuild`), after which the rotation runs as usual.
   */
  readonly recover?: (lost: LostSession) => Promise<void>;
  /**
   * Asked when the token's row says its session ended: the upgrade that replaced it, when its
   * hand-over is still open (contract 13). Null otherwise, and always when the reuse rule is off.
   */
  readonly handOver?: (sessionId: string, expected: SessionBinding) => Promise<HandOver | null>;
  /**
   * Asked when the replacement a hand-over names is not in Redis (the upgrade's activation failed,
   * or Redis lost it): may rebuild it, unused, with the secret the guest's token derives
   * (`rebuild`), after which the take-over runs again.
   */
  readonly recoverSuccessor?: (lost: LostSuccessor) => Promise<void>;
  /**
   * Told when an upgrade's replacement took over the guest's token (contract 13) and now keeps the
   * secret derived from it: the session's row must keep that secret's digest, or the session could
   * not be rebuilt should Redis lose it. Asked on every such answer (the digest is the same for every
   * retry); a failure fails the refresh, which the same token may retry.
   */
  readonly tookOver?: (sessionId: string, secretDigest: string) => Promise<void>;
}

export type RebuildOutcome = 'rebuilt' | 'present' | 'rebuilt_before' | 'deactivated';

/**
 * An upgrade's hand-over as the replaced session's row keeps it: the replacement, the salt its
 * secret is derived with, the guest session's last generation (its token or the next is handed
 * over), and the digest of the guest session's secret (which the token presented must prove).
 */
export interface HandOver {
  readonly successorId: string;
  readonly salt: string;
  readonly generation: number;
  readonly secretDigest: string;
}

/** A replacement that a guest's token is handed to but that Redis holds nothing of. */
export interface LostSuccessor extends SessionBinding {
  readonly sessionId: string;
  readonly replacedId: string;
  /** The digest of the secret derived from the guest's token, which the replacement will keep. */
  readonly secretDigest: string;
}

/** Inside the store: ROTATE found nothing under the id. */
type Absent = { readonly outcome: 'absent' };

export interface SessionBinding {
  readonly tenantId: string;
  readonly clientId: string;
}

/**
 * A slide's outcome: the session's new end; `ended` when the row of this realm and client says
 * the session is over (revoked, idle or past its absolute lifetime); `unknown` when this realm and
 * client have no such session, so nothing may follow from the token.
 */
export type Slide = { readonly userId: string; readonly expiresAtMs: number } | 'ended' | 'unknown';

const CREATE = new RedisScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'tid', ARGV[1], 'uid', ARGV[2], 'cid', ARGV[3], 'scope', ARGV[4], 'email', ARGV[5], 'gen', '0', 'sh', ARGV[8])
if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'guest', ARGV[7]) end
redis.call('EXPIRE', KEYS[1], ARGV[6])
return 1`);

// Session recovery (docs/security.md): a customer session Redis lost, rebuilt from its row at the
// generation of the token presented, only while nothing is stored under its id (a session another
// refresh rebuilt first, a revocation's tombstone), so of concurrent refreshes after a loss exactly
// one rebuilds and the others rotate or reuse (ROTATE).
// A mark left for the session's life allows one rebuild per dataset: a rebuilt session gone again
// ended (its tombstone expired), and the token presented last must not bring it back.
// Returns 'rebuilt', 'present' or 'rebuilt_before'.
// ARGV: 1 tid, 2 uid, 3 cid, 4 scope, 5 guest ('1'/'0'), 6 generation, 7 secret digest, 8 end (ms),
// 9 the digest of a secret taken over (TAKE_OVER's `osh`; '' for none).
const REBUILD = new RedisScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 'present' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'rebuilt_before' end
redis.call('HSET', KEYS[1], 'tid', ARGV[1], 'uid', ARGV[2], 'cid', ARGV[3], 'scope', ARGV[4], 'email', '', 'guest', ARGV[5], 'gen', ARGV[6], 'sh', ARGV[7])
if ARGV[9] ~= '' then redis.call('HSET', KEYS[1], 'osh', ARGV[9]) end
redis.call('PEXPIREAT', KEYS[1], ARGV[8])
redis.call('SET', KEYS[2], ARGV[6])
redis.call('PEXPIREAT', KEYS[2], ARGV[8])
return 'rebuilt'`);

// Returns {status, tid, uid, cid, scope, email, gen, guest}: 'ok' with the generation the answered
// token names. A token of another realm, client or secret is 'invalid' before anything changes;
// 'absent' when Redis holds nothing under the id.
// Compare-and-swap on the generation makes concurrent use of one refresh token yield exactly one
// rotation; the others present the generation before: a reuse (contract 13) while the interval
// lasts, else a replay.
// ARGV: 1 presented gen, 2 tid, 3 cid, 4 '1' once an upgrade mark was checked against PostgreSQL,
// 5 digest of the presented secret ('' for a token of the format before secrets), 6 now (ms),
// 7 reuse interval (ms), 8 new expiry (ms since the epoch; '' keeps the TTL), 9 the digest a
// token without a secret moves to.
const ROTATE = new RedisScript(`
local s = redis.call('HMGET', KEYS[1], 'gen', 'tid', 'uid', 'cid', 'scope', 'email', 'revoked', 'upg', 'guest', 'sh', 'rat', 'osh')
-- Nothing at all under the id (no session, no tombstone): the caller may ask session recovery.
if not s[1] and not s[2] and not s[7] then return {'absent'} end
if not s[1] or s[7] or s[2] ~= ARGV[2] or s[4] ~= ARGV[3] then return {'invalid'} end
if ARGV[5] == '' then
  if s[10] then return {'invalid'} end
elseif s[10] ~= ARGV[5] then
  -- The secret an upgrade's replacement had before the guest's token took it over (TAKE_OVER): one
  -- of the two holders is not the player, so the session ends, as for any replay.
  if s[12] and s[12] == ARGV[5] then
    redis.call('DEL', KEYS[1])
    return {'replayed', s[3]}
  end
  return {'invalid'}
end
local gen = tonumber(s[1])
local presented = tonumber(ARGV[1])
local now = tonumber(ARGV[6])
-- A token one generation ahead was issued by a rotation Redis then lost (a restart within its
-- fsync interval, a failover to a replica behind): its MAC and secret prove it, so it is current.
if presented == gen + 1 and ARGV[5] ~= '' then gen = presented end
local reuse = presented == gen - 1 and ARGV[5] ~= '' and s[11] and tonumber(ARGV[7]) > 0 and now - tonumber(s[11]) <= tonumber(ARGV[7])
if presented == gen or reuse then
  if tonumber(s[8] or '0') > 0 and ARGV[4] ~= '1' then return {'marked'} end
  if ARGV[8] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[8]) end
  if reuse then return {'ok', s[2], s[3], s[4], s[5], s[6], tostring(gen), s[9] or ''} end
  redis.call('HSET', KEYS[1], 'gen', gen + 1, 'rat', ARGV[6])
  if ARGV[5] == '' then redis.call('HSET', KEYS[1], 'sh', ARGV[9]) end
  return {'ok', s[2], s[3], s[4], s[5], s[6], tostring(gen + 1), s[9] or ''}
end
if presented < gen then
  redis.call('DEL', KEYS[1])
  return {'replayed', s[3]}
end
return {'invalid'}`);

// A session stored by the release before generations (`rth` = sha256 of the token's secret, and a
// `:used` list) moves to generation 1 and a secret on its first refresh, so a deploy signs nobody
// out and a guest who never linked a credential keeps the account. Its older tokens are then
// refused as invalid without revoking: that release's bounded history is not carried over.
const ROTATE_LEGACY = new RedisScript(`
local s = redis.call('HMGET', KEYS[1], 'rth', 'tid', 'uid', 'cid', 'scope', 'email', 'revoked', 'gen')
if not s[1] or s[7] or s[8] or s[2] ~= ARGV[2] or s[4] ~= ARGV[3] or s[1] ~= ARGV[1] then return {'invalid'} end
redis.call('HDEL', KEYS[1], 'rth')
redis.call('HSET', KEYS[1], 'gen', 1, 'sh', ARGV[4], 'rat', ARGV[5])
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

// The replacement answers the replaced session's token while its own first token is unused
// (generation 0) and it is of the realm and client the token is presented to: it takes the secret
// derived from that token's, the same for every retry, and keeps the one it had as `osh`, so
// that its own token, should it turn up after all, is a replay (ROTATE). 'absent' when nothing at
// all is stored under its id (its activation failed, or Redis lost it).
// ARGV: 1 the new secret's digest, 2 tid, 3 cid.
const TAKE_OVER = new RedisScript(`
local s = redis.call('HMGET', KEYS[1], 'gen', 'tid', 'uid', 'cid', 'scope', 'email', 'revoked', 'guest', 'sh')
if not s[1] and not s[2] and not s[7] then return {'absent'} end
if not s[1] or s[7] or s[1] ~= '0' or s[2] ~= ARGV[2] or s[4] ~= ARGV[3] then return {'invalid'} end
if s[9] ~= ARGV[1] then redis.call('HSET', KEYS[1], 'sh', ARGV[1], 'osh', s[9]) end
return {'ok', s[2], s[3], s[4], s[5], s[6], '0', s[8] or ''}`);

// RFC 7009 revocation by refresh token: any genuine token of the session's chain (current or
// rotated, or one generation ahead after Redis lost a rotation) proves possession; the realm,
// client and secret must match.
const REVOKE_BY_REFRESH = new RedisScript(`
local s = redis.call('HMGET', KEYS[1], 'gen', 'tid', 'cid', 'uid', 'sh')
if not s[1] or s[2] ~= ARGV[2] or s[3] ~= ARGV[3] or tonumber(ARGV[1]) > tonumber(s[1]) + 1 then return 0 end
if ARGV[4] == '' then
  if s[5] then return 0 end
elseif s[5] ~= ARGV[4] then return 0 end
redis.call('DEL', KEYS[1])
return s[4]`);

// The upgrade's own liveness check (spec 4.3 rules 2 and 4): the session must still be live and
// the guest's, at the moment the upgrade begins, not only when the bearer was checked. Returns the
// session's generation, which the hand-over keeps (a token older than it is never handed over).
const MARK_UPGRADE = new RedisScript(`
local s = redis.call('HMGET', KEYS[1], 'uid', 'cid', 'revoked', 'gen')
if not s[1] or s[3] or s[1] ~= ARGV[1] or s[2] ~= ARGV[2] then return -1 end
redis.call('HINCRBY', KEYS[1], 'upg', 1)
return tonumber(s[4] or '0')`);

// Upgrades of one session may run in parallel (all but one are refused): the mark counts them, so
// a refused one does not take the mark away from one that is committing.
const UNMARK_UPGRADE = new RedisScript(`
if redis.call('HEXISTS', KEYS[1], 'upg') == 0 then return 0 end
if redis.call('HINCRBY', KEYS[1], 'upg', -1) <= 0 then redis.call('HDEL', KEYS[1], 'upg') end
return 1`);

@Injectable()
export class SessionStore {
  private readonly users: UserSessionIndex;
  private readonly tokens: RefreshTokens;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    macs: Pseudonymizer,
  ) {
    this.users = new UserSessionIndex(redis);
    this.tokens = new RefreshTokens(macs);
  }

  newSessionId(): string {
    return newId('ses');
  }

  /**
   * A new session's secret, made before its row so the row can keep the digest (a customer
   * session's live record is rebuilt from it after Redis lost it).
   */
  newSecret(): SessionSecret {
    return this.tokens.newSecret();
  }

  /**
   * Creates the live session and returns its first refresh token; false if the id was revoked
   * first or the user was deactivated meanwhile. The session and its index entry are written in
   * parallel (different hash slots, one round trip of latency). `sessionSecret` is the one its row
   * recorded; without one a fresh secret is made.
   */
  async create(
    session: SessionView,
    ttlSeconds: number,
    sessionSecret: SessionSecret = this.tokens.newSecret(),
  ): Promise<{ created: true; refreshToken: string } | { created: false }> {
    const { secret, digest } = sessionSecret;
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
          digest,
        ],
      ),
      this.users.add(session.userId, session.sessionId, Date.now() + ttlSeconds * 1000),
    ]);
    if (created === 1 && !indexed) await this.revoke(session.sessionId, { tombstone: true });
    return created === 1 && indexed
      ? { created: true, refreshToken: this.tokens.make(session.sessionId, 0, secret) }
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

  /**
   * The live session a bearer token names, when it is the token's own: same tenant, user and
   * client (the bearer checks of both realms); null otherwise.
   */
  async getBound(
    sessionId: string,
    bound: { readonly tenantId: string; readonly userId: string; readonly clientId: string },
  ): Promise<SessionView | null> {
    const session = await this.get(sessionId);
    return session &&
      session.tenantId === bound.tenantId &&
      session.userId === bound.userId &&
      session.clientId === bound.clientId
      ? session
      : null;
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
   * The rotating refresh (spec 2.2), with contract 13's reuse interval and sliding end when the
   * caller gives them. A session an upgrade has marked is checked with `superseded`; a superseded
   * session is revoked and the token refused.
   */
  async rotate(refreshToken: string, expected: SessionBinding, opts: RotateOptions = {}): Promise<RotateResult> {
    const parsed = this.tokens.parse(refreshToken);
    if (!parsed) return { outcome: 'invalid' };
    // The formats before secrets prove nothing by themselves (one has no MAC, the other's MAC any
    // holder of the configuration makes): Redis compares them before anything is written for them.
    if (parsed.format !== 'secret' && !(await this.earlierFormatHolds(parsed, expected))) return { outcome: 'invalid' };
    // Before anything rotates: should the slide fail, the caller's token is still the current one.
    const slid = opts.slide
      ? await opts.slide(parsed.sessionId, expected, parsed.format === 'digest' ? 0 : parsed.generation)
      : undefined;
    if (slid === 'unknown') return { outcome: 'invalid' };
    if (slid === 'ended') {
      // The row says the session ended or was superseded (an upgrade whose own revocation in Redis
      // may have failed): the live session follows it, whatever the token is handed to.
      const [successor] = await Promise.all([
        parsed.format === 'secret' ? this.successor(parsed, expected, opts) : null,
        this.revoke(parsed.sessionId),
      ]);
      return successor ?? { outcome: 'invalid' };
    }
    const expiresAt = slid ? String(slid.expiresAtMs) : '';
    // The index entry keeps pace with the session, or deactivating the user would miss it.
    const touched = slid ? this.users.touch(slid.userId, parsed.sessionId, slid.expiresAtMs) : undefined;
    const [rotated] = await Promise.all([this.rotateParsed(parsed, expected, expiresAt, opts), touched]);
    if (rotated.outcome !== 'absent') return rotated;
    // Only here, off the path of every session Redis holds, is anything more asked.
    if (parsed.format !== 'secret' || !opts.recover || !slid) return { outcome: 'invalid' };
    await opts.recover({
      ...expected,
      sessionId: parsed.sessionId,
      generation: parsed.generation,
      secretDigest: parsed.secretDigest,
      userId: slid.userId,
      expiresAtMs: slid.expiresAtMs,
    });
    const again = await this.rotateParsed(parsed, expected, expiresAt, opts);
    return again.outcome === 'absent' ? { outcome: 'invalid' } : again;
  }

  /**
   * Session recovery: the live session rebuilt from its row, with its index entry (so deactivating
   * the user still reaches it). `present`: something is stored under the id already;
   * `rebuilt_before`: it was rebuilt once in this dataset and has ended
   * since; `deactivated`: the user was deactivated meanwhile, and the rebuilt session is revoked.
   */
  async rebuild(session: RebuiltSession, expiresAtMs: number): Promise<RebuildOutcome> {
    const sid = session.sessionId;
    const [reply, indexed] = await Promise.all([
      REBUILD.run(
        this.redis,
        [key(sid), rebuiltKey(sid)],
        [
          session.tenantId,
          session.userId,
          session.clientId,
          session.scope,
          session.guest ? '1' : '0',
          session.generation,
          session.secretDigest,
          expiresAtMs,
          session.formerSecretDigest ?? '',
        ],
      ),
      this.users.add(session.userId, sid, expiresAtMs),
    ]);
    const outcome = reply === 'rebuilt' || reply === 'rebuilt_before' ? reply : 'present';
    if (outcome !== 'rebuilt' || indexed) return outcome;
    await this.revoke(sid, { tombstone: true });
    return 'deactivated';
  }

  /**
   * Whether a token of a format before secrets still names its session as Redis keeps it (the
   * same checks ROTATE and ROTATE_LEGACY make, read only).
   */
  private async earlierFormatHolds(parsed: ParsedRefreshToken, expected: SessionBinding): Promise<boolean> {
    const [tid, cid, sh, rth, gen, revoked] = await this.redis.hmget(
      key(parsed.sessionId),
      ...['tid', 'cid', 'sh', 'rth', 'gen', 'revoked'],
    );
    if (tid !== expected.tenantId || cid !== expected.clientId || revoked) return false;
    return parsed.format === 'digest' ? rth === parsed.secretDigest && gen === null : sh === null && rth === null;
  }

  private async rotateParsed(
    parsed: ParsedRefreshToken,
    expected: { tenantId: string; clientId: string },
    expiresAt: string,
    opts: RotateOptions,
  ): Promise<RotateResult | Absent> {
    const sessionId = parsed.sessionId;
    // A token of an earlier format moves to a secret of the session's own.
    const moved = parsed.format === 'secret' ? null : this.tokens.newSecret();
    const secret = moved?.secret ?? (parsed.format === 'secret' ? parsed.secret : '');
    if (parsed.format === 'digest') {
      const reply = stringsReply(
        await ROTATE_LEGACY.run(
          this.redis,
          [key(sessionId), `${key(sessionId)}:used`],
          [parsed.secretDigest, expected.tenantId, expected.clientId, moved?.digest ?? '', Date.now()],
        ),
      );
      return this.rotated(sessionId, reply, secret) ?? { outcome: 'invalid' };
    }
    const run = async (checked: boolean): Promise<string[]> =>
      stringsReply(
        await ROTATE.run(
          this.redis,
          [key(sessionId)],
          [
            parsed.generation,
            expected.tenantId,
            expected.clientId,
            checked ? '1' : '0',
            parsed.format === 'secret' ? parsed.secretDigest : '',
            Date.now(),
            opts.reuseIntervalMs ?? 0,
            expiresAt,
            moved?.digest ?? '',
          ],
        ),
      );
    let reply = await run(false);
    if (reply[0] === 'absent') return { outcome: 'absent' };
    if (reply[0] === 'marked') {
      if (!opts.superseded || (await opts.superseded(sessionId))) {
        await this.revoke(sessionId);
        return { outcome: 'invalid' };
      }
      reply = await run(true);
    }
    const rotated = this.rotated(sessionId, reply, secret);
    if (rotated) return rotated;
    // The replayed session's owner names the subject of the `refresh.replayed` audit row.
    const owner = reply[1];
    return reply[0] === 'replayed' && owner
      ? { outcome: 'replayed', sessionId, userId: owner }
      : { outcome: 'invalid' };
  }

  /**
   * Contract 13 for an upgrade whose answer was lost or never sent (a 503 after its commit): the
   * replaced session's last token (or the one after it), while the replacement's first token is
   * unused, answers the replacement session with a token of the secret derived from its own, the
   * same for every retry. The hand-over is the rows'
   * (`handOver`); a replacement Redis holds nothing of is rebuilt first (`recoverSuccessor`).
   */
  private async successor(
    parsed: Extract<ParsedRefreshToken, { format: 'secret' }>,
    expected: SessionBinding,
    opts: RotateOptions,
  ): Promise<RotateResult | null> {
    const handOver = await opts.handOver?.(parsed.sessionId, expected);
    // The last token issued, or the one after it (a rotation whose answer or Redis write was lost).
    if (!handOver || (parsed.generation !== handOver.generation && parsed.generation !== handOver.generation + 1))
      return null;
    if (!safeEqual(handOver.secretDigest, parsed.secretDigest)) return null;
    const by = handOver.successorId;
    const { secret, digest } = this.tokens.successorSecret(parsed.secret, handOver.salt, by);
    const takeOver = async (): Promise<string[]> =>
      stringsReply(await TAKE_OVER.run(this.redis, [key(by)], [digest, expected.tenantId, expected.clientId]));
    let reply = await takeOver();
    if (reply[0] === 'absent' && opts.recoverSuccessor) {
      await opts.recoverSuccessor({ ...expected, sessionId: by, replacedId: parsed.sessionId, secretDigest: digest });
      reply = await takeOver();
    }
    const rotated = this.rotated(by, reply, secret);
    if (rotated) await opts.tookOver?.(by, digest);
    return rotated;
  }

  /** The rotated session from a rotation script's `ok` reply; null for any other reply. */
  private rotated(sessionId: string, reply: string[], secret: string): RotateResult | null {
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
      refreshToken: this.tokens.make(sessionId, Number(gen), secret),
    };
  }

  /** The revoked session and its owner, or null when the token revoked nothing. */
  async revokeByRefreshToken(
    refreshToken: string,
    expected: { tenantId: string; clientId: string },
  ): Promise<{ sessionId: string; userId: string } | null> {
    const parsed = this.tokens.parse(refreshToken);
    if (!parsed || parsed.format === 'digest') return null;
    const owner = await REVOKE_BY_REFRESH.run(
      this.redis,
      [key(parsed.sessionId)],
      [parsed.generation, expected.tenantId, expected.clientId, parsed.format === 'secret' ? parsed.secretDigest : ''],
    );
    return typeof owner === 'string' ? { sessionId: parsed.sessionId, userId: owner } : null;
  }

  /** Returns whether a live session was revoked. `tombstone` also blocks a later create of this id. */
  async revoke(sessionId: string, opts: { tombstone?: boolean } = {}): Promise<boolean> {
    const existed = await REVOKE.run(this.redis, [key(sessionId)], [opts.tombstone ? '1' : '0']);
    return existed === 1;
  }

  /**
   * Marks a live session of this user and client as being upgraded and returns its generation;
   * null when it is not live.
   */
  async markUpgrade(sessionId: string, owner: { userId: string; clientId: string }): Promise<number | null> {
    const generation = await MARK_UPGRADE.run(this.redis, [key(sessionId)], [owner.userId, owner.clientId]);
    return typeof generation === 'number' && generation >= 0 ? generation : null;
  }

  /** Takes back this upgrade's mark after it was refused without committing. */
  async unmarkUpgrade(sessionId: string): Promise<void> {
    await UNMARK_UPGRADE.run(this.redis, [key(sessionId)], []);
  }
}

const key = (sid: string): string => `s:{${sid}}`;
const rebuiltKey = (sid: string): string => `s:{${sid}}:rb`;
