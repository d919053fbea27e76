import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Retention and the wider audit trail (contract 12).
 * - `sessions.expires_at`: when a session row stops meaning anything, so `purge` can delete it.
 *   Existing rows get the longest session lifetime (30 days from this migration) as a safe bound;
 *   the default keeps any insert that does not state it on that bound too.
 * - Audit types may have more than one dot (`admin.tenant.create`) and hyphens
 *   (`admin.seed-control-plane`).
 * - Indexes that let each purge batch find its rows without scanning the hot tables.
 */
export class RetentionAndAudit1764000014000 implements MigrationInterface {
  name = 'RetentionAndAudit1764000014000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE sessions ADD COLUMN expires_at timestamptz NOT NULL DEFAULT (now() + interval '30 days')`,
    );
    await q.query(`ALTER TABLE sessions ALTER COLUMN expires_at SET DEFAULT (clock_timestamp() + interval '30 days')`);
    await q.query(`CREATE INDEX sessions_expires_idx ON sessions (expires_at)`);
    await q.query(`CREATE INDEX users_provisional_created_idx ON users (created_at) WHERE kind = 'provisional'`);
    await q.query(`CREATE INDEX audit_events_created_idx ON audit_events (created_at)`);
    await q.query(`ALTER TABLE audit_events DROP CONSTRAINT audit_events_type_check`);
    await q.query(
      `ALTER TABLE audit_events ADD CONSTRAINT audit_events_type_check CHECK (type ~ '^[a-z_]+(\\.[a-z_-]+)+$')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE audit_events DROP CONSTRAINT audit_events_type_check`);
    await q.query(
      `ALTER TABLE audit_events ADD CONSTRAINT audit_events_type_check CHECK (type ~ '^[a-z_]+\\.[a-z_]+$')`,
    );
    await q.query(`DROP INDEX audit_events_created_idx`);
    await q.query(`DROP INDEX users_provisional_created_idx`);
    await q.query(`DROP INDEX sessions_expires_idx`);
    await q.query(`ALTER TABLE sessions DROP COLUMN expires_at`);
  }
}
