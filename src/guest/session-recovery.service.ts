import { Injectable, Logger } from '@nestjs/common';
import { SessionRecordsRepository } from '../directory/session-records.repository';
import { MetricsService } from '../platform/metrics/metrics.service';
import { DatasetEpoch } from '../platform/session-store/dataset-epoch';
import { SessionStore, type LostSession } from '../platform/session-store/session-store';
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
    // The audit row first, as for every change of a session that Redis carries out.
    const recorded = await this.records.recordRecovery(lost.sessionId, epochMs, {
      type: 'session.recovered',
      tenantId: lost.tenantId,
      subject: row.userId,
      data: { session_id: lost.sessionId, client_id: lost.clientId, generation: lost.generation },
    });
    if (!recorded) return;
    const outcome = await this.sessions.rebuild(
      {
        sessionId: lost.sessionId,
        tenantId: lost.tenantId,
        userId: row.userId,
        clientId: lost.clientId,
        scope: row.scope,
        guest: row.guest,
        generation: lost.generation,
        secretDigest: row.secretDigest,
      },
      lost.expiresAtMs,
    );
    // Of refreshes racing after a loss one rebuilds; the others find the session and rotate.
    if (outcome === 'present') return;
    this.metrics.sessionRecoveries.inc({ outcome });
    if (outcome === 'rebuilt') this.logger.log(where, 'session lost by redis rebuilt from its row');
    else this.logger.log({ ...where, refusal: outcome }, 'session lost by redis not rebuilt');
  }
}
