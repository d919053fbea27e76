import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createSuiteDatabase, dropSuiteDatabase } from '../../support/database';
import { eventually } from '../../support/eventually';
import { PrivateRedis } from '../../support/private-redis';
import { SmtpCatcher } from '../../support/smtp-catcher';
import { freePort, testEnv } from '../../support/test-app';

const ROOT = join(__dirname, '../../..');

/**
 * SIGTERM to the real process: it stops accepting, finishes what is in flight, closes its pools
 * and exits (Nest re-raises the signal once closed, so the exit is by SIGTERM). Requests in flight are held open by pausing a private Redis.
 */
describe('graceful shutdown on SIGTERM', () => {
  let redis: PrivateRedis;
  let smtp: SmtpCatcher;
  let db: string;
  let child: ChildProcess;
  let env: Record<string, string>;
  let origin: string;
  let stdout = '';

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist/src/main.js'))) throw new Error('build first: npm run build (npm test does)');
    [redis, smtp, db] = await Promise.all([PrivateRedis.start(), SmtpCatcher.start(), createSuiteDatabase()]);
    const port = await freePort();
    env = {
      ...(process.env as Record<string, string>),
      ...testEnv(port, db, smtp.url, {
        REDIS_URL: redis.url,
        DEPENDENCY_TIMEOUT_MS: '5000',
        RATE_LIMITS: 'off',
        LOG_LEVEL: 'info',
      }),
    };
    execFileSync('node', [join(ROOT, 'dist/src/cli/admin.js'), 'seed-control-plane'], { env, stdio: 'ignore' });
    child = spawn('node', [join(ROOT, 'dist/src/main.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    origin = `http://localhost:${port}`;
    await eventually(async () => (await fetch(`${origin}/healthz`)).ok, 10_000);
  });

  afterAll(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await redis.stop();
    await smtp.stop();
    await dropSuiteDatabase(db);
  });

  it('finishes every request in flight, refuses new connections, then exits', async () => {
    // Requests that need Redis hang while it is paused: they are in flight when SIGTERM arrives.
    redis.pause();
    const inFlight = Array.from({ length: 8 }, () =>
      fetch(`${origin}/management-auth/email/start`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: origin },
        body: JSON.stringify({ flow_id: 'flw_AAAAAAAAAAAAAAAAAAAAAA', email: 'x@studio.example' }),
      }).then(
        (r) => r.status,
        (err: Error) => `failed: ${err.message} ${String((err.cause as { code?: string } | undefined)?.code)}`,
      ),
    );
    // No signal says the requests reached the paused Redis: they are given time to.
    await new Promise((r) => setTimeout(r, 300));
    const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(`${code}/${signal}`)));
    child.kill('SIGTERM');
    // New connections are refused while the requests in flight still wait for Redis.
    await eventually(
      () =>
        fetch(`${origin}/healthz`).then(
          () => false,
          () => true,
        ),
      5_000,
    );
    redis.resume();

    const statuses = await Promise.all(inFlight);
    // Each in-flight request got a real answer (the unknown flow is 403), none a reset.
    expect(statuses).toEqual(Array(8).fill(403));
    expect(['0/null', 'null/SIGTERM']).toContain(await exited);
    // Each of them wrote its access line to stdout, as one JSON object, before the process exited.
    const lines = stdout
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as { msg?: string; req?: { id?: string; path?: string }; res?: { statusCode?: number } },
      );
    const answered = lines.filter((l) => l.req?.path === '/management-auth/email/start');
    expect(answered).toHaveLength(8);
    for (const line of answered) {
      expect(line.res?.statusCode).toBe(403);
      expect(line.req?.id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
