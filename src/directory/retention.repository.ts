import { DataSource } from 'typeorm';

export interface PurgeCounts {
  sessions: number;
  provisional_users: number;
  audit_events: number;
}

/**
 * Retention (contract 12). Each statement deletes one batch of rows it has locked with SKIP
 * LOCKED, in its own short transaction: rows another transaction holds (a sign-in, a concurrent
 * purge on another instance) are passed over rather than waited for, so purge never blocks the
 * hot tables and any number of instances may run it at once.
 */
export class RetentionRepository {
  constructor(
    private readonly db: DataSource,
    private readonly batchSize = 1000,
  ) {}

  async purge(auditRetentionDays: number): Promise<PurgeCounts> {
    return {
      sessions: await this.drain(
        `DELETE FROM sessions WHERE id IN (
           SELECT id FROM sessions WHERE expires_at < now() LIMIT $1 FOR UPDATE SKIP LOCKED)`,
        [],
      ),
      // A provisional user exists for every email proof or chat callback; one that never became
      // an account (no session, membership or consent) a day later never will: its proof and
      // any linking intent expired within minutes.
      provisional_users: await this.drain(
        `WITH victims AS (
           SELECT u.id FROM users u
            WHERE u.kind = 'provisional' AND u.created_at < now() - interval '1 day'
              AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.user_id = u.id)
              AND NOT EXISTS (SELECT 1 FROM memberships ms WHERE ms.user_id = u.id)
              AND NOT EXISTS (SELECT 1 FROM consents c WHERE c.user_id = u.id)
            ORDER BY u.created_at LIMIT $1 FOR UPDATE SKIP LOCKED),
         gone AS (DELETE FROM identities WHERE user_id IN (SELECT id FROM victims))
         DELETE FROM users WHERE id IN (SELECT id FROM victims)`,
        [],
      ),
      audit_events: await this.drain(
        `DELETE FROM audit_events WHERE id IN (
           SELECT id FROM audit_events WHERE created_at < now() - make_interval(days => $2)
            LIMIT $1 FOR UPDATE SKIP LOCKED)`,
        [auditRetentionDays],
      ),
    };
  }

  /** Repeats a batch delete until a batch comes back short; returns the rows deleted. */
  private async drain(sql: string, params: unknown[]): Promise<number> {
    let total = 0;
    for (;;) {
      const result = await this.db.query<[unknown[], number]>(sql, [this.batchSize, ...params]);
      const deleted = result[1];
      total += deleted;
      if (deleted < this.batchSize) return total;
    }
  }
}
