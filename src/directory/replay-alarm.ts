import { Injectable, Logger } from '@nestjs/common';
import { MetricsService } from '../platform/metrics/metrics.service';
import type { AuditRecord } from './audit-trail.repository';
import { SessionRecordsRepository } from './session-records.repository';

/** A one-time credential presented again: a refresh token of an earlier generation, or a spent authorization code. */
export interface Replay {
  readonly realm: 'control_plane' | 'customer';
  readonly kind: 'authorization_code' | 'refresh_token';
  readonly tenantId: string;
  readonly sessionId: string;
  /** The audit row's subject: the session's owner, or the session when its owner is not known. */
  readonly subject: string;
  /** The client named in the audit row, where the realm records one. */
  readonly clientId?: string;
}

const WHAT: Record<Replay['kind'], string> = {
  authorization_code: 'authorization code',
  refresh_token: 'refresh token',
};

/**
 * Spec 2.2: a replay means a credential leaked, so the store revokes the session, and the service
 * raises the same alarm wherever it detects one: a warning in the log, the
 * `svc_refresh_replays_total` counter, and a `refresh.replayed` audit row (contract 12), written
 * with the session's row marked revoked, as every revocation is recorded.
 */
@Injectable()
export class ReplayAlarm {
  private readonly logger = new Logger('ReplayAlarm');

  constructor(
    private readonly metrics: MetricsService,
    private readonly sessions: SessionRecordsRepository,
  ) {}

  async raise(replay: Replay): Promise<void> {
    const { realm, kind, tenantId, sessionId, subject, clientId } = replay;
    this.logger.warn({ realm, tenant: tenantId, sid: sessionId }, `${WHAT[kind]} replayed; session revoked`);
    this.metrics.refreshReplays.inc({ realm, kind });
    const record: AuditRecord = {
      type: 'refresh.replayed',
      tenantId,
      subject,
      data: { kind, session_id: sessionId, ...(clientId === undefined ? {} : { client_id: clientId }) },
    };
    await this.sessions.recordRevocation(tenantId, sessionId, [record]);
  }
}
