import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a customer session's row needs so the live session can be rebuilt after Redis lost it
 * (docs/operations.md, "What a Redis flush does"): the digest of the session's secret (the refresh
 * token proves the secret, so only its holder can ask), the scope and guest flag the live session
 * carried, the newest generation ever presented (an older token, rotated away and possibly stolen,
 * cannot rebuild), when that generation was last presented, and the session's activity before it
 * was first presented (the refresh that finds the session gone has already slid `last_used_at`,
 * and neither it nor a concurrent retry of the same token may hide when the session was last
 * active; a presentation of an older token is not activity either), and when it was last
 * rebuilt (one `session.recovered` audit row per rebuild, however many refreshes race to it). Rows
 * written before this migration keep a null digest and are never rebuilt.
 */
export class RecoverableSessions1764000023000 implements MigrationInterface {
  name = 'RecoverableSessions1764000023000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions ADD COLUMN secret_digest text`);
    await q.query(`ALTER TABLE sessions ADD COLUMN scope text`);
    await q.query(`ALTER TABLE sessions ADD COLUMN guest boolean`);
    await q.query(`ALTER TABLE sessions ADD COLUMN presented_generation integer NOT NULL DEFAULT 0`);
    await q.query(`ALTER TABLE sessions ADD COLUMN generation_used_at timestamptz`);
    await q.query(`ALTER TABLE sessions ADD COLUMN prior_activity_at timestamptz`);
    await q.query(`ALTER TABLE sessions ADD COLUMN recovered_at timestamptz`);
    // A digest without what the live session carries would rebuild a session of unknown scope.
    await q.query(
      `ALTER TABLE sessions ADD CONSTRAINT sessions_recoverable_complete
         CHECK (secret_digest IS NULL OR (scope IS NOT NULL AND guest IS NOT NULL))`,
    );
    await q.query(
      `ALTER TABLE sessions ADD CONSTRAINT sessions_presented_generation_nonnegative CHECK (presented_generation >= 0)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions DROP CONSTRAINT sessions_presented_generation_nonnegative`);
    await q.query(`ALTER TABLE sessions DROP CONSTRAINT sessions_recoverable_complete`);
    await q.query(`ALTER TABLE sessions DROP COLUMN recovered_at`);
    await q.query(`ALTER TABLE sessions DROP COLUMN prior_activity_at`);
    await q.query(`ALTER TABLE sessions DROP COLUMN generation_used_at`);
    await q.query(`ALTER TABLE sessions DROP COLUMN presented_generation`);
    await q.query(`ALTER TABLE sessions DROP COLUMN guest`);
    await q.query(`ALTER TABLE sessions DROP COLUMN scope`);
    await q.query(`ALTER TABLE sessions DROP COLUMN secret_digest`);
  }
}
