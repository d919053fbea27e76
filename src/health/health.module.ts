import { Module } from '@nestjs/common';
import { Drain } from '../http/drain';
import { HealthController } from './health.controller';

/** Liveness and readiness: needs only the database connection and Redis, both global, and the drain. */
@Module({ controllers: [HealthController], providers: [Drain] })
export class HealthModule {}
