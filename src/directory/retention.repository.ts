import { DataSource } from 'typeorm';
import { affectedRows } from '../platform/database/row-decoders';
import { ERASURE_LOOKBACK_DAYS } from './user-erasure';

export interface PurgeCounts {
  sessions: number;
  provisional_users: number;
  audit_events: number;
  guests: number;
}

export interface RetentionPolicy {
  /** Audit rows older than this many days go (contract 12). */
  readonly auditRetentionDays: number;
  /** Guests without a credential go this many days after their last session ended (contract 13). */
  readonly guestRetentionDays: number;
}

/**
 * Retention (contract 12, 13). Each statement deletes one batch of rows it has locked with SKIP
 * LOCKED, in its own short transaction: rows another transaction holds (a sign-in, a concurrent
 * purge on another instance) are passed over rather than waited for, so purge never blocks the
 * hot tables and any number of instances may run it at once.
 */
export class RetentionRepository {
  constructor(
    private readonly db: DataSource,
    private readonly batchSize = 1000,
  ) {}

  async purge(policy: RetentionPolicy): Promise<PurgeCounts> {
    // Guests first: their session rows are the only record of when they last played, and the
    // sessions purge below keeps them for that reason (contract 13).
    const guests = await this.drain(
      // A guest that never linked a credential has nothing but its sessions. Once every one of them
      // ended (revoked, else expired; sessions slide, so `expires_at` is the last refresh plus the
      // idle lifetime) more than the retention ago, nobody can ever sign in as it again: the guest
      // goes with its session rows, consents and memberships in the same statement. A guest with a
      // live session, or any user with a credential, is never chosen. A guest row another
      // transaction holds (an upgrade locks it) is skipped until the next run.
      `WITH victims AS (
         SELECT u.id FROM users u
          WHERE u.kind = 'guest'
            AND NOT EXISTS (SELECT 1 FROM identities i WHERE i.user_id = u.id)
            AND NOT EXISTS (
              SELECT 1 FROM sessions s
               WHERE s.user_id = u.id
                 AND coalesce(s.revoked_at, s.expires_at) >= now() - make_interval(days => $2))
          ORDER BY u.created_at LIMIT $1 FOR UPDATE OF u SKIP LOCKED),
         gone_sessions AS (DELETE FROM sessions WHERE user_id IN (SELECT id FROM victims)),
         gone_consents AS (DELETE FROM consents WHERE user_id IN (SELECT id FROM victims)),
         gone_memberships AS (DELETE FROM memberships WHERE user_id IN (SELECT id FROM victims))
       DELETE FROM users WHERE id IN (SELECT id FROM victims)`,
      [policy.guestRetentionDays],
    );
    return {
      // Expired rows of guests stay: they tell the guest purge when the guest last played, and go
      // with the guest. Without them a guest would look session-less, and be purged too early.
      // So do those of a user with an erasure on record that purge may still finish: a row made
      // or used after it says the player went on playing, and that erasure is left alone.
      sessions: await this.drain(
        `DELETE FROM sessions WHERE id IN (
           SELECT s.id FROM sessions s
            WHERE s.expires_at < now()
              AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = s.user_id AND u.kind = 'guest')
              AND NOT EXISTS (SELECT 1 FROM audit_events a
                               WHERE a.tenant_id = s.tenant_id AND a.subject = s.user_id
                                 AND a.type = 'session.revoked' AND a.data->>'for' = 'user.delete'
                                 AND a.created_at > now() - make_interval(days => $2))
            LIMIT $1 FOR UPDATE OF s SKIP LOCKED)`,
        [ERASURE_LOOKBACK_DAYS],
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
        [policy.auditRetentionDays],
      ),
      guests,
    };
  }

  /** Repeats a batch delete until a batch comes back short; returns the rows deleted. */
  private async drain(sql: string, params: unknown[]): Promise<number> {
    let total = 0;
    for (;;) {
      const { affected: deleted } = affectedRows(await this.db.query(sql, [this.batchSize, ...params]));
      total += deleted;
      if (deleted < this.batchSize) return total;
    }
  }
}
