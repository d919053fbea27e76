import { Module } from '@nestjs/common';
import { RateLimitModule } from '../platform/rate-limit/rate-limit.module';

/**
 * What a module needs for its routes to declare IpBudget: the rate limiter the guard takes
 * tokens from. Lets the console BFF use per-network budgets without reaching into the platform.
 */
@Module({ imports: [RateLimitModule], exports: [RateLimitModule] })
export class IpBudgetModule {}
