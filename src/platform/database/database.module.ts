import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { connectedDataSource, dataSourceOptions, ENTITIES } from './data-source-options';

@Module({
  imports: [
    TypeOrmModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({ ...dataSourceOptions(config), retryAttempts: 2, retryDelay: 500 }),
      dataSourceFactory: connectedDataSource,
    }),
    TypeOrmModule.forFeature(ENTITIES),
  ],
  exports: [TypeOrmModule],
})
export class DatabaseModule {}
