import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { APP_CONFIG, type AppConfig } from '../../config/config';

/**
 * Prometheus metrics, served on their own port (METRICS_PORT) so they are never reachable
 * through the public hosts. Each app instance has its own registry (tests run several per process).
 */
@Injectable()
export class MetricsService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  readonly registry = new Registry();
  private server: Server | null = null;
  private boundPort: number | null = null;

  readonly httpRequests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request latency by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });
  readonly tokensIssued = new Counter({
    name: 'svc_tokens_issued_total',
    help: 'Access tokens issued, by realm kind and grant.',
    labelNames: ['realm', 'grant'] as const,
    registers: [this.registry],
  });
  readonly refreshReplays = new Counter({
    name: 'svc_refresh_replays_total',
    help: 'Replayed refresh tokens or authorization codes detected (the session was revoked).',
    labelNames: ['realm', 'kind'] as const,
    registers: [this.registry],
  });
  readonly sessionRecoveries = new Counter({
    name: 'svc_session_recoveries_total',
    help: 'Customer sessions Redis lost and a refresh asked back: rebuilt from their row, or why not.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: 'svc_rate_limit_rejections_total',
    help: 'Requests refused by a rate-limit budget.',
    labelNames: ['budget'] as const,
    registers: [this.registry],
  });
  readonly networkTierRefusals = new Counter({
    name: 'svc_network_tier_refusals_total',
    help: 'Requests refused by the budget of a coarse network (IPv4 /24, IPv6 /56 or /48): a spread flood.',
    labelNames: ['budget', 'tier'] as const,
    registers: [this.registry],
  });
  /**
   * Set by each round of PendingRevocationsWorker. Above zero for longer than a few rounds: Redis
   * keeps refusing revocations (of deactivated users, of control-plane sessions), whose sessions
   * stay signed in until it takes them.
   */
  readonly pendingRevocations = new Gauge({
    name: 'svc_pending_revocations',
    help: 'Revocations committed in PostgreSQL that Redis has not carried out yet (retried by the service).',
    registers: [this.registry],
  });
  readonly dependencyErrors = new Counter({
    name: 'svc_dependency_errors_total',
    help: 'Requests answered 503 because a dependency was unavailable.',
    labelNames: ['dependency'] as const,
    registers: [this.registry],
  });

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    collectDefaultMetrics({ register: this.registry });
  }

  /** The port the metrics server listens on (METRICS_PORT=0 picks a free one). */
  get port(): number | null {
    return this.boundPort;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.metricsPort === null) return;
    const server = createServer((req, res) => {
      if (req.method !== 'GET' || req.url !== '/metrics') {
        res.writeHead(404).end();
        return;
      }
      this.registry.metrics().then(
        (body) => res.writeHead(200, { 'Content-Type': this.registry.contentType }).end(body),
        () => res.writeHead(500).end(),
      );
    });
    // Without an 'error' listener a port in use or an address not on this machine crashed the
    // process with an unhandled event, and the listen never settled: start-up fails here instead.
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(new Error(`METRICS_HOST/METRICS_PORT: the metrics listener cannot listen there (${err.code})`)),
      );
      server.listen(this.config.metricsPort ?? 0, this.config.metricsHost, resolve);
    });
    this.server = server;
    const address = server.address();
    this.boundPort = typeof address === 'object' && address ? address.port : null;
    this.logger.log({ port: this.boundPort }, 'metrics listening');
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
