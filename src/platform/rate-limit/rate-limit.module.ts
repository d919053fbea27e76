import { Module } from '@nestjs/common';
import { CryptoModule } from '../crypto/crypto.module';
import { RateLimiter } from './rate-limiter';

@Module({ imports: [CryptoModule], providers: [RateLimiter], exports: [RateLimiter] })
export class RateLimitModule {}
