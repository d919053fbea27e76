import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../../config/config';
import { dataSourceOptions, ENTITIES } from './data-source-options';

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

/**
 * The first connection, with a failure that names its variable: pg's own error (`connect
 * ECONNREFUSED 127.0.0.1:5432`, `password authentication failed for user "svc"`, `database "auth"
 * does not exist`) says what went wrong but not which setting to look at.
 */
async function connectedDataSource(options?: DataSourceOptions): Promise<DataSource> {
  if (!options) throw new Error('DATABASE_URL: no data source options');
  try {
    return await new DataSource(options).initialize();
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`DATABASE_URL: PostgreSQL cannot be reached or refused the connection (${reason})`);
  }
}
