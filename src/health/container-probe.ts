import { isIPv6 } from 'node:net';

/**
 * The container's health check (the Dockerfile's HEALTHCHECK): GET /readyz where the service
 * listens. HOST may name any address; a wildcard (or none) is reached on loopback, which a
 * dual-stack listener on `::` accepts too.
 */
export function probeUrl(env: NodeJS.ProcessEnv): string {
  const host = env.HOST;
  const address = !host || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : isIPv6(host) ? `[${host}]` : host;
  return `http://${address}:${env.PORT || '3000'}/readyz`;
}

/** Exit 0 when ready, 1 otherwise, within the HEALTHCHECK's own timeout. */
async function probe(): Promise<void> {
  try {
    const res = await fetch(probeUrl(process.env), { signal: AbortSignal.timeout(2500) });
    process.exit(res.ok ? 0 : 1);
  } catch {
    process.exit(1);
  }
}

if (require.main === module) void probe();
