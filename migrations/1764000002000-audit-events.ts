import { MigrationInterface, QueryRunner } from 'typeorm';

/** Append-only audit trail (contract section 7); `guest.upgraded` is the first event type. */
export class AuditEvents1764000002000 implements MigrationInterface {
  name = 'AuditEvents1764000002000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE audit_events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        type text NOT NULL CHECK (type ~ '^[a-z_]+\\.[a-z_]+$'),
        tenant_id text NOT NULL REFERENCES tenants(id),
        subject text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        data jsonb NOT NULL DEFAULT '{}'
      )`);
    await q.query(`CREATE INDEX audit_events_tenant_type_idx ON audit_events (tenant_id, type, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE audit_events`);
  }
}
