import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sliding customer sessions (contract 13). Every refresh moves `expires_at` forward, so the row and
 * the live session in Redis agree on when a session ends; `last_used_at` records that refresh, for
 * operators and the console. Rows of sessions that never refreshed keep it null. `expires_at` no
 * longer defaults to 30 days: every insert states the session's own lifetime.
 */
export class SlidingSessions1764000015000 implements MigrationInterface {
  name = 'SlidingSessions1764000015000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions ADD COLUMN last_used_at timestamptz`);
    await q.query(`ALTER TABLE sessions ALTER COLUMN expires_at DROP DEFAULT`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions ALTER COLUMN expires_at SET DEFAULT (clock_timestamp() + interval '30 days')`);
    await q.query(`ALTER TABLE sessions DROP COLUMN last_used_at`);
  }
}
