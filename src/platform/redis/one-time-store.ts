import { Inject, Injectable } from '@nestjs/common';
import { REDIS } from './redis.module';
import type { RedisClient } from './redis-client';
import { decodeJson, type Decoder } from './decode';
import { RedisScript } from './redis-script';

// Compare-and-delete: a record is removed only by the writer that still owns it.
const DESTROY_IF_EQUAL = new RedisScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`);

/**
 * TTL-aware storage of one-time records (authorization codes, intents, proofs, pending sign-ins).
 * `consume` is an atomic get-and-delete (GETDEL): under concurrent requests exactly one caller
 * receives the record.
 */
@Injectable()
export class OneTimeStore {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  async put(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    await this.redis.set(key, JSON.stringify(value), 'EX', ttlSeconds);
  }

  /** Stores only when no live record has the key; returns whether it stored. */
  async putIfAbsent(key: string, value: unknown, ttlSeconds: number): Promise<boolean> {
    return (await this.redis.set(key, JSON.stringify(value), 'EX', ttlSeconds, 'NX')) === 'OK';
  }

  /** The record, or null when there is none or it is not of the shape `decode` accepts. */
  async get<T>(key: string, decode: Decoder<T>): Promise<T | null> {
    return decodeJson(await this.redis.get(key), decode);
  }

  /** Atomic get-and-delete; a record of the wrong shape is deleted too and reads as absent. */
  async consume<T>(key: string, decode: Decoder<T>): Promise<T | null> {
    return decodeJson(await this.redis.getdel(key), decode);
  }

  async destroy(key: string): Promise<boolean> {
    return (await this.redis.del(key)) > 0;
  }

  /** Deletes the record only while it still holds exactly `value` (as written by `put*`). */
  async destroyIfEqual(key: string, value: unknown): Promise<boolean> {
    return (await DESTROY_IF_EQUAL.run(this.redis, [key], [JSON.stringify(value)])) === 1;
  }
}
