import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * How long the drain may take before what still runs is cut. `docker stop` and Compose kill 10 s
 * after SIGTERM (Kubernetes 30 s); the 3 s left close the pools (a Redis handshake may take
 * DEPENDENCY_TIMEOUT_MS, 2 s by default) and flush the last lines, rather than the kill cutting
 * requests and pools alike.
 */
export const DRAIN_LIMIT_MS = 7_000;

/**
 * Graceful shutdown with keep-alive connections (docs/operations.md, Shutdown). Node's
 * `server.close()` closes only the connections idle at that moment and goes on serving later
 * requests on the others with `Connection: keep-alive`, so a proxy reusing its connections held the
 * process up until the orchestrator killed it, and `/readyz` still said ready. Nest calls this hook
 * on SIGTERM before it closes the server, then the pools.
 */
@Injectable()
export class Drain implements BeforeApplicationShutdown {
  private readonly logger = new Logger('Shutdown');
  private server: Server | null = null;
  private readonly inFlight = new Set<ServerResponse<IncomingMessage>>();
  private draining = false;

  get isDraining(): boolean {
    return this.draining;
  }

  /**
   * Tracks every request, ahead of the application, so that an answer given at once is seen too.
   * One shared close listener, no closure per request: this runs on every request.
   */
  attach(server: Server): void {
    this.server = server;
    const inFlight = this.inFlight;
    const isDraining = (): boolean => this.draining;
    // An answer whose headers left before the signal kept its connection: close it once idle.
    const closeIdle = (): void => server.closeIdleConnections();
    function answered(this: ServerResponse<IncomingMessage>): void {
      inFlight.delete(this);
      if (isDraining()) setImmediate(closeIdle);
    }
    server.prependListener('request', (_req: IncomingMessage, res: ServerResponse<IncomingMessage>) => {
      if (this.draining) res.shouldKeepAlive = false;
      inFlight.add(res);
      res.on('close', answered);
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server || this.draining) return;
    this.draining = true;
    for (const res of this.inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
    server.closeIdleConnections();
    this.logger.log({ inFlight: this.inFlight.size }, 'draining');
    const limit = new Promise<'limit'>((resolve) => setTimeout(resolve, DRAIN_LIMIT_MS, 'limit').unref());
    // A console request may still call the API at AUTH_INTERNAL_URL, often this very process (the
    // compose file's localhost:3000), so the listener stays open until those in flight now are
    // answered. No other request needs a new connection to finish: without them the listener
    // closes at once, and a proxy retries a refused connection on another instance.
    const consoleCalls = [...this.inFlight].filter((res) => res.req.url?.startsWith('/api/'));
    await Promise.race([Promise.all(consoleCalls.map((res) => closed(res))), limit]);
    const drained = new Promise<'drained'>((resolve) => server.close(() => resolve('drained')));
    if ((await Promise.race([drained, limit])) === 'limit') {
      this.logger.warn({ inFlight: this.inFlight.size }, 'drain limit reached; cutting the connections still open');
      server.closeAllConnections();
      await drained;
    }
  }
}

function closed(res: ServerResponse): Promise<void> {
  return res.closed ? Promise.resolve() : new Promise((resolve) => res.once('close', () => resolve()));
}
