import { DependencyUnavailableError } from '../errors/app-error';
import { dependencyOf } from '../errors/dependency-failure';

/** What a revocation needs of the outbox (PendingRevocationsRepository). */
export interface RevocationNotes {
  /** The noted revocation was carried out. */
  settle(id: string): Promise<void>;
}

/**
 * The revocation committed in PostgreSQL with its note, but its Redis part failed: answered as
 * 503 (the dependency that failed), and the operator's CLI tells them the running service
 * carries it out, so they need not run the command again.
 */
export class RevocationDeferredError extends DependencyUnavailableError {
  constructor(dependency: string, what: string, cause: unknown) {
    super(dependency, cause);
    this.name = 'RevocationDeferredError';
    this.message =
      `${what}, but revoking it in Redis failed (${dependency} unavailable); ` +
      'the running service retries the revocation until it succeeds (metric svc_pending_revocations)';
  }
}

/**
 * The Redis part of a revocation whose note (`note`, null when none was written) committed with
 * it: settles the note once `revokeInRedis` succeeded; when a dependency failed, throws a
 * RevocationDeferredError saying `what` stands. Any other failure is thrown as it is, note kept.
 */
export async function carryOutNoted<T>(
  notes: RevocationNotes,
  note: string | null,
  what: string,
  revokeInRedis: () => Promise<T>,
): Promise<T> {
  let result: T;
  try {
    result = await revokeInRedis();
  } catch (err) {
    const dependency = dependencyOf(err);
    throw note !== null && dependency ? new RevocationDeferredError(dependency, what, err) : err;
  }
  // Only the note is left to go: should this fail, the retry repeats a revocation that changes
  // nothing any more and deletes it, so the revocation has succeeded either way.
  if (note !== null) await notes.settle(note).catch(() => undefined);
  return result;
}
