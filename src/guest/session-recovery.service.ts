import { Injectable, Logger } from '@nestjs/common';
import { SessionRecordsRepository } from '../directory/session-records.repository';
import { MetricsService } from '../platform/metrics/metrics.service';
import { DatasetEpoch } from '../platform/session-store/dataset-epoch';
import {
  SessionStore,
  type LostSession,
  type LostSuccessor,
  type RebuildOutcome,
  type RebuiltSession,
} from '../platform/session-store/session-store';
import { recoveryRefusal } from './session-recovery.rule';

/**
 * Rebuilds a customer session that Redis lost (a flush, a restart without persistence, a failover
 * to an empty replica) from its PostgreSQL row, so a guest holding only a refresh token keeps its
 * user id (contract 13: players keep their accounts). Asked by the refresh grant only when Redis
 * holds nothing under the token's session id; the rotation then runs as usual. Console sessions are
 * not rebuilt: losing Redis signs console users out.
 */
@Injectable()
export class SessionRecovery {
  private readonly logger = new Logger('SessionRecovery');

  constructor(
    private readonly records: SessionRecordsRepository,
    private readonly epoch: DatasetEpoch,
    private readonly sessions: SessionStore,
    private readonly metrics: MetricsService,
  ) {}

  async recover(lost: LostSession): Promise<void> {
    // A missing epoch key is set here to Redis's clock now, and the rebuild still goes ahead: the
    // dataset lost it, so it began at some moment up to now, and treating "now" as its start only
    // admits rows active between the loss and now. Their deliberate ends mark the row (revocations,
    // replays, upgrades, deactivations) or outlive it (idle and absolute ends); only an erasure
    // interrupted in that window and asked about after its tombstone expired would not, and the
    // key is set again on every reconnection to keep the window short. Refusing here instead would
    // sign out for good exactly the first players to come back after a flush.
    const [row, { epochMs }] = await Promise.all([this.records.recoverable(lost.sessionId, lost), this.epoch.ensure()]);
    const refusal = recoveryRefusal(row, lost, epochMs);
    const where = { tenant: lost.tenantId, client: lost.clientId, sid: lost.sessionId, gen: lost.generation };
    if (refusal !== null || row === null) {
      this.metrics.sessionRecoveries.inc({ outcome: refusal ?? 'no_row' });
      this.logger.log({ ...where, refusal }, 'session lost by redis not rebuilt');
      return;
    }
    const outcome = await this.rebuild(
      { ...lost, userId: row.userId, scope: row.scope, guest: row.guest, secretDigest: row.secretDigest },
      lost.expiresAtMs,
      epochMs,
    );
    // Of refreshes racing after a loss one rebuilds; the others find the session and rotate.
    if (outcome === null || outcome === 'present') return;
    this.metrics.sessionRecoveries.inc({ outcome });
    if (outcome === 'rebuilt') this.logger.log(where, 'session lost by redis rebuilt from its row');
    else this.logger.log({ ...where, refusal: outcome }, 'session lost by redis not rebuilt');
  }

  /**
   * An upgrade's replacement that Redis holds nothing of (its activation failed after the commit,
   * or Redis lost it) while the guest's token is handed to it (contract 13): rebuilt, unused, with
   * the secret that token derives, when its row is live and no token of it was ever presented (so
   * no holder of it can be cut off, and no end of it in Redis alone can be undone).
   */
  async recoverSuccessor(lost: LostSuccessor): Promise<void> {
    const row = await this.records.recoverable(lost.sessionId, lost);
    const where = { tenant: lost.tenantId, client: lost.clientId, sid: lost.sessionId, replaced: lost.replacedId };
    if (row === null || !row.neverRefreshed) {
      this.metrics.sessionRecoveries.inc({ outcome: row === null ? 'no_row' : 'generation' });
      this.logger.log(where, 'replacement session not rebuilt for its hand-over');
      return;
    }
    // The secret its row names is the one the upgrade answered with, unless an earlier take-over
    // already wrote the derived one there: its token, should it turn up too, is a replay (ROTATE).
    const former = row.secretDigest === lost.secretDigest ? {} : { formerSecretDigest: row.secretDigest };
    const outcome = await this.rebuild(
      { ...lost, ...former, userId: row.userId, scope: row.scope, guest: row.guest, generation: 0 },
      row.expiresAtMs,
      (await this.epoch.ensure()).epochMs,
      { replaced_session_id: lost.replacedId },
    );
    if (outcome === null || outcome === 'present') return;
    this.metrics.sessionRecoveries.inc({ outcome });
    this.logger.log({ ...where, outcome }, 'replacement session rebuilt for its hand-over');
  }

  /**
   * The `session.recovered` audit row first, as for every change of a session that Redis carries
   * out (once per session and dataset), then the rebuild; null when the row was revoked meanwhile.
   */
  private async rebuild(
    session: RebuiltSession,
    expiresAtMs: number,
    epochMs: number,
    auditData: Record<string, string> = {},
  ): Promise<RebuildOutcome | null> {
    const { sessionId, clientId, generation } = session;
    const recorded = await this.records.recordRecovery(sessionId, epochMs, {
      type: 'session.recovered',
      tenantId: session.tenantId,
      subject: session.userId,
      data: { session_id: sessionId, client_id: clientId, generation, ...auditData },
    });
    return recorded ? this.sessions.rebuild(session, expiresAtMs) : null;
  }
}
