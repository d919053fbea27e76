import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { openWithAny, seal } from '../platform/crypto/aead';
import { sha256 } from '../platform/crypto/digests';
import { newSecret } from '../platform/crypto/ids';
import { decodeJson, isNumber, isString, objectDecoder } from '../platform/redis/decode';
import { REDIS } from '../platform/redis/redis.module';
import type { RedisClient } from '../platform/redis/redis-client';
import { RedisScript } from '../platform/redis/redis-script';

/**
 * A console BFF session (spec 2.2), kept server-side only as AES-GCM ciphertext; only the console
 * BFF reads or writes it. Times are epoch ms.
 */
export interface ConsoleSessionState {
  readonly accessToken: string;
  readonly refreshToken: string;
  readonly sessionId: string;
  readonly accessExpiresAt: number;
  /** When to refresh: shortly before the access token expires. */
  readonly refreshAt: number;
  readonly createdAt: number;
  readonly absoluteExpiresAt: number;
}

const decodeConsoleSession = objectDecoder<ConsoleSessionState>({
  accessToken: isString,
  refreshToken: isString,
  sessionId: isString,
  accessExpiresAt: isNumber,
  refreshAt: isNumber,
  createdAt: isNumber,
  absoluteExpiresAt: isNumber,
});

export interface StoredConsoleSession {
  readonly handle: string;
  readonly record: ConsoleSessionState;
  /** The ciphertext as read: the compare-and-set token of `replace`. */
  readonly sealed: string;
}

/**
 * Layout (cluster-safe: both keys share the `{handle}` hash tag):
 *   cs:{handle}       sealed JSON of ConsoleSessionState; its Redis TTL is the idle clock
 *   cs:{handle}:lock  single-flight refresh lock, a random owner token with a PX expiry
 * handle = sha256(cookie value): the cookie is a bearer secret, so only its digest is stored.
 */
const keyName = (handle: string): string => `cs:{${handle}}`;
const lockName = (handle: string): string => `cs:{${handle}}:lock`;
/** Spec 2.2: the associated data binds the purpose and the session object's name. */
const aad = (name: string): string => `console-session:${name}`;

// Compare-and-set on the exact ciphertext read: a refresh result is written only over the
// record it was computed from, never over a newer one or over a signed-out (deleted) session.
const REPLACE = new RedisScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[3])
return 1`);

const UNLOCK = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`);

export function sessionHandleOf(cookie: string): string {
  return sha256(cookie);
}

/** The only place that touches console session records in Redis. */
@Injectable()
export class ConsoleSessionsStore {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Stores a new session and returns the cookie value, the only way back to it. */
  async create(record: ConsoleSessionState, ttlSeconds: number): Promise<string> {
    const cookie = newSecret();
    const name = keyName(sessionHandleOf(cookie));
    await this.redis.set(name, this.seal(name, record), 'EX', ttlSeconds, 'NX');
    return cookie;
  }

  /** The session, or null when it is unknown, expired, or fails to open (tampered or moved). */
  async read(handle: string): Promise<StoredConsoleSession | null> {
    const name = keyName(handle);
    const sealed = await this.redis.get(name);
    if (sealed === null) return null;
    const plain = openWithAny(this.config.consoleSessionKeys, sealed, aad(name));
    const record = decodeJson(plain, decodeConsoleSession);
    return record ? { handle, record, sealed } : null;
  }

  /** Extends the idle clock on use; false when the record is already gone. */
  async touch(handle: string, ttlSeconds: number): Promise<boolean> {
    return (await this.redis.expire(keyName(handle), ttlSeconds)) === 1;
  }

  async replace(previous: StoredConsoleSession, record: ConsoleSessionState, ttlSeconds: number): Promise<boolean> {
    const name = keyName(previous.handle);
    return (await REPLACE.run(this.redis, [name], [previous.sealed, this.seal(name, record), ttlSeconds])) === 1;
  }

  async destroy(handle: string): Promise<void> {
    await this.redis.del(keyName(handle), lockName(handle));
  }

  /** Takes the refresh lock of one session; across every instance sharing this Redis. */
  async lock(handle: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(lockName(handle), owner, 'PX', ttlMs, 'NX')) === 'OK';
  }

  /** Releases the lock only if this owner still holds it (it may have expired and moved on). */
  async unlock(handle: string, owner: string): Promise<void> {
    await UNLOCK.run(this.redis, [lockName(handle)], [owner]);
  }

  private seal(name: string, record: ConsoleSessionState): string {
    return seal(this.config.consoleSessionKey, JSON.stringify(record), aad(name));
  }
}
