'use strict';
// The image, run as production runs it: the admin CLI's release step (migrate, seed) against this
// machine's PostgreSQL (a database of its own) and Redis (a key prefix of its own), then the
// service hardened (read-only root, /tmp on tmpfs, no capabilities, no-new-privileges, 256 MB),
// listening on 127.0.0.1 with the host's network. Once its HEALTHCHECK says healthy: a guest is
// created and refreshed, a developer signs in to the console through the BFF in the container
// (the code read from an SMTP catcher here), and the image is inspected: uid 1000, no dev
// dependency, no .env file, no build secret, and `docker stop` ends it within a second.
// Run by scripts/container-test.sh, which owns the daemon (DOCKER_HOST).
const { execFileSync } = require('node:child_process');
const { mkdtempSync, writeFileSync, rmSync, readFileSync, chmodSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');
const { Client } = require('pg');
const Redis = require('ioredis');
const { SMTPServer } = require('smtp-server');
const { docker, freePort, check, waitHealthy, logsOf, guestAndRefresh, bffSignIn, codeIn, log } = require('./lib');

const ROOT = join(__dirname, '../..');
const IMAGE = 'svc-auth:local';
const PG = 'postgres://postgres@127.0.0.1:5432';
const HARDENED = [
  '--network',
  'host',
  '--read-only',
  '--tmpfs',
  '/tmp',
  '--cap-drop',
  'ALL',
  '--security-opt',
  'no-new-privileges',
  '--memory',
  '256m',
];

/**
 * An SMTP catcher on loopback that offers STARTTLS with a self-signed certificate (in production
 * the service sends a code over smtp:// only after STARTTLS); `code(to)` resolves with the next
 * code mailed to `to`.
 */
async function startSmtp(dir) {
  const cert = join(dir, 'mail-cert.pem');
  const key = join(dir, 'mail-key.pem');
  execFileSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1'],
      ...['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert],
    ],
    { stdio: 'ignore' },
  );
  chmodSync(cert, 0o644);
  const waiters = new Map();
  const mailed = new Map();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH'],
    key: readFileSync(key),
    cert: readFileSync(cert),
    logger: false,
    onData(stream, session, cb) {
      const chunks = [];
      stream.on('data', (c) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('latin1');
        const code = codeIn(raw.slice(raw.indexOf('\r\n\r\n')));
        const to = session.envelope.rcptTo[0].address.toLowerCase();
        if (waiters.has(to)) waiters.get(to)(code);
        else mailed.set(to, code);
        waiters.delete(to);
        cb();
      });
    },
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `smtp://127.0.0.1:${server.server.address().port}`,
    cert,
    code: (to) =>
      mailed.has(to)
        ? Promise.resolve(mailed.get(to))
        : new Promise((resolve, reject) => {
            waiters.set(to, resolve);
            setTimeout(() => reject(new Error(`no code mailed to ${to} within 15 s`)), 15_000).unref();
          }),
    close: () => new Promise((r) => server.close(r)),
  };
}

async function main() {
  const id = randomBytes(4).toString('hex');
  const db = `svc_auth_container_${id}`;
  const prefix = `container-${id}:`;
  const name = `svc-auth-test-${id}`;
  const dir = mkdtempSync(join(tmpdir(), 'svc-auth-container-'));
  const pg = new Client({ connectionString: `${PG}/postgres` });
  await pg.connect();
  await pg.query(`CREATE DATABASE ${db}`);
  const smtp = await startSmtp(dir);
  let started = false;
  try {
    const port = await freePort();
    const authOrigin = `http://localhost:${port}`;
    const consoleOrigin = `http://127.0.0.1:${port}`;
    const secrets = docker(
      'run',
      '--rm',
      '--network',
      'none',
      IMAGE,
      'node',
      'dist/src/cli/admin.js',
      'generate-secrets',
      '--env-file',
    );
    const envFile = join(dir, 'env');
    writeFileSync(
      envFile,
      [
        secrets,
        'HOST=127.0.0.1',
        `PORT=${port}`,
        `AUTH_ORIGIN=${authOrigin}`,
        `CONSOLE_ORIGIN=${consoleOrigin}`,
        `AUTH_INTERNAL_URL=${authOrigin}`,
        `DATABASE_URL=${PG}/${db}`,
        'REDIS_URL=redis://127.0.0.1:6379',
        `REDIS_KEY_PREFIX=${prefix}`,
        'CONSOLE_CLIENT_ID=cli_console',
        'MAIL_TRANSPORT=smtp',
        `SMTP_URL=${smtp.url}`,
        'MAIL_FROM=svc-auth@localhost',
        'LOG_LEVEL=warn',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    const admin = (...args) =>
      docker('run', '--rm', ...HARDENED, '--env-file', envFile, IMAGE, 'node', 'dist/src/cli/admin.js', ...args);

    log('release step with the image CLI: migrate, seed-control-plane, a tenant, a game client, a member');
    admin('migrate');
    admin('seed-control-plane');
    admin('tenant', 'create', '--id', 'ctest', '--name', 'Container test');
    admin(
      ...['client', 'create', '--tenant', 'ctest', '--id', 'cli_ctest_game', '--name', 'Game', '--type', 'native'],
      ...['--scopes', 'openid offline_access', '--redirect-uri', 'http://127.0.0.1/cb'],
    );
    const email = `dev-${id}@container.example`;
    admin('membership', 'add', '--tenant', 'ctest', '--email', email, '--role', 'owner');

    log(`starting ${IMAGE} hardened: ${HARDENED.join(' ')}, HOST=127.0.0.1, PORT=${port}`);
    const mailCa = ['-v', `${smtp.cert}:/run/mail-ca.pem:ro`, '-e', 'NODE_EXTRA_CA_CERTS=/run/mail-ca.pem'];
    docker('run', '-d', '--name', name, ...HARDENED, '--env-file', envFile, ...mailCa, IMAGE);
    started = true;
    const { healthyMs, readyMs } = await waitHealthy(name, `${consoleOrigin}/readyz`);

    const guest = await guestAndRefresh(authOrigin, 'ctest', 'cli_ctest_game');
    log(`guest ${guest.userId} created and refreshed`);
    await bffSignIn({ authOrigin, consoleOrigin }, email, smtp.code);
    log(`${email} signed in to the console through the BFF (authorize, emailed code, confirm, callback, current)`);

    const pid = docker('inspect', '--format', '{{.State.Pid}}', name);
    const uids = /^Uid:\s+(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1].split(/\s+/);
    check(
      uids.every((u) => u === '1000'),
      `the service runs as uids ${uids.join(' ')}, not 1000`,
    );
    const memory = docker('stats', '--no-stream', '--format', '{{.MemUsage}}', name);

    // Nothing that only building needs: every package the lockfile marks dev is absent.
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
    const devOnly = Object.entries(lock.packages)
      .filter(([path, p]) => p.dev && /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path))
      .map(([path]) => path);
    const inImage = docker(
      ...['run', '--rm', '--network', 'none', IMAGE, 'node', '-e'],
      'const fs=require("fs");for(const p of process.argv.slice(1))if(fs.existsSync("/app/"+p))console.log(p)',
      ...devOnly,
    );
    check(inImage === '', `dev dependencies in the image: ${inImage.split('\n').join(', ')}`);
    check(
      devOnly.includes('node_modules/typescript') && devOnly.includes('node_modules/jest'),
      'the dev list is wrong',
    );
    const envFiles = docker(
      ...['run', '--rm', '--network', 'none', '--user', '0', IMAGE, 'sh', '-c'],
      "find / -xdev \\( -path /proc -o -path /sys \\) -prune -o -name '.env*' -print; ls -A /run/secrets 2>/dev/null; true",
    );
    check(envFiles === '', `.env files or build secrets in the image: ${envFiles}`);
    const history = docker('history', '--no-trunc', '--format', '{{.CreatedBy}}', IMAGE);
    check(!history.includes('BEGIN CERTIFICATE'), 'a certificate is in the image history');

    const t0 = Date.now();
    docker('stop', name);
    const stopMs = Date.now() - t0;
    const exit = docker('inspect', '--format', '{{.State.ExitCode}}', name);
    check(stopMs < 1000, `docker stop took ${stopMs} ms (SIGTERM not handled?)`);

    const sizeMb = Number(docker('image', 'inspect', '--format', '{{.Size}}', IMAGE)) / 1e6;
    log('image test PASSED:');
    log(
      `  image size ${sizeMb.toFixed(0)} MB (stand-in base node:24-bookworm-slim: ${(Number(docker('image', 'inspect', '--format', '{{.Size}}', 'node:24-bookworm-slim')) / 1e6).toFixed(0)} MB)`,
    );
    log(
      `  time to healthy ${(healthyMs / 1000).toFixed(1)} s (HEALTHCHECK; /readyz answered 200 after ${(readyMs / 1000).toFixed(1)} s)`,
    );
    log(`  memory after the flows ${memory}; runs as uid 1000; no dev dependency, .env file or build secret`);
    log(`  docker stop: ${stopMs} ms, exit code ${exit}`);
  } catch (err) {
    if (started) process.stderr.write(`--- ${name} logs:\n${logsOf(name)}\n`);
    throw err;
  } finally {
    if (started) {
      try {
        docker('rm', '-f', name);
      } catch {
        /* the daemon goes away with its containers */
      }
    }
    await smtp.close();
    await pg.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await pg.end();
    const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
    await redis.connect();
    for (let cursor = '0'; ;) {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length) await redis.del(...keys);
      if ((cursor = next) === '0') break;
    }
    redis.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`container-test: image test FAILED: ${err.stack ?? err}\n`);
  process.exit(1);
});
