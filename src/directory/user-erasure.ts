import type { AuditRecord } from './audit-trail.repository';
import type { ErasedBy, UserRecordsRepository } from './user-records.repository';

/** What erasure needs of the session store (SessionStore.revokeUser). */
export interface UserSessionRevoker {
  /** Revokes every live session of the user, plus the given ids, and refuses new ones. */
  revokeUser(userId: string, alsoSessionIds: readonly string[]): Promise<string[]>;
}

export interface Erasure {
  /** Sessions that were still live in Redis and are revoked now. */
  readonly revokedSessions: number;
}

/**
 * The one ordering of a customer user's erasure, shared by the admin CLI's `user delete`
 * (contract 12) and `DELETE /t/{tenantId}/me` (contract 13):
 * 1. PostgreSQL records `session.revoked` for all the user's sessions (`for: user.delete`), in the
 *    statement that checks the user is a customer user: Redis cannot share a PostgreSQL
 *    transaction, so the row of the revocation is written before it (issue 22, point 6). A failure
 *    after this leaves the row and an error (503, or a failed command), never an effect without
 *    its row; the erasure can be asked for again;
 * 2. Redis: every live session of the user (its index, plus the unexpired session ids PostgreSQL
 *    recorded) is revoked and the user is marked so that no new session can join, so no session
 *    can appear between the erasure and the revocation;
 * 3. then PostgreSQL erases identities, consents, memberships, session rows and the user in one
 *    transaction and records `user.deleted` with who asked (and `alsoRecord`'s rows) in it.
 * Only a user of that customer tenant is touched: control-plane users are deactivated, never
 * erased, and a user id named with the wrong tenant revokes nothing. Returns null when there is no
 * such customer user (any more: of concurrent erasures exactly one finds it at step 3).
 */
export class UserErasure {
  constructor(
    private readonly sessions: UserSessionRevoker,
    private readonly users: UserRecordsRepository,
  ) {}

  async erase(
    tenantId: string,
    userId: string,
    by: ErasedBy,
    alsoRecord: (erasure: Erasure) => readonly AuditRecord[] = () => [],
  ): Promise<Erasure | null> {
    if (!(await this.users.recordErasureRevocation(tenantId, userId, by))) return null;
    const recorded = (await this.users.unexpiredSessions(userId)).map((s) => s.id);
    const revoked = await this.sessions.revokeUser(userId, recorded);
    const erasure: Erasure = { revokedSessions: revoked.length };
    const erased = await this.users.erase(tenantId, userId, by, alsoRecord(erasure));
    return erased === null ? null : erasure;
  }
}

/**
 * How far back `purge` looks for an interrupted erasure. Expired session rows of its user stay as
 * long (RetentionRepository): they are the only record that the player went on playing.
 */
export const ERASURE_LOOKBACK_DAYS = 7;

/**
 * Erasures PostgreSQL cut off after their sessions were revoked are finished by `purge`, as asked
 * (the same `by`): the player cannot ask again, and the account would otherwise keep its addresses
 * for good. The grace leaves a running erasure alone; the lookback bounds the scan of audit rows
 * and is far longer than purge's hourly schedule. Redis is reached only when one is found.
 */
export async function finishInterruptedErasures(
  users: UserRecordsRepository,
  sessions: () => Promise<UserSessionRevoker>,
  alsoRecord: (tenantId: string, userId: string) => readonly AuditRecord[],
): Promise<number> {
  const interrupted = await users.interruptedErasures(15, ERASURE_LOOKBACK_DAYS);
  if (interrupted.length === 0) return 0;
  const erasure = new UserErasure(await sessions(), users);
  let finished = 0;
  for (const { tenantId, userId, by } of interrupted) {
    if (await erasure.erase(tenantId, userId, by, () => alsoRecord(tenantId, userId))) finished += 1;
  }
  return finished;
}
