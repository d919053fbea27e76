import type { Cluster, Redis } from 'ioredis';

/** A single server or a Redis Cluster: every store speaks to either through the same commands. */
export type RedisClient = Redis | Cluster;
