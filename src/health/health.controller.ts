import { Controller, Inject, Res } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { errorBody } from '../errors/app-error';
import { Drain } from '../http/drain';
import { Route } from '../http/route';
import { RedisEvictionPolicy } from '../platform/redis/redis-eviction-policy';
import { REDIS } from '../platform/redis/redis.module';
import type { RedisClient } from '../platform/redis/redis-client';
import { HEALTH_ROUTES } from './health.routes';

type Check = 'up' | 'down';

/** Liveness and readiness, on every host (contract section 1). */
@Controller()
export class HealthController {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly evictionPolicy: RedisEvictionPolicy,
    private readonly drain: Drain,
  ) {}

  @Route(HEALTH_ROUTES.liveness)
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Route(HEALTH_ROUTES.readiness)
  async readyz(@Res() res: Response): Promise<void> {
    const [postgres, redis] = await Promise.all([
      this.probe(() => this.db.query('SELECT 1')),
      this.probe(() => this.redis.ping()),
    ]);
    // Contract section 10: a Redis that evicts fails open, so it is not ready; one whose policy
    // cannot be read is ready, with a warning the operator must clear by checking it.
    const policy = this.evictionPolicy.state;
    const evicting = policy.verdict === 'evicting';
    const checks = { postgres, redis: evicting ? ('down' as const) : redis };
    const warnings =
      policy.verdict === 'evicting'
        ? [`redis maxmemory-policy is ${policy.policy}; it must be noeviction`]
        : policy.verdict === 'unverified'
          ? ['redis maxmemory-policy could not be read; it must be noeviction']
          : [];
    const extra = warnings.length > 0 ? { warnings } : {};
    // Draining after SIGTERM: the load balancer must stop sending before the process is gone.
    const unready = this.drain.isDraining
      ? 'The service is shutting down.'
      : postgres === 'up' && checks.redis === 'up'
        ? null
        : 'A dependency is unavailable.';
    if (unready === null) res.status(200).json({ status: 'ready', checks, ...extra });
    else res.status(503).json({ ...errorBody('temporarily_unavailable', unready), checks, ...extra });
  }

  private async probe(fn: () => Promise<unknown>): Promise<Check> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), this.config.dependencyTimeoutMs);
    });
    try {
      await Promise.race([fn(), timeout]);
      return 'up';
    } catch {
      return 'down';
    } finally {
      clearTimeout(timer);
    }
  }
}
