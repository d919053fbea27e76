import Redis, { Cluster } from 'ioredis';
import type { TestApp } from './test-app';

export interface RedisFootprint {
  readonly keys: number;
  /** Sum of MEMORY USAGE over every key of the deployment's prefix, in bytes. */
  readonly bytes: number;
}

/**
 * What a deployment holds in Redis: every key under its prefix and the bytes Redis reports for
 * each (MEMORY USAGE, key name and value with their overhead). Works on a single server and on
 * a cluster, asking each master about its own keys.
 */
export async function redisFootprint(t: TestApp): Promise<RedisFootprint> {
  const prefix = t.env.REDIS_KEY_PREFIX ?? '';
  const nodes = t.env.REDIS_CLUSTER_NODES ?? '';
  const client = nodes
    ? new Cluster(nodes.split(',').map((n) => ({ host: n.split(':')[0], port: Number(n.split(':')[1]) })))
    : new Redis(t.env.REDIS_URL ?? '');
  try {
    if (client instanceof Cluster) await new Promise((resolve) => client.once('ready', resolve));
    const servers = client instanceof Cluster ? client.nodes('master') : [client];
    let keys = 0;
    let bytes = 0;
    for (const server of servers) {
      for (const key of await server.keys(`${prefix}*`)) {
        const usage = (await server.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) as number | null;
        keys += 1;
        bytes += usage ?? 0;
      }
    }
    return { keys, bytes };
  } finally {
    client.disconnect();
  }
}
