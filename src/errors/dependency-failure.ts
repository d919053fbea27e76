import { QueryFailedError } from 'typeorm';
import { DependencyUnavailableError } from './app-error';

/**
 * Redis answers that refuse work without anything being wrong with the request (contract section
 * 10): out of memory under `noeviction`, a read-only replica after failover, a script running too
 * long, a dataset still loading, a failed snapshot that stops writes, too few replicas, and a
 * transaction aborted by one of them (EXECABORT). Inside a script they come wrapped in its error.
 * A password changed or missing on the server (NOAUTH, WRONGPASS) and a server at its maxclients
 * are deployment states too, cured without touching the request; so is an ACL that no longer lets
 * the service run a command or touch a key (NOPERM; inside a script Redis 7.0 words it "The user
 * executing the script can't ..."), issue 22 point 6.
 *
 * Not CONFIG: a managed Redis or an ACL denies it to the service on purpose, and its one reader
 * (redis-eviction-policy.ts) takes that refusal as "policy unverified" and starts (docs/security.md,
 * "What an operator must configure"), which it could not if the refusal counted as an outage.
 */
const REDIS_REFUSALS =
  /OOM command not allowed|\bBUSY\b|\bMISCONF\b|\bNOREPLICAS\b|\bMASTERDOWN\b|\bEXECABORT\b|READONLY|LOADING|CLUSTERDOWN|TRYAGAIN|\bNOAUTH\b|\bWRONGPASS\b|max number of clients reached|\bNOPERM\b(?!.*'config[|'])|The user executing the script can't (run this command|access at least one of the)/;

/**
 * PostgreSQL SQLSTATEs that mean "not now" rather than "wrong": serialization failure (40001),
 * deadlock (40P01), lock not available (55P03), statement cancelled or timed out (57014),
 * insufficient resources (53xxx: disk full, out of memory, too many connections), a read-only
 * standby (25006), operator intervention (57P01-57P03), system and I/O errors (58xxx), and
 * connection exceptions (08xxx).
 */
const POSTGRES_REFUSALS = /^(40001|40P01|55P03|57014|53\d{3}|25006|57P0[1-3]|58\d{3}|08\d{3})$/;

/**
 * Decides whether an unexpected error means a dependency is unreachable or refuses work, so the
 * service fails closed with 503 instead of 500, never success (contract section 10). ioredis and
 * pg report these through many error classes; this is the one place that knows them.
 */
export function dependencyOf(err: unknown): 'redis' | 'postgres' | null {
  if (!(err instanceof Error)) return null;
  const name = err.name;
  const message = err.message ?? '';
  if (
    name === 'MaxRetriesPerRequestError' ||
    name === 'ClusterAllFailedError' ||
    /Stream isn't writeable|Connection is closed|Command timed out|enableOfflineQueue|Cluster isn't ready|None of startup nodes/.test(
      message,
    ) ||
    REDIS_REFUSALS.test(message)
  ) {
    return 'redis';
  }
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && POSTGRES_REFUSALS.test(code)) return 'postgres';
  if (
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connect ECONNREFUSED|Connection refused|the database system is (starting|shutting) up|terminating connection|not currently accepting connections|does not allow connections|Query read timeout|canceling statement due to statement timeout/.test(
      message,
    ) ||
    (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT)$/.test(code))
  ) {
    return err instanceof QueryFailedError || typeof code === 'string' || /onnect|terminat|timeout/.test(message)
      ? 'postgres'
      : null;
  }
  return null;
}

/**
 * A refusal that said nothing about the request (503, contract 10): a dependency the service named
 * itself, or an error of PostgreSQL or Redis that `dependencyOf` recognises.
 */
export function isDependencyFailure(err: unknown): boolean {
  return err instanceof DependencyUnavailableError || dependencyOf(err) !== null;
}

/**
 * `work`'s result; when a dependency refused it (503), `undo` first puts back what the request had
 * spent, so the player's retry succeeds (contract 13). A failing undo leaves the 503 as it was.
 */
export async function undoneOnDependencyFailure<T>(work: Promise<T>, undo: () => Promise<unknown>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (isDependencyFailure(err)) await undo().catch(() => undefined);
    throw err;
  }
}
