import type { DataSource } from 'typeorm';
import {
  loadAuditRetentionDays,
  loadConsoleClientSettings,
  loadDatabaseSettings,
  loadGuestRetentionDays,
  loadNodeEnv,
  loadPrivacyKeys,
  loadRedisSettings,
  type ConsoleClientSettings,
} from '../config/config';
import { AuditTrail, type AuditData, type AuditRecord } from '../directory/audit-trail.repository';
import { Pseudonymizer } from '../platform/crypto/digests';
import { SecretBox } from '../platform/crypto/secret-box';
import { connectedDataSource, dataSourceOptions } from '../platform/database/data-source-options';
import { migrationOptions } from '../platform/database/migrator';
import { closeRedis, connectedWithin, createRedis } from '../platform/redis/redis.module';
import type { RedisClient } from '../platform/redis/redis-client';
import { SessionStore } from '../platform/session-store/session-store';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * What a command may use, each loaded on first use from only the variables it needs (contract 12):
 * a PostgreSQL-only command never asks for Redis or a secret it does not touch.
 */
export class CliContext {
  private dataSource: DataSource | null = null;
  private migrationSource: DataSource | null = null;
  private redis: { readonly client: RedisClient; readonly timeoutMs: number } | null = null;

  constructor(private readonly env: Env) {}

  /** The database for `migrate`, without the request path's statement timeout (migrator.ts). */
  async migrationDb(): Promise<DataSource> {
    this.migrationSource ??= await connectedDataSource(
      migrationOptions(dataSourceOptions(loadDatabaseSettings(this.env))),
    );
    return this.migrationSource;
  }

  async db(): Promise<DataSource> {
    if (!this.dataSource) {
      this.dataSource = await connectedDataSource(dataSourceOptions(loadDatabaseSettings(this.env)));
    }
    return this.dataSource;
  }

  pseudonymizer(): Pseudonymizer {
    return new Pseudonymizer(loadPrivacyKeys(this.env));
  }

  /** Loads PRIVACY_KEY on the first seal or open: listing and removing sealed rows need none. */
  secretBox(): SecretBox {
    return new SecretBox(() => loadPrivacyKeys(this.env));
  }

  consoleClient(): ConsoleClientSettings {
    return loadConsoleClientSettings(this.env);
  }

  /** NODE_ENV (default production, as the service): production refuses cleartext client URLs. */
  production(): boolean {
    return loadNodeEnv(this.env) === 'production';
  }

  auditRetentionDays(): number {
    return loadAuditRetentionDays(this.env);
  }

  /** GUEST_RETENTION_DAYS: how long `purge` keeps a credential-less guest whose sessions ended. */
  guestRetentionDays(): number {
    return loadGuestRetentionDays(this.env);
  }

  /** The session store on Redis, once connected (commands fail rather than queue). */
  async sessions(): Promise<SessionStore> {
    if (!this.redis) {
      const settings = loadRedisSettings(this.env);
      const client = createRedis(settings);
      this.redis = { client, timeoutMs: settings.dependencyTimeoutMs };
      if (!(await connectedWithin(client, settings.dependencyTimeoutMs * 5))) throw new Error('Redis is not reachable');
    }
    // The store MACs refresh tokens with PRIVACY_KEY, so session commands read it too.
    return new SessionStore(this.redis.client, this.pseudonymizer());
  }

  async audit(): Promise<AuditTrail> {
    return new AuditTrail(await this.db());
  }

  /** Contract 12: every admin change is audited as `admin.` and the command's words. */
  async auditAdmin(command: string, tenantId: string, subject: string, data: AuditData = {}): Promise<void> {
    await (await this.audit()).record(this.adminRecord(command, tenantId, subject, data));
  }

  /** The row of auditAdmin, for a command that writes it in the transaction of its effect. */
  adminRecord(command: string, tenantId: string, subject: string, data: AuditData = {}): AuditRecord {
    return { type: `admin.${command.replace(/ /g, '.')}`, tenantId, subject, data };
  }

  async close(): Promise<void> {
    await this.dataSource?.destroy();
    await this.migrationSource?.destroy();
    if (this.redis) await closeRedis(this.redis.client, this.redis.timeoutMs);
  }
}
