import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ADMIN_COMMANDS, runAdmin } from '../../src/cli/admin-runner';
import { ConfigError, loadConfig } from '../../src/config/config';
import { probeUrl } from '../../src/health/container-probe';

const ROOT = join(__dirname, '../..');
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

/**
 * `docker run --env-file` semantics: one NAME=value per line, `#` lines and blank lines skipped,
 * the value is everything after the first `=` taken literally (no quote or comment handling).
 */
function parseDockerEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.replace(/^\s+/, '');
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`not NAME=value: ${line}`);
    env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return env;
}

/** Every variable name the configuration reads: its quoted upper-case names, and NAME_FILE. */
function knownVariables(): Set<string> {
  const names = new Set<string>();
  for (const m of read('src/config/config.ts').matchAll(/'([A-Z][A-Z0-9_]{2,})'/g)) names.add(m[1]!);
  for (const n of [...names]) names.add(`${n}_FILE`);
  return names;
}

/** Variables that Node.js itself reads, not the service's configuration. */
const NODE_RUNTIME_VARIABLES = new Set(['NODE_EXTRA_CA_CERTS']);

interface ComposeService {
  image?: string;
  build?: unknown;
  user?: string;
  command?: string[];
  environment?: Record<string, string>;
  env_file?: string;
  ports?: string[];
  volumes?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[] };
  read_only?: boolean;
  tmpfs?: string[];
  cap_drop?: string[];
  security_opt?: string[];
  mem_limit?: string;
}

/**
 * Runs scripts/container/compose-secrets.sh with a stand-in `docker` that answers the image's
 * generate-secrets --env-file, and returns the .env.secrets it writes.
 */
async function composeSecrets(): Promise<{ env: Record<string, string>; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'compose-secrets-'));
  writeFileSync(join(dir, 'keys'), (await runAdmin(['generate-secrets', '--env-file'], {})).stdout);
  writeFileSync(join(dir, 'docker'), `#!/bin/sh\ncat '${join(dir, 'keys')}'\n`);
  chmodSync(join(dir, 'docker'), 0o755);
  execFileSync('sh', [join(ROOT, 'scripts/container/compose-secrets.sh'), join(dir, '.env.secrets')], {
    env: { ...process.env, DOCKER: join(dir, 'docker') },
    stdio: 'ignore',
  });
  return { env: parseDockerEnvFile(readFileSync(join(dir, '.env.secrets'), 'utf8')), dir };
}

describe('deployment kit', () => {
  const compose = parse(read('docker-compose.yml')) as { services: Record<string, ComposeService> };
  const services = compose.services;

  it('.env.example is usable by docker run --env-file: only the four secrets are left to fill', async () => {
    const env = parseDockerEnvFile(read('.env.example'));
    for (const [name, value] of Object.entries(env)) {
      expect([name, value]).toEqual([name, value.trim()]);
      expect([name, value.includes('#')]).toEqual([name, false]);
    }
    let problems: readonly string[] = [];
    try {
      loadConfig(env);
    } catch (err) {
      problems = (err as ConfigError).problems;
    }
    expect(problems).toEqual([
      'CONSOLE_CLIENT_SECRET: required',
      'CONSOLE_SESSION_KEY: required',
      'PRIVACY_KEY: required',
      'SIGNING_KEYS: required',
    ]);
    const secrets = parseDockerEnvFile((await runAdmin(['generate-secrets', '--env-file'], {})).stdout);
    const config = loadConfig({ ...env, ...secrets });
    expect(config.metricsHost).toBe('127.0.0.1');
    expect(config.nodeEnv).toBe('production');
  });

  it('.env.example and the compose file name only variables the service knows', () => {
    const known = knownVariables();
    const named = [
      ...Object.keys(parseDockerEnvFile(read('.env.example'))),
      ...[...read('.env.example').matchAll(/^# ([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!),
      ...Object.keys(services['svc-auth']?.environment ?? {}),
      ...Object.keys(services['migrate']?.environment ?? {}),
    ];
    expect(named.filter((n) => !known.has(n) && !NODE_RUNTIME_VARIABLES.has(n))).toEqual([]);
  });

  it('the compose file has the service, PostgreSQL, Redis without eviction and with an AOF, a mail catcher with a UI, and a one-shot migrate-and-seed', () => {
    expect(Object.keys(services).sort()).toEqual(['mail', 'migrate', 'postgres', 'redis', 'svc-auth']);
    const redis = services['redis']?.command?.join(' ') ?? '';
    expect(redis).toContain('--maxmemory-policy noeviction');
    expect(redis).toContain('--appendonly yes');
    expect(services['mail']?.image).toMatch(/^axllent\/mailpit:/);
    expect(services['mail']?.ports).toContain('127.0.0.1:8025:8025');
    expect(services['svc-auth']?.depends_on?.['migrate']).toEqual({ condition: 'service_completed_successfully' });
    expect(services['svc-auth']?.environment?.['SMTP_URL']).toBe('smtp://mail:1025');
  });

  it('.env.secrets from compose-secrets.sh completes the configuration with a generated database and Redis password', async () => {
    const { env, dir } = await composeSecrets();
    try {
      expect(env['POSTGRES_PASSWORD']).toMatch(/^[0-9a-f]{64}$/);
      expect(env['REDIS_PASSWORD']).toMatch(/^[0-9a-f]{64}$/);
      expect(env['DATABASE_URL']).toBe(`postgres://svc_auth:${env['POSTGRES_PASSWORD']}@postgres:5432/svc_auth`);
      expect(env['REDIS_URL']).toBe(`redis://:${env['REDIS_PASSWORD']}@redis:6379`);
      // The mail catcher's STARTTLS certificate, for the names the service connects to.
      expect(readFileSync(join(dir, 'mail-tls/cert.pem'), 'utf8')).toMatch(/^-----BEGIN CERTIFICATE-----/);
      const second = await composeSecrets(); // a new file: new passwords
      expect(second.env['POSTGRES_PASSWORD']).not.toBe(env['POSTGRES_PASSWORD']);
      rmSync(second.dir, { recursive: true, force: true });
      for (const name of ['migrate', 'svc-auth']) {
        const config = loadConfig({ ...services[name]?.environment, ...env });
        expect(config.nodeEnv).toBe('production');
      }
      // No password is written into the compose file itself.
      expect(read('docker-compose.yml')).not.toMatch(/PASSWORD: |svc_auth:svc_auth@|_URL: (postgres|redis):/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the compose file is for local and single-host use, runs with Compose 1.29 and v2, pins its images and hardens every container', () => {
    const text = read('docker-compose.yml');
    expect(text.split('\n')[0]).toMatch(/local and single-host use/);
    // Compose 1.29 (Debian bookworm) rejects a top-level name:.
    expect(Object.keys(parse(text) as object)).not.toContain('name');
    // .env.secrets before any compose command: older releases refuse every command without it.
    const header = text.slice(0, text.indexOf('\nx-service-env'));
    const commands = header.split('\n').filter((l) => /^# {3}\S/.test(l));
    expect(commands[0]).toMatch(/^# {3}docker build /);
    expect(commands[1]).toMatch(/^# {3}sh scripts\/container\/compose-secrets\.sh/);
    const firstCompose = commands.findIndex((c) => /docker compose /.test(c));
    expect(firstCompose).toBe(2);
    expect(commands.filter((c) => /docker compose /.test(c))).toHaveLength(3);
    for (const [name, s] of Object.entries(services)) {
      if (name !== 'migrate' && name !== 'svc-auth')
        expect([name, s.image]).toEqual([name, expect.stringMatching(/@sha256:[0-9a-f]{64}$/)]);
      expect([name, s.read_only, s.cap_drop, s.security_opt]).toEqual([
        name,
        true,
        ['ALL'],
        ['no-new-privileges:true'],
      ]);
      expect([name, s.mem_limit]).toEqual([name, expect.stringMatching(/^\d+m$/)]);
    }
    expect(services['postgres']?.user).toBe('postgres');
    expect(services['redis']?.user).toBe('redis');
    expect(services['redis']?.command?.join(' ')).toContain('--requirepass "$$REDIS_PASSWORD"');
    for (const name of ['postgres', 'redis', 'migrate', 'svc-auth'])
      expect([name, services[name]?.env_file]).toEqual([name, '.env.secrets']);
    for (const name of ['migrate', 'svc-auth']) expect(services[name]?.tmpfs).toEqual(['/tmp']);
  });

  it('the image is built from a base pinned by digest, installs production dependencies without their scripts, takes a CA only as a build secret, and runs under an init', () => {
    const dockerfile = read('Dockerfile');
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-bookworm-slim@sha256:[0-9a-f]{64}$/m);
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms).toEqual(['${NODE_IMAGE}', '${NODE_IMAGE}', '${NODE_IMAGE}']);
    expect(dockerfile).toMatch(/^ {4}npm ci --omit=dev --ignore-scripts /m);
    const npmCi = [...dockerfile.matchAll(/^RUN (.*\\\n)*.*npm ci/gm)].map((m) => m[0]);
    expect(npmCi).toHaveLength(2);
    for (const run of npmCi) expect(run).toMatch(/^RUN --mount=type=secret,id=npm_ca,required=false /);
    expect(dockerfile).not.toMatch(/^(COPY|ADD|ENV|ARG) .*(npm_ca|\.crt|\.pem|cafile)/im);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
  });

  it('every command the compose file and the image run exists in the image', () => {
    const commands = Object.values(services).flatMap((s) => (s.command ? [s.command.join(' ')] : []));
    const dockerfile = read('Dockerfile');
    const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)?.[1];
    commands.push((JSON.parse(cmd ?? '[]') as string[]).join(' '));
    const invocations = commands
      .filter((c) => c.includes('node '))
      .flatMap((c) =>
        c.split('&&').map((part) =>
          part
            .replace(/^.*?node /, '')
            .replace(/["\]]/g, '')
            .trim(),
        ),
      );
    expect(invocations.length).toBeGreaterThanOrEqual(4);
    for (const inv of invocations) {
      const [script, ...args] = inv.split(' ');
      // dist/src/x.js is compiled from src/x.ts.
      expect(existsSync(join(ROOT, (script ?? '').replace(/^dist\//, '').replace(/\.js$/, '.ts')))).toBe(true);
      if (script === 'dist/src/cli/admin.js') expect(ADMIN_COMMANDS.map((c) => c.name)).toContain(args.join(' '));
    }
  });

  it('the image checks readiness, carries OCI labels and runs as non-root', () => {
    const dockerfile = read('Dockerfile');
    // The probe (src/health/container-probe.ts) asks /readyz where HOST and PORT say.
    expect(dockerfile).toMatch(/^HEALTHCHECK .*CMD \["node", "dist\/src\/health\/container-probe\.js"\]$/m);
    expect(probeUrl({})).toMatch(/\/readyz$/);
    expect(dockerfile).toMatch(/org\.opencontainers\.image\.title="svc-auth"/);
    expect(dockerfile).toMatch(/^USER node$/m);
  });
  it('the build context holds only what the Dockerfile copies, never secrets, and needs no frontend image', () => {
    const ignore = read('.dockerignore')
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'));
    // Everything is excluded, then only the copied sources come back: node_modules, .git, dist
    // and every .env file stay out of the build context.
    expect(ignore[0]).toBe('*');
    const copied = [...read('Dockerfile').matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(' '));
    expect(ignore.slice(1).sort()).toEqual([...new Set(copied)].map((f) => `!${f}`).sort());
    // A syntax directive makes BuildKit fetch a frontend image from a registry.
    expect(read('Dockerfile')).not.toMatch(/^# *syntax=/m);
    expect(read('.gitignore').split('\n')).toEqual(expect.arrayContaining(['.env.secrets', '.env.local']));
  });

  it("the compose file's PostgreSQL health check asks over TCP, which the init server does not listen on", () => {
    expect(services['postgres']?.healthcheck?.test).toEqual(expect.arrayContaining(['pg_isready', '-h', '127.0.0.1']));
  });

  it('the image, npm start and the demo run with the same V8 heap flags, the ones the bench measures', () => {
    const heapFlags = (line: string | undefined): string[] =>
      [...(line ?? '').matchAll(/--max-[\w-]+=\d+/g)].map((m) => m[0]);
    const start = heapFlags((JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start);
    expect(start).toEqual(['--max-old-space-size=128', '--max-semi-space-size=16']);
    expect(heapFlags(/^ENV NODE_OPTIONS=.*$/m.exec(read('Dockerfile'))?.[0])).toEqual(start);
    expect(heapFlags(/^node .*dist\/src\/main\.js.*$/m.exec(read('scripts/demo.sh'))?.[0])).toEqual(start);
  });
});
