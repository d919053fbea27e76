import { Module } from '@nestjs/common';
import { HealthController } from './health.controller';

/** Liveness and readiness: needs only the database connection and Redis, both global. */
@Module({ controllers: [HealthController] })
export class HealthModule {}
