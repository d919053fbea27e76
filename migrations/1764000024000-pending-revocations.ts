import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Revocations committed in PostgreSQL that Redis has not carried out yet: Redis cannot share the
 * transaction of a deactivation (every session of the user, `session_id` null) or of a session's
 * revocation (that session), so the row is written in it and deleted once Redis has revoked. The
 * running service retries the rows left behind (a Redis outage at that moment), because the
 * management bearer and refresh read only Redis and would otherwise keep a deactivated developer,
 * or a revoked session, signed in until someone repeated the command. The rows go with their
 * user (an erasure revokes in Redis before it deletes anyway); the index keeps that cascade off a
 * scan of the table.
 */
export class PendingRevocations1764000024000 implements MigrationInterface {
  name = 'PendingRevocations1764000024000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE pending_revocations (
        id bigserial PRIMARY KEY,
        user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        session_id text NULL,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await q.query('CREATE INDEX pending_revocations_user_idx ON pending_revocations (user_id)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX pending_revocations_user_idx');
    await q.query('DROP TABLE pending_revocations');
  }
}
