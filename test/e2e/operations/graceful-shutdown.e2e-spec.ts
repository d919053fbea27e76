import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { DRAIN_LIMIT_MS } from '../../../src/http/drain';
import { createSuiteDatabase, dropSuiteDatabase } from '../../support/database';
import { eventually } from '../../support/eventually';
import { PrivateRedis } from '../../support/private-redis';
import { SmtpCatcher } from '../../support/smtp-catcher';
import { freePort, testEnv } from '../../support/test-app';

const ROOT = join(__dirname, '../../..');

interface Service {
  readonly child: ChildProcess;
  readonly port: number;
  readonly origin: string;
  /** `code/signal` once the process has exited, with the time it did. */
  readonly exited: Promise<{ how: string; at: number }>;
  stdout(): string;
}

interface Answer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** One client connection spoken to byte by byte: a request can be left half-sent, as a slow client does. */
class RawConnection {
  private data = '';
  private waiting: (() => void) | null = null;
  readonly closed: Promise<void>;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.data += chunk;
      this.waiting?.();
    });
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  send(text: string): void {
    this.socket.write(text);
  }

  /** The next whole answer on the connection (the service always sends Content-Length). */
  async answer(): Promise<Answer> {
    for (;;) {
      const end = this.data.indexOf('\r\n\r\n');
      if (end >= 0) {
        const [statusLine = '', ...lines] = this.data.slice(0, end).split('\r\n');
        const headers = Object.fromEntries(
          lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
        );
        const length = Number(headers['content-length'] ?? 0);
        if (this.data.length >= end + 4 + length) {
          const body = this.data.slice(end + 4, end + 4 + length);
          this.data = this.data.slice(end + 4 + length);
          return { status: Number(statusLine.split(' ')[1]), headers, body };
        }
      }
      await new Promise<void>((resolve, reject) => {
        this.waiting = resolve;
        void this.closed.then(() => reject(new Error(`closed before a whole answer: ${JSON.stringify(this.data)}`)));
      });
    }
  }
}

/**
 * SIGTERM to the real process: it stops accepting, finishes what is in flight, closes its pools
 * and exits (Nest re-raises the signal once closed, so the exit is by SIGTERM). Requests in flight
 * are held open by pausing a private Redis, or by a client that has not sent its whole request yet.
 */
describe('graceful shutdown on SIGTERM', () => {
  let redis: PrivateRedis;
  let smtp: SmtpCatcher;
  let db: string;
  const started: Service[] = [];

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist/src/main.js'))) throw new Error('build first: npm run build (npm test does)');
    [redis, smtp, db] = await Promise.all([PrivateRedis.start(), SmtpCatcher.start(), createSuiteDatabase()]);
  });

  afterAll(async () => {
    for (const { child } of started) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await redis.stop();
    await smtp.stop();
    await dropSuiteDatabase(db);
  });

  function environment(port: number): Record<string, string> {
    return {
      ...(process.env as Record<string, string>),
      ...testEnv(port, db, smtp.url, {
        REDIS_URL: redis.url,
        DEPENDENCY_TIMEOUT_MS: '5000',
        RATE_LIMITS: 'off',
        LOG_LEVEL: 'info',
      }),
    };
  }

  /** The built service on a port of its own; AUTH_INTERNAL_URL defaults to AUTH_ORIGIN: itself. */
  async function startService(): Promise<Service> {
    const port = await freePort();
    const env = environment(port);
    // The seed holds the console's redirect URI, whose origin names the port.
    execFileSync('node', [join(ROOT, 'dist/src/cli/admin.js'), 'seed-control-plane'], { env, stdio: 'ignore' });
    const child = spawn('node', [join(ROOT, 'dist/src/main.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const exited = new Promise<{ how: string; at: number }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ how: `${code}/${signal}`, at: Date.now() })),
    );
    const origin = `http://localhost:${port}`;
    await eventually(async () => (await fetch(`${origin}/healthz`)).ok, 10_000);
    const service = { child, port, origin, exited, stdout: () => stdout };
    started.push(service);
    return service;
  }

  const refusesConnections = (s: Service) =>
    eventually(
      () =>
        fetch(`${s.origin}/healthz`).then(
          () => false,
          () => true,
        ),
      5_000,
    );

  const accessLines = (s: Service, path: string) =>
    s
      .stdout()
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            level?: number;
            msg?: string;
            req?: { id?: string; path?: string };
            res?: { statusCode?: number };
          },
      )
      .filter((l) => l.req?.path === path && l.res);

  it('finishes every request in flight, refuses new connections, then exits', async () => {
    const s = await startService();
    // Requests that need Redis hang while it is paused: they are in flight when SIGTERM arrives.
    redis.pause();
    const inFlight = Array.from({ length: 8 }, () =>
      fetch(`${s.origin}/management-auth/email/start`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: s.origin },
        body: JSON.stringify({ flow_id: 'flw_AAAAAAAAAAAAAAAAAAAAAA', email: 'x@studio.example' }),
      }).then(
        (r) => r.status,
        (err: Error) => `failed: ${err.message} ${String((err.cause as { code?: string } | undefined)?.code)}`,
      ),
    );
    // No signal says the requests reached the paused Redis: they are given time to.
    await new Promise((r) => setTimeout(r, 300));
    s.child.kill('SIGTERM');
    // New connections are refused while the requests in flight still wait for Redis.
    await refusesConnections(s);
    redis.resume();

    const statuses = await Promise.all(inFlight);
    // Each in-flight request got a real answer (the unknown flow is 403), none a reset.
    expect(statuses).toEqual(Array(8).fill(403));
    expect(['0/null', 'null/SIGTERM']).toContain((await s.exited).how);
    // Each of them wrote its access line to stdout, as one JSON object, before the process exited.
    const answered = accessLines(s, '/management-auth/email/start');
    expect(answered).toHaveLength(8);
    for (const line of answered) {
      expect(line.res?.statusCode).toBe(403);
      expect(line.req?.id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('closes keep-alive connections: idle ones at once, busy ones after their answer, and /readyz says draining', async () => {
    const s = await startService();
    const host = `localhost:${s.port}`;
    // A proxy's pooled connections: one idle, one sending a slow POST on a connection it reused.
    const idle = await RawConnection.open(s.port);
    idle.send(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    expect((await idle.answer()).headers.connection).toBe('keep-alive');
    const busy = await RawConnection.open(s.port);
    busy.send(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
    await busy.answer();
    const body = JSON.stringify({ flow_id: 'flw_AAAAAAAAAAAAAAAAAAAAAA', email: 'x@studio.example' });
    busy.send(
      `POST /management-auth/email/start HTTP/1.1\r\nHost: ${host}\r\nOrigin: ${s.origin}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
    );
    // A load balancer's probe whose request is on its way when the signal comes.
    const probe = await RawConnection.open(s.port);
    probe.send(`GET /readyz HTTP/1.1\r\nHost: ${host}\r\n`);
    await new Promise((r) => setTimeout(r, 200));

    s.child.kill('SIGTERM');
    await idle.closed;
    await refusesConnections(s);
    probe.send('\r\n');
    const readiness = await probe.answer();
    expect([readiness.status, readiness.headers.connection]).toEqual([503, 'close']);
    expect(JSON.parse(readiness.body)).toMatchObject({
      error: 'temporarily_unavailable',
      error_description: 'The service is shutting down.',
    });
    await probe.closed;

    busy.send(body.slice(10));
    const answer = await busy.answer();
    const answeredAt = Date.now();
    // The unknown flow's 403: the request was served in full, and the connection is not kept.
    expect([answer.status, answer.headers.connection]).toEqual([403, 'close']);
    await busy.closed;
    const exit = await s.exited;
    expect(['0/null', 'null/SIGTERM']).toContain(exit.how);
    // Nothing is left to wait for, so the exit follows the last answer (not a keep-alive timeout).
    expect(exit.at - answeredAt).toBeLessThan(2_000);
    expect(accessLines(s, '/management-auth/email/start')).toMatchObject([{ res: { statusCode: 403 } }]);
  });

  it('lets a console request in flight finish its call to the API on this very instance (AUTH_INTERNAL_URL)', async () => {
    const s = await startService();
    // The BFF's first request discovers the API at AUTH_INTERNAL_URL, which is this process: a new
    // connection to its own listener, made only once the slow form body is in.
    const start = await RawConnection.open(s.port);
    start.send(
      `POST /api/auth/start HTTP/1.1\r\nHost: 127.0.0.1:${s.port}\r\nOrigin: http://127.0.0.1:${s.port}\r\n` +
        'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 3\r\n\r\na=',
    );
    await new Promise((r) => setTimeout(r, 200));

    s.child.kill('SIGTERM');
    await eventually(() => Promise.resolve(s.stdout().includes('"msg":"draining"')), 5_000);
    start.send('1');
    const answer = await start.answer();
    expect([answer.status, answer.headers.connection]).toEqual([303, 'close']);
    expect(answer.headers.location).toMatch(new RegExp(`^${s.origin}/management-auth/authorize\\?`));
    expect(['0/null', 'null/SIGTERM']).toContain((await s.exited).how);
  });

  it(`cuts what is still running ${DRAIN_LIMIT_MS / 1000} s after the signal and exits, before an orchestrator's kill`, async () => {
    const s = await startService();
    // A client that never finishes its request.
    const stuck = await RawConnection.open(s.port);
    stuck.send(
      `POST /management-auth/email/start HTTP/1.1\r\nHost: localhost:${s.port}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{',
    );
    await new Promise((r) => setTimeout(r, 200));

    const signalledAt = Date.now();
    s.child.kill('SIGTERM');
    await stuck.closed;
    const exit = await s.exited;
    expect(['0/null', 'null/SIGTERM']).toContain(exit.how);
    expect(exit.at - signalledAt).toBeGreaterThanOrEqual(DRAIN_LIMIT_MS - 100);
    expect(exit.at - signalledAt).toBeLessThan(DRAIN_LIMIT_MS + 2_000);
    expect(s.stdout()).toContain('"msg":"drain limit reached; cutting the connections still open"');
  }, 20_000);
});
