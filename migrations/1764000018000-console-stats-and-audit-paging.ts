import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The console's views of a tenant (contract 15).
 * - `tenant_daily_stats`: per tenant and UTC day, how many guests were created, upgraded and how
 *   many players signed in. Counted where each happens (in the statement or transaction that
 *   writes it), because the rows themselves do not last: unlinked guests are purged after
 *   GUEST_RETENTION_DAYS and erased players leave nothing behind.
 * - The audit trail pages newest first by id within a tenant: an index on (tenant_id, id).
 */
export class ConsoleStatsAndAuditPaging1764000018000 implements MigrationInterface {
  name = 'ConsoleStatsAndAuditPaging1764000018000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tenant_daily_stats (
        tenant_id text NOT NULL REFERENCES tenants(id),
        day date NOT NULL,
        guests_created integer NOT NULL DEFAULT 0 CHECK (guests_created >= 0),
        upgrades integer NOT NULL DEFAULT 0 CHECK (upgrades >= 0),
        sign_ins integer NOT NULL DEFAULT 0 CHECK (sign_ins >= 0),
        PRIMARY KEY (tenant_id, day)
      )`);
    await q.query(`CREATE INDEX audit_events_tenant_id_idx ON audit_events (tenant_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX audit_events_tenant_id_idx`);
    await q.query(`DROP TABLE tenant_daily_stats`);
  }
}
