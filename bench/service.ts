// Starts the built service for the benchmark, the soak and the footprint: its own database and
// secrets, the test suites' SMTP catcher, budgets raised by configuration only (never a weaker
// default), pinned to CPU 0 while the load generator takes CPU 1. Every server runs on the Node.js
// that runs the bench (process.execPath: the pinned Node 24). The flows reuse test/support.
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { generateSecrets } from '../src/cli/commands/setup.commands';
import { loadConfig, type RateLimitBudget } from '../src/config/config';
import { admin } from '../test/support/admin-cli';
import { consoleSignIn } from '../test/support/console-flow';
import { freshDatabase } from '../test/support/database';
import { eventually } from '../test/support/eventually';
import { signIn, type ManagementTokens } from '../test/support/management-flow';
import { SmtpCatcher } from '../test/support/smtp-catcher';
import { remoteService, type ServiceUnderTest } from '../test/support/service-agents';

/** The repository: the bench runs compiled under bench/out/js, so it is found by its package.json. */
export const ROOT = (() => {
  for (let dir = __dirname; dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'svc-auth')
      return dir;
  }
  throw new Error('bench: the svc-auth repository was not found above the compiled bench');
})();

const PACKAGE = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
/** The heap flags of `npm start` (and of the Dockerfile), so the bench measures what production runs. */
const HEAP_FLAGS = PACKAGE.scripts.start?.match(/--max-[\w-]+=\d+/g) ?? [];
const REDIS_URL = 'redis://127.0.0.1:6379';
/** Every budget of the bench: far more than any run sends, so a 429 is a bench bug. */
const BENCH_BUDGET = '100000000/60';

export const log = (msg: string): void => void process.stderr.write(`bench: ${msg}\n`);

export interface BenchService {
  /** The service as test/support's flow helpers drive it. */
  readonly t: ServiceUnderTest;
  readonly pid: number;
  readonly env: Readonly<Record<string, string>>;
  /** `Basic …` of the console client, for the refresh grant. */
  readonly basic: string;
  stop(): Promise<void>;
}

/**
 * Every RATE_LIMIT_* variable the service reads (.env.example lists them all) set to BENCH_BUDGET,
 * and a check through the service's own configuration that no budget was left at its default: a
 * name the list missed would otherwise cap the bench at a production budget (guest creation used to
 * answer 429 after 600 requests a minute, the /24 network tier's default, because the names of the
 * network tiers hold digits).
 */
export function benchBudgets(env: Record<string, string>): Record<string, string> {
  const names = [...readFileSync(join(ROOT, '.env.example'), 'utf8').matchAll(/^#? ?(RATE_LIMIT_[A-Z0-9_]+)=/gm)];
  const budgets = Object.fromEntries(names.map((m) => [m[1] as string, BENCH_BUDGET]));
  const limits: RateLimitBudget[] = [];
  const collect = (value: unknown): void => {
    if (value && typeof value === 'object') {
      if ('limit' in value && 'windowSeconds' in value) limits.push(value as RateLimitBudget);
      else Object.values(value).forEach(collect);
    }
  };
  collect(loadConfig({ ...env, ...budgets }).rateLimits);
  const [limit] = BENCH_BUDGET.split('/').map(Number);
  if (limits.length === 0 || limits.some((b) => b.limit !== limit))
    throw new Error('bench: a rate-limit budget of the service is not raised; name it in .env.example');
  return budgets;
}

/**
 * The database a bench server of this checkout owns (`role`: the service, the lower bound). Named
 * after the checkout, so a run drops only its own checkout's leftovers: with one shared name, a
 * bench started in another checkout dropped a running bench's database under its feet.
 */
export function benchDatabase(role: string): Promise<string> {
  return freshDatabase(`svc_auth_bench_${role}_${createHash('sha256').update(ROOT).digest('hex').slice(0, 8)}`);
}

/** Builds the service (BENCH_BUILD=0 reuses dist/), seeds tenant `bench` with client `cli_bench`, starts it on CPU 0. */
export async function startService(
  opts: { nodeArgs?: readonly string[]; env?: Record<string, string> } = {},
): Promise<BenchService> {
  pinLoadGenerator();
  execFileSync('bash', [join(ROOT, 'scripts/ensure-services.sh')], { stdio: 'inherit' });
  if (!existsSync(join(ROOT, 'dist/src/main.js')) || process.env.BENCH_BUILD !== '0')
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const [databaseUrl, smtp, secrets] = await Promise.all([
    benchDatabase('service'),
    SmtpCatcher.start(),
    generateSecrets(),
  ]);
  const port = 3900 + randomInt(50);
  const base: Record<string, string> = {
    ...secrets,
    NODE_ENV: 'development',
    PORT: String(port),
    AUTH_ORIGIN: `http://localhost:${port}`,
    CONSOLE_ORIGIN: `http://127.0.0.1:${port}`,
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    REDIS_KEY_PREFIX: `bench${randomBytes(3).toString('hex')}:`,
    CONSOLE_CLIENT_ID: 'cli_console',
    MAIL_TRANSPORT: 'smtp',
    SMTP_URL: smtp.url,
    MAIL_FROM: 'bench@localhost',
    // Production's level: one access line per request (to /dev/null), as the lower bound writes.
    LOG_LEVEL: 'info',
  };
  const env = { ...base, ...benchBudgets(base), ...opts.env };
  const run = async (...argv: string[]): Promise<void> => {
    const r = await admin(env, ...argv);
    if (r.status !== 0) throw new Error(`admin ${argv.join(' ')}: ${r.stderr}`);
  };
  await run('migrate');
  await run('seed-control-plane');
  await run('tenant', 'create', '--id', 'bench', '--name', 'Bench');
  await run(
    ...['client', 'create', '--tenant', 'bench', '--id', 'cli_bench', '--name', 'Bench', '--type', 'native'],
    ...['--scopes', 'openid offline_access', '--redirect-uri', 'http://127.0.0.1/cb'],
  );
  await run('membership', 'add', '--tenant', 'bench', '--email', 'bench-0@bench.example', '--role', 'owner');

  const server = await spawnServer(
    { ...(process.env as Record<string, string>), ...env },
    [...HEAP_FLAGS, ...(opts.nodeArgs ?? []), 'dist/src/main.js'],
    { readyUrl: `http://127.0.0.1:${port}/readyz`, host: `localhost:${port}` },
  );
  const t = remoteService({
    port,
    authOrigin: env.AUTH_ORIGIN as string,
    consoleOrigin: env.CONSOLE_ORIGIN as string,
    smtp,
    consoleClientSecret: secrets.CONSOLE_CLIENT_SECRET as string,
  });
  return {
    t,
    pid: server.pid,
    env,
    basic: `Basic ${Buffer.from(`cli_console:${secrets.CONSOLE_CLIENT_SECRET}`).toString('base64')}`,
    stop: async () => {
      await server.stop();
      await smtp.stop();
    },
  };
}

/** One complete console sign-in at the API (authorize, email code over SMTP, confirm, token). */
export const apiSignIn = (s: BenchService, email: string): Promise<ManagementTokens> => signIn(s.t, email);

/** One complete console sign-in through the BFF, ending with its session cookie. */
export const bffSignIn = async (s: BenchService, email: string): Promise<string> =>
  (await consoleSignIn(s.t, email)).cookie;

/** Pins the current process (the load generator) to CPU 1 when there are two. */
export function pinLoadGenerator(): void {
  if (cpus().length < 2) return;
  try {
    execFileSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });
  } catch {
    // taskset unavailable: both share the CPUs.
  }
}

export interface Spawned {
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `node args` (process.execPath) on CPU 0 and waits until `readyUrl` answers 200. taskset
 * execs node in place, so the child's pid is the server's.
 */
export async function spawnServer(
  env: Record<string, string>,
  args: readonly string[],
  { readyUrl, host, cwd = ROOT }: { readyUrl: string; host?: string; cwd?: string },
): Promise<Spawned> {
  const pinned = cpus().length > 1;
  const server = spawn(
    pinned ? 'taskset' : process.execPath,
    pinned ? ['-c', '0', process.execPath, ...args] : [...args],
    { cwd, env, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const stopped = new Promise((r) => server.once('exit', r));
  const kill = (): void => void server.kill('SIGTERM');
  process.on('exit', kill);
  const headers = { host: host ?? new URL(readyUrl).host };
  await eventually(async () => (await fetch(readyUrl, { headers })).ok, 10_000);
  return {
    pid: server.pid as number,
    stop: async () => {
      kill();
      await stopped;
      process.off('exit', kill);
    },
  };
}
