import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When a session was revoked by a change committed in PostgreSQL. A guest upgrade sets it on the
 * replaced session in the same transaction as the credential move, so the refresh grant can refuse
 * that session for good even when the revocation in Redis after the commit failed (spec 4.3 rule 4).
 */
export class SessionRevokedAt1764000004100 implements MigrationInterface {
  name = 'SessionRevokedAt1764000004100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions ADD COLUMN revoked_at timestamptz`);
    await q.query(
      `ALTER TABLE sessions ADD CONSTRAINT sessions_revoked_after_created CHECK (revoked_at >= created_at)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions DROP COLUMN revoked_at`);
  }
}
