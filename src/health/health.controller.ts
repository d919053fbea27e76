import { Controller, Get, HttpCode, Inject, Res } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Response } from 'express';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/config';
import { errorBody } from '../errors/app-error';
import { UsePolicy } from '../http/policy.decorator';
import { REDIS, type RedisClient } from '../platform/redis/redis.module';

type Check = 'up' | 'down';

/** Liveness and readiness, on every host (contract section 1). */
@Controller()
@UsePolicy('public')
export class HealthController {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('healthz')
  @HttpCode(200)
  healthz(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('readyz')
  async readyz(@Res() res: Response): Promise<void> {
    const [postgres, redis] = await Promise.all([
      this.probe(() => this.db.query('SELECT 1')),
      this.probe(() => this.redis.ping()),
    ]);
    const checks = { postgres, redis };
    if (postgres === 'up' && redis === 'up') {
      res.status(200).json({ status: 'ready', checks });
    } else {
      res.status(503).json({ ...errorBody('temporarily_unavailable', 'A dependency is unavailable.'), checks });
    }
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
