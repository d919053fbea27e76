import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The revocation rows erasures write first (`session.revoked` with `for: user.delete`): `purge`
 * looks them up by user for every expired session row it considers and for the erasures it may
 * have to finish. A partial index keeps both lookups off the rest of the audit trail.
 */
export class ErasureRequestsIndex1764000022000 implements MigrationInterface {
  name = 'ErasureRequestsIndex1764000022000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX audit_events_erasure_requests_idx ON audit_events (subject, created_at)
        WHERE type = 'session.revoked' AND data->>'for' = 'user.delete'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX audit_events_erasure_requests_idx');
  }
}
