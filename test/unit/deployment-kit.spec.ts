import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ADMIN_COMMANDS, runAdmin } from '../../src/cli/admin-runner';
import { ConfigError, loadConfig } from '../../src/config/config';

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

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  env_file?: string;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[] };
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
    expect(named.filter((n) => !known.has(n))).toEqual([]);
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
    // The configuration the compose file gives the service, with generated secrets, is valid.
    expect(() =>
      loadConfig({
        ...services['svc-auth']?.environment,
        ...parseDockerEnvFile(`CONSOLE_CLIENT_SECRET=${'s'.repeat(40)}\nCONSOLE_SESSION_KEY=${'A'.repeat(43)}`),
        PRIVACY_KEY: 'p'.repeat(43),
        SIGNING_KEYS: '{"keys":[]}',
      }),
    ).toThrow(/SIGNING_KEYS/);
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
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\/readyz/m);
    expect(dockerfile).not.toMatch(/^HEALTHCHECK .*\/healthz/m);
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
