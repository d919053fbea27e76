import { Injectable } from '@nestjs/common';
import { carryOutNoted } from '../directory/noted-revocation';
import { PendingRevocationsRepository } from '../directory/pending-revocations.repository';
import { SessionRecordsRepository } from '../directory/session-records.repository';
import { SessionStore } from '../platform/session-store/session-store';
import { CONTROL_PLANE_TENANT_ID } from '../directory/control-plane';

/**
 * Control-plane revocations (spec 4.2 `revoke`, `revoke-session`), each recorded as
 * `session.revoked` (contract 12) before it is carried out.
 */
@Injectable()
export class SessionRevocationService {
  constructor(
    private readonly sessions: SessionStore,
    private readonly records: SessionRecordsRepository,
    private readonly notes: PendingRevocationsRepository,
  ) {}

  /** The bearer's own session. */
  async revokeOwn(userId: string, sessionId: string): Promise<boolean> {
    return this.revoke(userId, sessionId, 'bearer');
  }

  /** A session of the calling console client; any other id answers as unknown. */
  async revokeForClient(clientId: string, sessionId: string): Promise<boolean> {
    const session = await this.sessions.get(sessionId);
    if (!session || session.tenantId !== CONTROL_PLANE_TENANT_ID || session.clientId !== clientId) return false;
    return this.revoke(session.userId, sessionId, 'client');
  }

  /**
   * The audit row, with the session's row marked revoked, goes first (issue 22, point 6): a Redis revocation cannot share a PostgreSQL
   * transaction, so the row records the intent. A revocation that then fails leaves the row and
   * answers 503 (contract section 3), the safe side; the other order could end a session and leave
   * no trace of it. The session was seen live just before (bearer check, or the client's look-up),
   * so a row without an effect needs a concurrent revocation of the same session. The management
   * bearer and refresh read only Redis, so the transaction also notes the revocation: after a 503
   * the running service carries it out, and the session ends even if nobody asks again.
   */
  private async revoke(userId: string, sessionId: string, by: string): Promise<boolean> {
    const note = await this.records.recordNotedRevocation(CONTROL_PLANE_TENANT_ID, sessionId, [
      {
        type: 'session.revoked',
        tenantId: CONTROL_PLANE_TENANT_ID,
        subject: userId,
        data: { session_id: sessionId, by },
      },
    ]);
    return carryOutNoted(this.notes, note, `session ${sessionId} is revoked`, () => this.sessions.revoke(sessionId));
  }
}
