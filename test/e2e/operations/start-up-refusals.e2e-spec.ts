import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { createSuiteDatabase, dropSuiteDatabase } from '../../support/database';
import { freePort, testEnv } from '../../support/test-app';

const ROOT = join(__dirname, '../../..');
const PASSWORD = 'S3cretPw';

/**
 * docs/operations.md, Configuration: a value the service cannot use stops it with status 1 and a
 * message naming the variable, never its value. The built process is run, since the libraries'
 * own error handlers printed the whole URL, password included, to stderr.
 */
describe('the service refusing to start', () => {
  let db: string;
  let port: number;
  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist/src/main.js'))) throw new Error('build first: npm run build (npm test does)');
    [db, port] = await Promise.all([createSuiteDatabase(), freePort()]);
    execFileSync('node', [join(ROOT, 'dist/src/cli/admin.js'), 'seed-control-plane'], {
      env: { ...process.env, ...testEnv(port, db, 'smtp://127.0.0.1:9') },
      stdio: 'ignore',
    });
  });
  afterAll(() => dropSuiteDatabase(db));

  /** Runs the service to its exit; one that starts after all is stopped and reported as such. */
  function start(overrides: Record<string, string>): { status: number | null; stderr: string; stdout: string } {
    const env = { ...process.env, ...testEnv(port, db, 'smtp://127.0.0.1:9', overrides) };
    const run = spawnSync('node', [join(ROOT, 'dist/src/main.js')], { env, encoding: 'utf8', timeout: 15_000 });
    return { status: run.status, stderr: run.stderr, stdout: run.stdout };
  }

  it.each([
    ['REDIS_URL', `redis://:${PASSWORD}@127.0.0.1:notaport`],
    ['REDIS_URL', `redis://:${PASSWORD}@127.0.0.1:6379/abc`],
    ['DATABASE_URL', `postgres://postgres:${PASSWORD}@127.0.0.1:notaport/auth`],
    // TypeORM %-decodes the password itself, and a stray % threw "URI malformed" from inside it.
    ['DATABASE_URL', `postgres://postgres:${PASSWORD}%zz@127.0.0.1:5432/auth`],
    // An unescaped @ and / in a password: the part after the first @ became the host name.
    ['DATABASE_URL', `postgres://postgres:pw@${PASSWORD}/x@127.0.0.1:5432/auth`],
    ['SMTP_URL', `smtp://svc:${PASSWORD}@127.0.0.1:notaport`],
    ['METRICS_HOST', 'metrics.invalid'],
  ])('%s=%s: status 1, the variable named, the password nowhere', (name, value) => {
    const { status, stderr } = start({ [name]: value, METRICS_PORT: '0' });
    expect(status).toBe(1);
    expect(stderr).toMatch(new RegExp(`^svc-auth failed to start: invalid configuration: ${name}: [^\n]+\n$`));
    expect(stderr).not.toContain(PASSWORD);
  });

  it('several problems: one line naming each, so the line a log pipeline keeps says what to fix', () => {
    const { status, stderr } = start({ PRIVACY_KEY: 'short', LOG_LEVEL: 'verbose' });
    expect(status).toBe(1);
    expect(stderr).toBe(
      'svc-auth failed to start: invalid configuration: PRIVACY_KEY: must hold at least 32 bytes; ' +
        'LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent\n',
    );
  });

  it('PostgreSQL unreachable: status 1 and one line naming DATABASE_URL, the password nowhere', async () => {
    const closedPort = await freePort();
    const { status, stderr, stdout } = start({
      DATABASE_URL: `postgres://postgres:${PASSWORD}@127.0.0.1:${closedPort}/${db}`,
    });
    expect(status).toBe(1);
    expect(stderr).toBe(
      `svc-auth failed to start: DATABASE_URL: PostgreSQL cannot be reached or refused the connection (connect ECONNREFUSED 127.0.0.1:${closedPort})\n`,
    );
    expect(stdout).not.toContain(PASSWORD);
    // stdout holds JSON lines only (docs/operations.md, Logs), not Nest's coloured dump.
    for (const line of stdout.split('\n').filter(Boolean)) expect(() => JSON.parse(line) as unknown).not.toThrow();
  });

  it('REDIS_URL naming a database the server does not have: status 1, not database 0 in its place', () => {
    const { status, stderr } = start({ REDIS_URL: 'redis://127.0.0.1:6379/99' });
    expect(status).toBe(1);
    expect(stderr).toContain('svc-auth failed to start: REDIS_URL: Redis refuses database 99');
  });

  it('PORT in use: status 1, one line naming PORT and HOST', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const takenPort = String((taken.address() as { port: number }).port);
      const { status, stderr } = start({ PORT: takenPort, HOST: '127.0.0.1' });
      expect(status).toBe(1);
      expect(stderr).toBe(
        `svc-auth failed to start: HOST/PORT: the service cannot listen on 127.0.0.1:${takenPort} (EADDRINUSE)\n`,
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('METRICS_PORT in use: status 1, naming the metrics variables', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const metricsPort = String((taken.address() as { port: number }).port);
      const { status, stderr } = start({ METRICS_PORT: metricsPort });
      expect(status).toBe(1);
      expect(stderr).toContain(
        'svc-auth failed to start: METRICS_HOST/METRICS_PORT: the metrics listener cannot listen there (EADDRINUSE)',
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
