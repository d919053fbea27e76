'use strict';
// The compose stack, run the way docker-compose.yml is meant to be run, on this machine's loopback:
// a generated copy of the file where every service uses the host's network on free 127.0.0.1
// ports (this machine may send traffic to loopback only; the real file keeps its networks and
// published ports) and nothing else changes: images pinned by digest (stand-ins here), the
// hardening, .env.secrets written by scripts/container/compose-secrets.sh with a database and a
// Redis password. Checks that the real file parses, that `migrate` exits 0, that the service
// becomes healthy, and that a developer added as the file's header says receives a sign-in code
// at the mail catcher and signs in with it.
// Compose: v2 (`docker compose`) when the client has it, else Debian bookworm's docker-compose 1.29.
const { execFileSync } = require('node:child_process');
const { mkdtempSync, writeFileSync, copyFileSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');
const { parse, stringify } = require('yaml');
const { DOCKER, docker, freePort, check, waitHealthy, logsOf, bffSignIn, codeIn, log, sleep } = require('./lib');

const ROOT = join(__dirname, '../..');

function composeCommand() {
  try {
    execFileSync(DOCKER, ['compose', 'version'], { stdio: 'ignore' });
    return [DOCKER, 'compose'];
  } catch {
    return ['docker-compose'];
  }
}
const COMPOSE = composeCommand();

function compose(dir, project, ...args) {
  const [cmd, ...pre] = COMPOSE;
  return execFileSync(cmd, [...pre, '-p', project, '-f', join(dir, 'docker-compose.yml'), ...args], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}

function containerOf(project, service) {
  return docker(
    ...['ps', '-aq', '--filter', `label=com.docker.compose.project=${project}`],
    ...['--filter', `label=com.docker.compose.service=${service}`],
  ).split('\n')[0];
}

/** The mailpit API (GET /api/v1/messages, /api/v1/message/{ID}): the newest code mailed to `to`. */
async function mailpitCode(uiOrigin, to) {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const list = await (await fetch(`${uiOrigin}/api/v1/messages`)).json();
    const hit = list.messages.find((m) => m.To.some((a) => a.Address.toLowerCase() === to));
    if (hit) {
      const message = await (await fetch(`${uiOrigin}/api/v1/message/${hit.ID}`)).json();
      const code = codeIn(message.Text);
      if (code) return code;
    }
    await sleep(200);
  }
  throw new Error(`no sign-in code for ${to} at the mail catcher within 15 s`);
}

async function main() {
  const t0 = Date.now();
  const version = execFileSync(
    COMPOSE[0],
    [...COMPOSE.slice(1), 'version', ...(COMPOSE.length > 1 ? [] : ['--short'])],
    {
      encoding: 'utf8',
    },
  ).trim();
  log(`compose test with ${COMPOSE.join(' ')} ${version.split('\n')[0]}`);
  const id = randomBytes(4).toString('hex');
  const project = `svcauthct${id}`;

  // The real file, as a user runs it (with a placeholder .env.secrets, which must exist first).
  const real = mkdtempSync(join(tmpdir(), 'svc-auth-compose-real-'));
  const dir = mkdtempSync(join(tmpdir(), 'svc-auth-compose-'));
  let up = false;
  try {
    copyFileSync(join(ROOT, 'docker-compose.yml'), join(real, 'docker-compose.yml'));
    writeFileSync(join(real, '.env.secrets'), '');
    compose(real, project, 'config', '-q');

    const ports = { pg: await freePort(), redis: await freePort(), smtp: await freePort(), ui: await freePort() };
    ports.svc = await freePort();
    const file = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'));
    const s = file.services;
    for (const service of Object.values(s)) {
      service.network_mode = 'host';
      delete service.ports;
      delete service.build; // built by scripts/container-test.sh from the same Dockerfile
    }
    s.postgres.environment = { ...s.postgres.environment, PGPORT: String(ports.pg) };
    s.postgres.command = ['postgres', '-c', 'listen_addresses=127.0.0.1'];
    check(s.redis.command[2].startsWith('exec redis-server '), 'the redis command changed shape');
    s.redis.command[2] += ` --bind 127.0.0.1 --port ${ports.redis}`;
    s.redis.healthcheck.test = s.redis.healthcheck.test.map((a) =>
      a.replace('redis-cli', `redis-cli -p ${ports.redis}`),
    );
    s.mail.environment = {
      ...s.mail.environment,
      MP_SMTP_BIND_ADDR: `127.0.0.1:${ports.smtp}`,
      MP_UI_BIND_ADDR: `127.0.0.1:${ports.ui}`,
    };
    const authOrigin = `http://localhost:${ports.svc}`;
    const consoleOrigin = `http://127.0.0.1:${ports.svc}`;
    for (const name of ['migrate', 'svc-auth']) {
      s[name].environment = {
        ...s[name].environment,
        HOST: '127.0.0.1',
        PORT: String(ports.svc),
        AUTH_ORIGIN: authOrigin,
        CONSOLE_ORIGIN: consoleOrigin,
        AUTH_INTERNAL_URL: authOrigin,
        SMTP_URL: `smtp://127.0.0.1:${ports.smtp}`,
      };
    }
    s['svc-auth'].restart = 'no'; // a failing start fails the test instead of looping
    // Every string quoted: Compose 1.29 reads YAML 1.1, where a bare `no` is false.
    writeFileSync(
      join(dir, 'docker-compose.yml'),
      stringify(file, { aliasDuplicateObjects: false, defaultStringType: 'QUOTE_DOUBLE', defaultKeyType: 'PLAIN' }),
    );
    execFileSync('sh', [join(ROOT, 'scripts/container/compose-secrets.sh'), join(dir, '.env.secrets')], {
      env: {
        ...process.env,
        DOCKER,
        POSTGRES_ADDRESS: `127.0.0.1:${ports.pg}`,
        REDIS_ADDRESS: `127.0.0.1:${ports.redis}`,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const secrets = readFileSync(join(dir, '.env.secrets'), 'utf8');
    check(/^POSTGRES_PASSWORD=[0-9a-f]{64}$/m.test(secrets), 'no generated PostgreSQL password');
    check(/^REDIS_URL=redis:\/\/:[0-9a-f]{64}@/m.test(secrets), 'no generated Redis password');

    log(
      `compose up: postgres :${ports.pg}, redis :${ports.redis}, mail :${ports.smtp}/:${ports.ui}, svc-auth :${ports.svc}`,
    );
    up = true;
    const upStarted = Date.now();
    compose(dir, project, 'up', '-d');
    const migrate = containerOf(project, 'migrate');
    const migrateExit = docker('inspect', '--format', '{{.State.Status}} {{.State.ExitCode}}', migrate);
    check(migrateExit === 'exited 0', `migrate: ${migrateExit}\n${logsOf(migrate)}`);
    const svc = containerOf(project, 'svc-auth');
    const { healthyMs } = await waitHealthy(svc, `${consoleOrigin}/readyz`);
    const readOnly = docker(
      'inspect',
      '--format',
      '{{.HostConfig.ReadonlyRootfs}} {{.HostConfig.CapDrop}} {{.HostConfig.Memory}}',
      svc,
    );
    check(readOnly === 'true [ALL] 268435456', `svc-auth runs without its hardening: ${readOnly}`);

    // As the header says: a tenant and a member, with the one-shot service's image and settings.
    const email = `dev-${id}@compose.example`;
    const run = (...args) =>
      compose(dir, project, 'run', '--rm', '-T', 'migrate', 'node', 'dist/src/cli/admin.js', ...args);
    run('tenant', 'create', '--id', 'acme', '--name', 'Acme');
    run('membership', 'add', '--tenant', 'acme', '--email', email, '--role', 'owner');
    await bffSignIn({ authOrigin, consoleOrigin }, email, (to) => mailpitCode(`http://127.0.0.1:${ports.ui}`, to));
    log('compose test PASSED:');
    log(
      `  migrate exited 0; svc-auth healthy ${((Date.now() - upStarted) / 1000).toFixed(1)} s after up (${(healthyMs / 1000).toFixed(1)} s after migrate)`,
    );
    log(`  the sign-in code for ${email} arrived at the mail catcher; the console sign-in completed`);
    log(`  ${((Date.now() - t0) / 1000).toFixed(0)} s in all`);
  } catch (err) {
    if (up) {
      for (const service of ['postgres', 'redis', 'mail', 'migrate', 'svc-auth']) {
        const c = containerOf(project, service);
        if (c) process.stderr.write(`--- ${service}:\n${logsOf(c)}\n`);
      }
    }
    throw err;
  } finally {
    if (up) {
      try {
        compose(dir, project, 'down', '-v', '--remove-orphans', '-t', '2');
      } catch (err) {
        process.stderr.write(`compose down: ${err.stderr ?? err}\n`);
      }
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(real, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`container-test: compose test FAILED: ${err.stderr ?? ''}${err.stack ?? err}\n`);
  process.exit(1);
});
