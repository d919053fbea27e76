import { DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Params as LoggerParams } from 'nestjs-pino';
import { APP_CONFIG, type AppConfig } from './config/config';
import { ConsoleBffModule } from './console-bff/console-bff.module';
import { StartUpCheck } from './directory/start-up.check';
import { DirectoryModule } from './directory/directory.module';
import { GuestModule } from './guest/guest.module';
import { HealthModule } from './health/health.module';
import { HttpEdgeModule } from './http/http.module';
import { ManagementAuthModule } from './management-auth/management-auth.module';
import { ManagementModule } from './management/management.module';
import { DatabaseModule } from './platform/database/database.module';
import { OpenApiModule } from './openapi/openapi.module';
import { MetricsModule } from './platform/metrics/metrics.module';
import { RedisModule } from './platform/redis/redis.module';

@Module({})
class ConfigHolderModule {}

/**
 * The host: one process mounting every feature module. Configuration is passed in (not read
 * from process.env here) so tests build the same app with their own settings.
 */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, logging: LoggerParams): DynamicModule {
    const configModule: DynamicModule = {
      module: ConfigHolderModule,
      global: true,
      providers: [{ provide: APP_CONFIG, useValue: config }],
      exports: [APP_CONFIG],
    };
    return {
      module: AppModule,
      imports: [
        configModule,
        LoggerModule.forRoot(logging),
        MetricsModule,
        RedisModule,
        DatabaseModule,
        HttpEdgeModule,
        HealthModule,
        DirectoryModule,
        ManagementAuthModule,
        GuestModule,
        ManagementModule,
        ConsoleBffModule,
        OpenApiModule,
      ],
      providers: [StartUpCheck],
    };
  }
}
