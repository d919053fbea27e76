import { Inject, Injectable } from '@nestjs/common';
import { REDIS, type RedisClient } from './redis.module';

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

  async get<T>(key: string): Promise<T | null> {
    const raw = await this.redis.get(key);
    return raw === null ? null : (JSON.parse(raw) as T);
  }

  async consume<T>(key: string): Promise<T | null> {
    const raw = await this.redis.getdel(key);
    return raw === null ? null : (JSON.parse(raw) as T);
  }

  async destroy(key: string): Promise<boolean> {
    return (await this.redis.del(key)) > 0;
  }
}
