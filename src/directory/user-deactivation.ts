import type { AuditRecord } from './audit-trail.repository';
import { carryOutNoted, type RevocationNotes } from './noted-revocation';
import type { UserSessionRevoker } from './user-erasure';
import type { UserRecordsRepository } from './user-records.repository';

export interface Deactivation {
  /** False when the user was already deactivated (the sessions are revoked again all the same). */
  readonly changed: boolean;
  readonly revokedSessions: number;
}

/**
 * The one ordering of a user's deactivation, shared by the admin CLI's `user deactivate`
 * (contract 12) and the console's `POST …/users/{userId}/deactivate` (contract 15):
 * 1. PostgreSQL marks the user deactivated and records `user.deactivated` and the caller's own
 *    rows in one transaction: from here no sign-in, code exchange or new session passes its user
 *    check, and the rows exist before the Redis effect, which cannot share the transaction
 *    (issue 22). The same transaction notes the revocation as pending;
 * 2. Redis revokes every live session of the user at once and marks the user so none can join;
 *    then the note is settled.
 * A failure after step 1 leaves the rows, the note and an error. The management bearer and refresh
 * read only Redis, so the note is what ends a developer's session then: the running service
 * (PendingRevocationsWorker) repeats step 2 until it succeeds; asking again does too.
 */
export class UserDeactivation {
  constructor(
    private readonly sessions: UserSessionRevoker,
    private readonly users: UserRecordsRepository,
    private readonly notes: RevocationNotes,
  ) {}

  async deactivate(
    tenantId: string,
    userId: string,
    by: string,
    alsoRecord: readonly AuditRecord[] = [],
  ): Promise<Deactivation> {
    const { changed, pendingRevocation } = await this.users.deactivate(tenantId, userId, by, alsoRecord);
    const revokedSessions = await carryOutNoted(this.notes, pendingRevocation, `user ${userId} is deactivated`, () =>
      this.revokeSessions(userId),
    );
    return { changed, revokedSessions };
  }

  /**
   * Step 2: every live session of the user (its index in Redis, plus the unexpired ids PostgreSQL
   * recorded) revoked, and the user marked so none can join; how many were still live. Repeating
   * it is harmless, which is what lets the retry of a pending note run it again.
   */
  async revokeSessions(userId: string): Promise<number> {
    const recorded = (await this.users.unexpiredSessions(userId)).map((s) => s.id);
    return (await this.sessions.revokeUser(userId, recorded)).length;
  }
}
