import { QueryFailedError } from 'typeorm';

/**
 * Decides whether an unexpected error means a dependency is unreachable, so the service
 * fails closed with 503 instead of 500. ioredis and pg report connection loss through
 * many error classes; this is the one place that knows them.
 */
export function dependencyOf(err: unknown): 'redis' | 'postgres' | null {
  if (!(err instanceof Error)) return null;
  const name = err.name;
  const message = err.message ?? '';
  if (
    name === 'MaxRetriesPerRequestError' ||
    name === 'ClusterAllFailedError' ||
    /Stream isn't writeable|Connection is closed|Command timed out|enableOfflineQueue|Cluster isn't ready|None of startup nodes|READONLY|LOADING|CLUSTERDOWN|TRYAGAIN/.test(
      message,
    )
  ) {
    return 'redis';
  }
  const code = (err as { code?: unknown }).code;
  if (
    /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connect ECONNREFUSED|Connection refused|the database system is (starting|shutting) up|terminating connection|not currently accepting connections|does not allow connections|Query read timeout|canceling statement due to statement timeout/.test(
      message,
    ) ||
    (typeof code === 'string' && /^(57P0[1-3]|53300|08\d{3}|ECONNREFUSED|ECONNRESET|ETIMEDOUT)$/.test(code))
  ) {
    return err instanceof QueryFailedError || typeof code === 'string' || /onnect|terminat|timeout/.test(message)
      ? 'postgres'
      : null;
  }
  return null;
}
