import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { openWithAny, seal } from '../platform/crypto/aead';
import { sha256 } from '../platform/crypto/digests';
import { newSecret } from '../platform/crypto/ids';
import { decodeJson, isString, objectDecoder } from '../platform/redis/decode';
import { REDIS } from '../platform/redis/redis.module';
import type { RedisClient } from '../platform/redis/redis-client';
import { PENDING_SIGN_IN_TTL_SECONDS } from './console-cookies';

/** What the BFF must remember between start and callback (spec 2.3). */
export interface PendingSignIn {
  readonly state: string;
  readonly codeVerifier: string;
}

const decodePendingSignIn = objectDecoder<PendingSignIn>({ state: isString, codeVerifier: isString });

/** Key name from the flow cookie's digest: Redis never holds the cookie value itself. */
const keyName = (cookie: string): string => `cp:{${sha256(cookie)}}`;
/** Associated data binds the ciphertext to its purpose and key name: a moved record fails to open. */
const aad = (name: string): string => `console-pending:${name}`;

/**
 * Pending console sign-ins: state and PKCE verifier sealed with AES-256-GCM under
 * CONSOLE_SESSION_KEY, keyed by the flow cookie, consumed once (GETDEL) at the callback.
 */
@Injectable()
export class PendingSignInsStore {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Stores the record and returns the flow cookie value that alone can claim it. */
  async create(pending: PendingSignIn): Promise<string> {
    const cookie = newSecret();
    const name = keyName(cookie);
    await this.redis.set(
      name,
      seal(this.config.consoleSessionKey, JSON.stringify(pending), aad(name)),
      'EX',
      PENDING_SIGN_IN_TTL_SECONDS,
      'NX',
    );
    return cookie;
  }

  /** The record, once: a second call, a tampered record or an unknown cookie gives null. */
  async consume(cookie: string): Promise<PendingSignIn | null> {
    const name = keyName(cookie);
    const sealed = await this.redis.getdel(name);
    if (sealed === null) return null;
    const plain = openWithAny(this.config.consoleSessionKeys, sealed, aad(name));
    return decodeJson(plain, decodePendingSignIn);
  }
}
