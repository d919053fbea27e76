import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, IsNull, Not, Repository } from 'typeorm';
import { SessionRecordEntity } from '../platform/database/entities/session-record.entity';
import { insertAuditRecords, type AuditRecord } from './audit-trail.repository';
import { notePendingSessionRevocation } from './pending-revocations.repository';
import { PreparedStatement } from '../platform/database/prepared-statement';
import { affectedRows, bool, count, decodeFirst, rowsOf, text } from '../platform/database/row-decoders';
import type { HandOver, SessionBinding, Slide } from '../platform/session-store/session-store';

/**
 * A refresh slides its session (slide): on every customer refresh. The same statement notes the
 * generation presented and, when it is a new one, the session's activity before it (the
 * right-hand sides read the row as it was), which session recovery needs without a round trip of
 * its own here. Only a token not older than any presented counts as activity: an older one is a
 * replay, or a stolen token that must not hide when the session was last really used.
 */
const SLIDE = new PreparedStatement(
  'slide-session',
  `UPDATE sessions
      SET expires_at = least(clock_timestamp() + make_interval(secs => $2),
                             coalesce(created_at + make_interval(secs => $3::int), 'infinity')),
          prior_activity_at = CASE WHEN $6::int > presented_generation
                                   THEN coalesce(generation_used_at, created_at) ELSE prior_activity_at END,
          generation_used_at = CASE WHEN $6::int >= presented_generation
                                    THEN clock_timestamp() ELSE generation_used_at END,
          presented_generation = greatest(presented_generation, $6::int),
          last_used_at = clock_timestamp()
    WHERE id = $1 AND tenant_id = $4 AND client_id = $5 AND revoked_at IS NULL AND expires_at > clock_timestamp()
      AND coalesce(created_at + make_interval(secs => $3::int), 'infinity') > clock_timestamp()
    RETURNING user_id, (extract(epoch FROM expires_at) * 1000)::bigint AS expires_ms`,
);

/** A new session's row. */
export interface NewSessionRecord {
  readonly id: string;
  readonly tenantId: string;
  readonly userId: string;
  readonly clientId: string;
  /** A customer session's: what rebuilds its live session should Redis lose it. */
  readonly recoverable?: RecoverableSession;
}

/** What a customer session's row keeps to rebuild its live session (the secret only as a digest). */
export interface RecoverableSession {
  readonly secretDigest: string;
  readonly scope: string;
  readonly guest: boolean;
}

/**
 * A customer session's row as session recovery reads it: of this realm and client, not revoked,
 * not past its end (which the slide caps at the absolute lifetime, so that is covered too), its
 * user active (a deactivated user's sessions are not marked one by one; an erased user has no
 * row), and written since rows keep a secret's digest.
 */
const RECOVERABLE = `
  SELECT s.user_id, s.secret_digest, s.scope, s.guest, s.presented_generation,
         s.generation_used_at IS NULL AS never_refreshed,
         (extract(epoch FROM coalesce(s.prior_activity_at, s.created_at)) * 1000)::bigint AS prior_activity_ms,
         (extract(epoch FROM s.expires_at) * 1000)::bigint AS expires_ms
    FROM sessions s JOIN users u ON u.id = s.user_id AND u.tenant_id = s.tenant_id
   WHERE s.id = $1 AND s.tenant_id = $2 AND s.client_id = $3 AND s.revoked_at IS NULL
     AND s.expires_at > clock_timestamp() AND s.secret_digest IS NOT NULL AND u.status = 'active'`;

/** What rebuilds a customer session Redis lost, and what judges whether it may be (session recovery). */
export interface RecoverableRow {
  readonly userId: string;
  readonly secretDigest: string;
  readonly scope: string;
  readonly guest: boolean;
  /** The newest refresh-token generation ever presented, the current refresh's included. */
  readonly presentedGeneration: number;
  /** The session's activity before that generation was first presented (database clock, ms). */
  readonly priorActivityMs: number;
  /** No refresh token of the session was ever presented. */
  readonly neverRefreshed: boolean;
  /** The session's end (database clock, ms). */
  readonly expiresAtMs: number;
}

/**
 * An upgrade's hand-over (contract 13), as the replaced session's row keeps it: open while the
 * reuse rule is on and the upgrade's answer was never sent (a 503 after the commit: the player
 * holds nothing else) or was sent within the reuse interval (an answer lost on the way), and while
 * the replacement's own row is live, its user active and no token of it presented. A replacement
 * whose end is recorded here and not yet carried out in Redis is refused as its own refresh is; the
 * live session says again, atomically, whether its first token is unused (TAKE_OVER).
 */
const HAND_OVER = `
  SELECT o.successor_id, o.successor_salt, o.successor_generation, o.secret_digest
    FROM sessions o
    JOIN sessions r ON r.id = o.successor_id AND r.tenant_id = o.tenant_id AND r.client_id = o.client_id
    JOIN users u ON u.id = r.user_id AND u.tenant_id = r.tenant_id
   WHERE o.id = $1 AND o.tenant_id = $2 AND o.client_id = $3 AND o.secret_digest IS NOT NULL
     AND $4::int > 0
     AND (o.successor_answered_at IS NULL
          OR o.successor_answered_at > clock_timestamp() - make_interval(secs => $4::int))
     AND r.revoked_at IS NULL AND r.expires_at > clock_timestamp() AND r.generation_used_at IS NULL
     AND u.status = 'active'`;

/** What an upgrade's transaction writes on the replaced session's row. */
export interface Supersession {
  readonly sessionId: string;
  readonly userId: string;
  readonly successorId: string;
  readonly salt: string;
  /** The replaced session's generation in Redis when the upgrade began. */
  readonly generation: number;
}

@Injectable()
export class SessionRecordsRepository {
  constructor(@InjectRepository(SessionRecordEntity) private readonly records: Repository<SessionRecordEntity>) {}

  /**
   * The row lives as long as the session can (its TTL), so `purge` knows when it is history.
   * Plain SQL: this insert sits on every token exchange and sign-in, where TypeORM's insert
   * builder cost more CPU than the statement.
   */
  async record(session: NewSessionRecord, ttlSeconds: number, m: EntityManager = this.records.manager): Promise<void> {
    const r = session.recoverable;
    await m.query(
      `INSERT INTO sessions (id, tenant_id, user_id, client_id, expires_at, secret_digest, scope, guest)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        session.id,
        session.tenantId,
        session.userId,
        session.clientId,
        new Date(Date.now() + ttlSeconds * 1000),
        r?.secretDigest ?? null,
        r?.scope ?? null,
        r?.guest ?? null,
      ],
    );
  }

  /**
   * Marks the user's session revoked inside the upgrade's transaction, locking the row, and keeps
   * the hand-over to its replacement; false when it is unknown, another user's, or already revoked.
   * The hand-over's generation is the newer of Redis's when the upgrade began and the newest the
   * row saw presented until now (refreshes while the upgrade ran, or a rotation Redis lost): the
   * last token issued is that one or the one after it, and any older one was rotated away.
   */
  async supersedeWithin(m: EntityManager, s: Supersession): Promise<boolean> {
    const { affected } = affectedRows(
      await m.query(
        `UPDATE sessions
            SET revoked_at = clock_timestamp(), successor_id = $3, successor_salt = $4,
                successor_generation = greatest($5::int, presented_generation)
          WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL`,
        [s.sessionId, s.userId, s.successorId, s.salt, s.generation],
      ),
    );
    return affected === 1;
  }

  /** The upgrade's answer is on its way: from now on its hand-over lasts the reuse interval. */
  async successorAnswered(sessionId: string): Promise<void> {
    await this.records.manager.query(`UPDATE sessions SET successor_answered_at = clock_timestamp() WHERE id = $1`, [
      sessionId,
    ]);
  }

  /** The open hand-over of a replaced session of this realm and client (HAND_OVER), or null. */
  async handOver(sessionId: string, binding: SessionBinding, reuseIntervalSeconds: number): Promise<HandOver | null> {
    return decodeFirst(
      await this.records.manager.query(HAND_OVER, [
        sessionId,
        binding.tenantId,
        binding.clientId,
        reuseIntervalSeconds,
      ]),
      (row) => ({
        successorId: text(row, 'successor_id'),
        salt: text(row, 'successor_salt'),
        generation: count(row, 'successor_generation'),
        secretDigest: text(row, 'secret_digest'),
      }),
    );
  }

  /**
   * Records a revocation before it is carried out in Redis (issue 22, point 6), which cannot share
   * the transaction: the session's row is marked revoked and the audit rows written together. From
   * the commit on, the customer refresh finds the row ended and refuses the session even if Redis
   * is not reached, and `purge` counts the session as ended now, not at the end its last refresh
   * slid it to (a guest so revoked would otherwise be kept a whole idle lifetime, contract 13). A
   * session this tenant has no row of (a code replayed before its first exchange recorded one)
   * gets its audit rows alone.
   */
  async recordRevocation(tenantId: string, sessionId: string, records: readonly AuditRecord[]): Promise<void> {
    await this.records.manager.transaction((m) => markRevoked(m, tenantId, sessionId, records));
  }

  /**
   * recordRevocation, plus a note of the revocation Redis owes (pending_revocations), returned for
   * the caller to settle once Redis has revoked: the management bearer and refresh read only
   * Redis, so should it refuse, the running service carries the revocation out instead of the
   * session living on. Null when the tenant has no row of the session.
   */
  async recordNotedRevocation(
    tenantId: string,
    sessionId: string,
    records: readonly AuditRecord[],
  ): Promise<string | null> {
    return this.records.manager.transaction(async (m) => {
      await markRevoked(m, tenantId, sessionId, records);
      return notePendingSessionRevocation(m, tenantId, sessionId);
    });
  }

  /**
   * Marks a session of the tenant revoked and writes the audit rows `recordsFor(userId)` gives, in
   * one transaction, before the caller revokes the live session in Redis, which cannot share it
   * (issue 22, point 6): the row of the revocation exists before its effect, and from the commit
   * on the session's refresh is refused here even if Redis is not reached. Null when the tenant
   * has no such session; an already revoked one is recorded again, and revoked again in Redis.
   */
  async revokeRecorded(
    tenantId: string,
    sessionId: string,
    recordsFor: (userId: string) => readonly AuditRecord[],
  ): Promise<{ userId: string } | null> {
    return this.records.manager.transaction(async (m) => {
      const [row] = rowsOf(
        await m.query('SELECT user_id FROM sessions WHERE id = $1 AND tenant_id = $2 FOR UPDATE', [
          sessionId,
          tenantId,
        ]),
      );
      if (!row) return null;
      const userId = text(row, 'user_id');
      await m.query('UPDATE sessions SET revoked_at = coalesce(revoked_at, clock_timestamp()) WHERE id = $1', [
        sessionId,
      ]);
      await insertAuditRecords(m, recordsFor(userId));
      return { userId };
    });
  }

  /**
   * Contract 13: a refresh extends the session to a fresh idle lifetime, capped by the absolute one
   * counted from its creation. Returns the new end (the database's clock, which the live session
   * in Redis is then given too) and the owner. Only a row of the realm and client the token was
   * presented to moves: `ended` when that row says the session is over, `unknown` when there is
   * none (the second read happens only on that refusal, off the hot path). `generation` is the
   * presented token's (0 for the format before generations).
   */
  async slide(
    sessionId: string,
    binding: SessionBinding,
    lifetime: { idleSeconds: number; absoluteSeconds: number | null },
    generation: number,
  ): Promise<Slide> {
    const { rows } = affectedRows(
      await SLIDE.run(this.records.manager, [
        sessionId,
        lifetime.idleSeconds,
        lifetime.absoluteSeconds,
        binding.tenantId,
        binding.clientId,
        generation,
      ]),
    );
    const row = rows[0];
    if (row) return { userId: text(row, 'user_id'), expiresAtMs: count(row, 'expires_ms') };
    const known = await this.records.countBy({ id: sessionId, tenantId: binding.tenantId, clientId: binding.clientId });
    return known === 1 ? 'ended' : 'unknown';
  }

  /** The row session recovery judges, or null when the row itself already refuses it (RECOVERABLE). */
  async recoverable(sessionId: string, binding: SessionBinding): Promise<RecoverableRow | null> {
    return decodeFirst(
      await this.records.manager.query(RECOVERABLE, [sessionId, binding.tenantId, binding.clientId]),
      (row) => ({
        userId: text(row, 'user_id'),
        secretDigest: text(row, 'secret_digest'),
        scope: text(row, 'scope'),
        guest: bool(row, 'guest'),
        presentedGeneration: count(row, 'presented_generation'),
        priorActivityMs: count(row, 'prior_activity_ms'),
        neverRefreshed: bool(row, 'never_refreshed'),
        expiresAtMs: count(row, 'expires_ms'),
      }),
    );
  }

  /**
   * Records a rebuild of the session before it is carried out in Redis, as revocations are
   * (audit rows before their effects): the row notes when, and `record` is written with it, once
   * per session and Redis dataset (`epochMs`), however many refreshes race to the rebuild. False
   * when the row was revoked meanwhile, so nothing may be rebuilt.
   */
  async recordRecovery(sessionId: string, epochMs: number, record: AuditRecord): Promise<boolean> {
    return this.records.manager.transaction(async (m) => {
      const first = affectedRows(
        await m.query(
          `UPDATE sessions SET recovered_at = clock_timestamp()
            WHERE id = $1 AND revoked_at IS NULL
              AND (recovered_at IS NULL OR recovered_at < to_timestamp($2::bigint / 1000.0))`,
          [sessionId, epochMs],
        ),
      );
      if (first.affected === 1) {
        await insertAuditRecords(m, [record]);
        return true;
      }
      return (
        rowsOf(await m.query('SELECT 1 FROM sessions WHERE id = $1 AND revoked_at IS NULL', [sessionId])).length === 1
      );
    });
  }

  /**
   * The digest of the secret the live session keeps now (an upgrade's replacement that took over
   * the guest's token), so that a rebuild after Redis lost the session checks the token it holds.
   */
  async keepSecretDigest(sessionId: string, secretDigest: string): Promise<void> {
    await this.records.update({ id: sessionId }, { secretDigest });
  }

  /** Whether a revocation of the session has committed here. */
  async isRevoked(sessionId: string): Promise<boolean> {
    return (await this.records.countBy({ id: sessionId, revokedAt: Not(IsNull()) })) === 1;
  }
}

/** The session's row marked revoked (once: the first mark stays) and the audit rows, in `m`. */
async function markRevoked(
  m: EntityManager,
  tenantId: string,
  sessionId: string,
  records: readonly AuditRecord[],
): Promise<void> {
  await m.query(
    'UPDATE sessions SET revoked_at = coalesce(revoked_at, clock_timestamp()) WHERE id = $1 AND tenant_id = $2',
    [sessionId, tenantId],
  );
  await insertAuditRecords(m, records);
}
