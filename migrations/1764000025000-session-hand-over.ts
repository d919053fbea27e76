import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An upgrade's hand-over kept with the replaced session's row (contract 13): which session
 * replaced it, the random salt the replacement's secret is derived with from the guest's, the
 * guest session's generation when the upgrade began, and when the upgrade's answer was sent.
 * Redis cannot share the upgrade's transaction, so should it fail after the commit (the answer is
 * then 503 and nothing was sent) the guest's refresh token still finds its replacement here, and
 * the player keeps a usable token without Redis having noted anything.
 */
export class SessionHandOver1764000025000 implements MigrationInterface {
  name = 'SessionHandOver1764000025000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions ADD COLUMN successor_id text`);
    await q.query(`ALTER TABLE sessions ADD COLUMN successor_salt text`);
    await q.query(`ALTER TABLE sessions ADD COLUMN successor_generation integer`);
    await q.query(`ALTER TABLE sessions ADD COLUMN successor_answered_at timestamptz`);
    // A successor without its salt and generation could be handed to no token at all.
    await q.query(
      `ALTER TABLE sessions ADD CONSTRAINT sessions_hand_over_complete
         CHECK (successor_id IS NULL OR (successor_salt IS NOT NULL AND successor_generation IS NOT NULL))`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions DROP CONSTRAINT sessions_hand_over_complete`);
    await q.query(`ALTER TABLE sessions DROP COLUMN successor_answered_at`);
    await q.query(`ALTER TABLE sessions DROP COLUMN successor_generation`);
    await q.query(`ALTER TABLE sessions DROP COLUMN successor_salt`);
    await q.query(`ALTER TABLE sessions DROP COLUMN successor_id`);
  }
}
