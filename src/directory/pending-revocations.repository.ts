import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { count, decodeFirst, decodeRows, nullableText, text } from '../platform/database/row-decoders';

/** A revocation Redis has not been seen to carry out yet. */
export interface PendingRevocation {
  readonly id: string;
  readonly userId: string;
  /** The one session revoked; null for a deactivation, which revokes every session of the user. */
  readonly sessionId: string | null;
}

/** What one round of retries did: how many it carried out, and the failure that stopped it. */
export interface RetryRound {
  readonly carriedOut: number;
  /** The round claimed as many rows as it may: more may be waiting. */
  readonly full: boolean;
  readonly failure: unknown;
}

/**
 * Notes the revocation a deactivation owes Redis, inside the deactivation's own transaction, so
 * the note exists exactly when the deactivation does; returns its id for `settle`, or null when the
 * tenant has no such user (nothing was deactivated, so nothing is owed).
 */
export function notePendingRevocation(m: EntityManager, tenantId: string, userId: string): Promise<string | null> {
  return note(m, 'SELECT id, NULL FROM users WHERE id = $1 AND tenant_id = $2', [userId, tenantId]);
}

/**
 * Notes the revocation of one session the same way, in the transaction that marks its row revoked;
 * null when the tenant has no row of the session (then there is nothing to retry either).
 */
export function notePendingSessionRevocation(
  m: EntityManager,
  tenantId: string,
  sessionId: string,
): Promise<string | null> {
  return note(m, 'SELECT user_id, id FROM sessions WHERE id = $1 AND tenant_id = $2', [sessionId, tenantId]);
}

/** One note per row `source` selects (user id, session id or null): its id, or null for none. */
async function note(m: EntityManager, source: string, params: unknown[]): Promise<string | null> {
  return decodeFirst(
    await m.query(`INSERT INTO pending_revocations (user_id, session_id) ${source} RETURNING id::text AS id`, params),
    (row) => text(row, 'id'),
  );
}

/**
 * The outbox of revocations (migration PendingRevocations1764000024000): deactivations and
 * control-plane session revocations note one in their transaction and settle it once Redis has
 * revoked; the running service retries the rest.
 */
@Injectable()
export class PendingRevocationsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** The revocation was carried out: the note goes. */
  async settle(id: string): Promise<void> {
    await this.db.query('DELETE FROM pending_revocations WHERE id = $1', [id]);
  }

  /** The backlog, for the metric. */
  async backlog(): Promise<number> {
    return (
      decodeFirst(await this.db.query('SELECT count(*) AS n FROM pending_revocations'), (row) => count(row, 'n')) ?? 0
    );
  }

  /**
   * Claims up to `limit` notes, oldest first, that no other replica holds (SKIP LOCKED: replicas
   * share the backlog instead of waiting on each other), carries each out and deletes it in the
   * same transaction. The first failure ends the round (with Redis down the rest would fail too,
   * each after a timeout, while the claim holds a transaction open); the notes carried out before
   * it are still deleted, and the failing one and the rest stay for the next round.
   */
  async retry(limit: number, carryOut: (pending: PendingRevocation) => Promise<void>): Promise<RetryRound> {
    return this.db.transaction(async (m) => {
      const claimed = decodeRows(
        await m.query(
          'SELECT id::text AS id, user_id, session_id FROM pending_revocations ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED',
          [limit],
        ),
        (row) => ({ id: text(row, 'id'), userId: text(row, 'user_id'), sessionId: nullableText(row, 'session_id') }),
      );
      let carriedOut = 0;
      for (const pending of claimed) {
        try {
          await carryOut(pending);
        } catch (failure) {
          return { carriedOut, full: false, failure };
        }
        await m.query('DELETE FROM pending_revocations WHERE id = $1', [pending.id]);
        carriedOut += 1;
      }
      return { carriedOut, full: claimed.length === limit, failure: null };
    });
  }
}
