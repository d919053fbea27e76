import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { freePort } from './test-app';

export type UpstreamMode = 'pass' | 'fail-503' | 'reset';

export interface SeenRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
}

/**
 * A switchable HTTP hop in front of the API, for tests of how the BFF treats its upstream.
 * The suite's AUTH_ORIGIN names this hop, so everything the BFF sends to the API (discovery,
 * token grants, resource calls) passes here; the Host header is kept, so the service still
 * sees its auth host. `pass` forwards, `fail-503` answers 503 as an unwell API would, `reset`
 * drops the connection as an unreachable one would; `answer` gives one path a status of its
 * choosing, as a proxy or load balancer in front of the API might. Extra headers can be added to the API's
 * answers, to prove what the BFF does not relay.
 */
export class UpstreamSwitch {
  mode: UpstreamMode = 'pass';
  target = 0;
  extraResponseHeaders: Record<string, string> = {};
  /** Requests whose path starts with `prefix` get this answer instead of being forwarded. */
  answer: { prefix: string; status: number; body: string } | null = null;
  readonly seen: SeenRequest[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {
    server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  get origin(): string {
    return `http://localhost:${this.port}`;
  }

  static async start(): Promise<UpstreamSwitch> {
    const port = await freePort();
    const ref: { sw?: UpstreamSwitch } = {};
    const server = createServer((req, res) => {
      const sw = ref.sw as UpstreamSwitch;
      sw.seen.push({ method: req.method ?? '', path: req.url ?? '', headers: { ...req.headers } });
      if (sw.answer && req.url?.startsWith(sw.answer.prefix)) {
        const { status, body } = sw.answer;
        res.writeHead(status, { 'Content-Type': body.startsWith('{') ? 'application/json' : 'text/html' }).end(body);
        return;
      }
      if (sw.mode === 'reset') {
        req.socket.destroy();
        return;
      }
      if (sw.mode === 'fail-503') {
        res
          .writeHead(503, { 'Content-Type': 'application/json' })
          .end('{"error":"temporarily_unavailable","error_description":"down"}');
        return;
      }
      const upstream = request(
        { host: '127.0.0.1', port: sw.target, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, { ...answer.headers, ...sw.extraResponseHeaders });
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => server.listen(port, () => resolve()));
    ref.sw = new UpstreamSwitch(server, port);
    return ref.sw;
  }

  /** Requests the BFF made to the given API path prefix. */
  requestsTo(prefix: string): SeenRequest[] {
    return this.seen.filter((r) => r.path.startsWith(prefix));
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
