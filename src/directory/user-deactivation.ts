import type { AuditRecord } from './audit-trail.repository';
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
 *    (issue 22);
 * 2. Redis revokes every live session of the user at once and marks the user so none can join.
 * A failure after step 1 leaves the rows and an error; asking again repeats the revocation.
 */
export class UserDeactivation {
  constructor(
    private readonly sessions: UserSessionRevoker,
    private readonly users: UserRecordsRepository,
  ) {}

  async deactivate(
    tenantId: string,
    userId: string,
    by: string,
    alsoRecord: readonly AuditRecord[] = [],
  ): Promise<Deactivation> {
    const changed = await this.users.deactivate(tenantId, userId, by, alsoRecord);
    const recorded = (await this.users.unexpiredSessions(userId)).map((s) => s.id);
    const revoked = await this.sessions.revokeUser(userId, recorded);
    return { changed, revokedSessions: revoked.length };
  }
}
