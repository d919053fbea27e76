import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { REDIS } from '../redis/redis.module';
import type { RedisClient } from '../redis/redis-client';
import { RedisScript } from '../redis/redis-script';

/**
 * When Redis's current dataset began, as Redis's own clock read it (ms since 1970): a key that is
 * set once and disappears only with the dataset (a flush, a restart without persistence, a
 * failover to an empty replica). Session recovery rebuilds only sessions whose row was last
 * active before it: a session active since then was live in this dataset, so its absence means
 * it ended (docs/security.md, "Sessions rebuilt after Redis lost them").
 *
 * The key is set when missing at start-up and on every (re)connection, so after a restart or a
 * failover the epoch is that moment rather than the first recovery after it; a flush is noticed
 * by the first recovery that finds the key gone.
 */
const ENSURE = new RedisScript(`
local epoch = redis.call('GET', KEYS[1])
if epoch then return {epoch, 0} end
local t = redis.call('TIME')
epoch = tostring(tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
redis.call('SET', KEYS[1], epoch, 'NX')
return {epoch, 1}`);

export interface Epoch {
  readonly epochMs: number;
  /** This call set it: the dataset was found without one. */
  readonly created: boolean;
}

@Injectable()
export class DatasetEpoch implements OnApplicationBootstrap {
  private readonly logger = new Logger('DatasetEpoch');

  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  onApplicationBootstrap(): void {
    const set = (): void =>
      void this.ensure().then(
        ({ epochMs, created }) => {
          if (created) this.logger.log({ epochMs }, 'redis dataset epoch set');
        },
        () => undefined,
      );
    this.redis.on('ready', set);
    if (this.redis.status === 'ready') set();
  }

  /** The epoch, set to Redis's clock now when the dataset has none. */
  async ensure(): Promise<Epoch> {
    const reply = await ENSURE.run(this.redis, [EPOCH_KEY], []);
    if (!Array.isArray(reply) || reply.length !== 2) throw new Error('unexpected reply to the epoch script');
    const [epoch, created] = reply as [unknown, unknown];
    const epochMs = Number(epoch);
    if (!Number.isSafeInteger(epochMs)) throw new Error('unexpected dataset epoch');
    return { epochMs, created: created === 1 };
  }
}

const EPOCH_KEY = 'epoch';
