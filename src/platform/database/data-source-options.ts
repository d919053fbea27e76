import { DataSource, type DataSourceOptions } from 'typeorm';
import { AuditEvents1764000002000 } from '../../../migrations/1764000002000-audit-events';
import { ChatPlatformApps1764000003000 } from '../../../migrations/1764000003000-chat-platform-apps';
import { ClientWebOrigins1764000013000 } from '../../../migrations/1764000013000-client-web-origins';
import { ControlPlaneCore1764000000000 } from '../../../migrations/1764000000000-control-plane-core';
import { SessionsMembershipsConsents1764000001000 } from '../../../migrations/1764000001000-sessions-memberships-consents';
import { SessionRevokedAt1764000004100 } from '../../../migrations/1764000004100-session-revoked-at';
import { RetentionAndAudit1764000014000 } from '../../../migrations/1764000014000-retention-and-audit';
import { SlidingSessions1764000015000 } from '../../../migrations/1764000015000-sliding-sessions';
import { ConsoleWriteScope1764000016000 } from '../../../migrations/1764000016000-console-write-scope';
import { IdentityEmailDigest1764000020000 } from '../../../migrations/1764000020000-identity-email-digest';
import { IdentityIssuer1764000021000 } from '../../../migrations/1764000021000-identity-issuer';
import { ErasureRequestsIndex1764000022000 } from '../../../migrations/1764000022000-erasure-requests-index';
import { RecoverableSessions1764000023000 } from '../../../migrations/1764000023000-recoverable-sessions';
import { PendingRevocations1764000024000 } from '../../../migrations/1764000024000-pending-revocations';
import { SessionHandOver1764000025000 } from '../../../migrations/1764000025000-session-hand-over';
import { IdentityProviders1764000017000 } from '../../../migrations/1764000017000-identity-providers';
import { ConsoleStatsAndAuditPaging1764000018000 } from '../../../migrations/1764000018000-console-stats-and-audit-paging';
import { DailyStatsShards1764000019000 } from '../../../migrations/1764000019000-daily-stats-shards';
import type { DatabaseSettings } from '../../config/config';
import { AuditEventEntity } from './entities/audit-event.entity';
import { ChatPlatformAppEntity } from './entities/chat-platform-app.entity';
import { ClientEntity } from './entities/client.entity';
import { ConsentEntity } from './entities/consent.entity';
import { IdentityEntity } from './entities/identity.entity';
import { IdentityProviderEntity } from './entities/identity-provider.entity';
import { MembershipEntity } from './entities/membership.entity';
import { SessionRecordEntity } from './entities/session-record.entity';
import { TenantEntity } from './entities/tenant.entity';
import { UserEntity } from './entities/user.entity';

export const ENTITIES = [
  TenantEntity,
  ClientEntity,
  UserEntity,
  IdentityEntity,
  SessionRecordEntity,
  MembershipEntity,
  ConsentEntity,
  AuditEventEntity,
  ChatPlatformAppEntity,
  IdentityProviderEntity,
];

/** Listed explicitly, in order, so the compiled service and the tests run the same migrations. */
export const MIGRATIONS = [
  ControlPlaneCore1764000000000,
  SessionsMembershipsConsents1764000001000,
  AuditEvents1764000002000,
  ChatPlatformApps1764000003000,
  SessionRevokedAt1764000004100,
  ClientWebOrigins1764000013000,
  RetentionAndAudit1764000014000,
  SlidingSessions1764000015000,
  ConsoleWriteScope1764000016000,
  IdentityProviders1764000017000,
  ConsoleStatsAndAuditPaging1764000018000,
  DailyStatsShards1764000019000,
  IdentityEmailDigest1764000020000,
  IdentityIssuer1764000021000,
  ErasureRequestsIndex1764000022000,
  RecoverableSessions1764000023000,
  PendingRevocations1764000024000,
  SessionHandOver1764000025000,
];

/**
 * Every query is bounded in time (statement and connect timeouts), so a stalled PostgreSQL
 * turns into a 503 within a known time instead of a hung request.
 */
export function dataSourceOptions(config: DatabaseSettings): DataSourceOptions {
  const t = config.dependencyTimeoutMs;
  return {
    type: 'postgres',
    url: config.databaseUrl,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: {
      max: 20,
      connectionTimeoutMillis: t,
      query_timeout: t * 2,
      statement_timeout: t * 2,
      idle_in_transaction_session_timeout: t * 5,
      application_name: 'svc-auth',
    },
  };
}

/**
 * The first connection, with a failure that names its variable: pg's own error (`connect
 * ECONNREFUSED 127.0.0.1:5432`, `password authentication failed for user "svc"`, `database "auth"
 * does not exist`) says what went wrong but not which setting to look at. The service and the admin
 * CLI connect through it.
 */
export async function connectedDataSource(options?: DataSourceOptions): Promise<DataSource> {
  if (!options) throw new Error('DATABASE_URL: no data source options');
  try {
    return await new DataSource(options).initialize();
  } catch (err) {
    // Not `instanceof Error`: node's socket errors come from another realm when the CLI runs in a sandbox (jest).
    const message = (err as { message?: unknown } | null)?.message;
    const reason = typeof message === 'string' ? message : String(err);
    throw new Error(`DATABASE_URL: PostgreSQL cannot be reached or refused the connection (${reason})`);
  }
}
