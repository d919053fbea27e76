import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';

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
  /**
   * Open connections, tracked per connection rather than per request: a Set of every response in
   * flight, with a close listener on each, doubled the CPU time of the bearer routes through
   * garbage collection (docs/performance.md), while a proxy's keep-alive connections are few.
   */
  private readonly sockets = new Set<Socket>();
  private draining = false;

  get isDraining(): boolean {
    return this.draining;
  }

  attach(server: Server): void {
    this.server = server;
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    // A request that arrives on a kept connection while draining is answered and its connection closed.
    server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
      if (this.draining) res.shouldKeepAlive = false;
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server || this.draining) return;
    this.draining = true;
    const inFlight = this.inFlight();
    for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
    server.closeIdleConnections();
    // An answer whose headers left before the signal keeps its connection: closed once idle.
    const sweep = setInterval(() => server.closeIdleConnections(), 50).unref();
    this.logger.log({ inFlight: inFlight.length }, 'draining');
    const limit = new Promise<'limit'>((resolve) => setTimeout(resolve, DRAIN_LIMIT_MS, 'limit').unref());
    // A console request may still call the API at AUTH_INTERNAL_URL, often this very process (the
    // compose file's localhost:3000), so the listener stays open until those in flight now are
    // answered. No other request needs a new connection to finish: without them the listener
    // closes at once, and a proxy retries a refused connection on another instance.
    const consoleCalls = inFlight.filter((res) => res.req.url?.startsWith('/api/'));
    await Promise.race([Promise.all(consoleCalls.map((res) => closed(res))), limit]);
    const drained = new Promise<'drained'>((resolve) => server.close(() => resolve('drained')));
    if ((await Promise.race([drained, limit])) === 'limit') {
      this.logger.warn({ open: this.sockets.size }, 'drain limit reached; cutting the connections still open');
      server.closeAllConnections();
      await drained;
    }
    clearInterval(sweep);
  }

  /**
   * The answers under way: each connection's current response, which Node keeps as
   * `socket._httpMessage` (what http-terminator and stoppable read too; Node has no public way to
   * list a server's responses).
   */
  private inFlight(): ServerResponse<IncomingMessage>[] {
    const answers: ServerResponse<IncomingMessage>[] = [];
    for (const socket of this.sockets) {
      const res = (socket as Socket & { _httpMessage?: unknown })._httpMessage;
      if (res instanceof ServerResponse && !res.writableFinished) answers.push(res as ServerResponse<IncomingMessage>);
    }
    return answers;
  }
}

function closed(res: ServerResponse): Promise<void> {
  return res.closed ? Promise.resolve() : new Promise((resolve) => res.once('close', () => resolve()));
}
