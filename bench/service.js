'use strict';
// Starts the built service for the benchmark and the soak: its own database, secrets, an SMTP
// catcher, rate limits raised by configuration, pinned to CPU 0 (the load generator takes CPU 1).
// Every server runs on the Node.js that runs this script (process.execPath: the pinned Node 24).
const { execFileSync, spawn } = require('node:child_process');
const { createHash, randomBytes, randomInt } = require('node:crypto');
const { readFileSync, existsSync } = require('node:fs');
const { cpus } = require('node:os');
const { join } = require('node:path');
const { SMTPServer } = require('smtp-server');
const { Client } = require('pg');

const ROOT = join(__dirname, '..');
// The heap flags of `npm start` (and of the Dockerfile), so the bench measures what production runs.
const HEAP_FLAGS = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.start.match(
  /--max-[\w-]+=\d+/g,
);
const DB = 'svc_auth_bench';
const PG = 'postgres://postgres@127.0.0.1:5432';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function log(msg) {
  process.stderr.write(`bench: ${msg}\n`);
}

async function startSmtp() {
  const codes = new Map();
  const waiters = new Map();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    // The code is read from the raw message (a short 7-bit text part): a MIME parser here would
    // spend the load generator's CPU, not the service's.
    onData(stream, session, cb) {
      const chunks = [];
      stream.on('data', (c) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('latin1');
        const match = /\b(\d{6})\b/.exec(raw.slice(raw.indexOf('\r\n\r\n')));
        if (!match) return cb(new Error('no code in the message'));
        const to = session.envelope.rcptTo[0].address.toLowerCase();
        const w = waiters.get(to);
        if (w) {
          waiters.delete(to);
          w(match[1]);
        } else codes.set(to, match[1]);
        cb();
      });
    },
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `smtp://127.0.0.1:${server.server.address().port}`,
    code: (to) =>
      codes.has(to)
        ? Promise.resolve(codes.get(to)).finally(() => codes.delete(to))
        : new Promise((resolve) => waiters.set(to, resolve)),
    close: () => new Promise((r) => server.close(r)),
  };
}

/** An empty database `name` (dropped first if a run left it); returns its URL. */
async function prepareDatabase(name = DB) {
  const c = new Client({ connectionString: `${PG}/postgres` });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  return `${PG}/${name}`;
}

function admin(env, ...args) {
  return JSON.parse(
    execFileSync(process.execPath, [join(ROOT, 'dist/src/cli/admin.js'), ...args], { env, encoding: 'utf8' }),
  );
}

/** Server CPU time in seconds (user + system), from /proc. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function peakRssMb(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]) / 1024;
}

async function waitReady(url, host) {
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(url, { headers: { host } });
      if (r.ok) return;
    } catch {
      /* not yet */
    }
    await sleep(100);
  }
  throw new Error('service did not become ready');
}

function cookieOf(res, name) {
  const all = res.headers.getSetCookie ? res.headers.getSetCookie() : [];
  const c = all.find((x) => x.startsWith(`${name}=`));
  return c ? c.split(';')[0] : undefined;
}

// One complete console sign-in at the API: authorize → email code over SMTP → confirm → token.
async function apiSignIn(ctx, email) {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: 'cli_console',
    redirect_uri: `${ctx.consoleOrigin}/api/auth/callback`,
    scope: 'tenant:read',
    state: randomBytes(8).toString('hex'),
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const form = await fetch(`${ctx.authOrigin}/management-auth/authorize?${q}`);
  const flowId = /data-flow-id="([^"]+)"/.exec(await form.text())[1];
  const cookie = cookieOf(form, '__Host-svc_control_flow');
  const post = (p, body) =>
    fetch(`${ctx.authOrigin}/management-auth/email/${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: ctx.authOrigin, cookie },
      body: JSON.stringify(body),
    });
  const codeP = ctx.smtp.code(email);
  const started = await post('start', { flow_id: flowId, email });
  if (started.status !== 202) throw new Error(`email/start ${started.status}`);
  const code = await codeP;
  const confirmed = await (await post('confirm', { flow_id: flowId, email, code })).json();
  const authCode = new URL(confirmed.redirect_to).searchParams.get('code');
  const tok = await fetch(`${ctx.authOrigin}/management-auth/token`, {
    method: 'POST',
    headers: { authorization: ctx.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: authCode,
      redirect_uri: `${ctx.consoleOrigin}/api/auth/callback`,
      code_verifier: verifier,
    }),
  });
  if (tok.status !== 200) throw new Error(`token ${tok.status}`);
  return tok.json();
}

/** One complete console sign-in through the BFF: start → authorize → email code → confirm → callback. */
async function bffSignIn(ctx, email = 'bench-0@bench.example') {
  const start = await fetch(`${ctx.consoleOrigin}/api/auth/start`, {
    method: 'POST',
    headers: { origin: ctx.consoleOrigin },
    redirect: 'manual',
  });
  if (start.status !== 303) throw new Error(`start answered ${start.status}`);
  const bffFlow = cookieOf(start, '__Host-svc_control_flow');
  const form = await fetch(start.headers.get('location'));
  const flowId = /data-flow-id="([^"]+)"/.exec(await form.text())[1];
  const cookie = cookieOf(form, '__Host-svc_control_flow');
  const post = (p, body) =>
    fetch(`${ctx.authOrigin}/management-auth/email/${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: ctx.authOrigin, cookie },
      body: JSON.stringify(body),
    });
  const codeP = ctx.smtp.code(email);
  const started = await post('start', { flow_id: flowId, email });
  if (started.status !== 202) throw new Error(`email/start ${started.status}`);
  const confirmed = await (await post('confirm', { flow_id: flowId, email, code: await codeP })).json();
  const cb = await fetch(confirmed.redirect_to, { headers: { cookie: bffFlow }, redirect: 'manual' });
  const consoleCookie = cookieOf(cb, '__Host-svc_console');
  if (!consoleCookie) throw new Error(`callback answered ${cb.status} without a session`);
  return consoleCookie;
}

async function startService({ nodeArgs = [] } = {}) {
  pinLoadGenerator();
  execFileSync('bash', [join(ROOT, 'scripts/ensure-services.sh')], { stdio: 'inherit' });
  if (!existsSync(join(ROOT, 'dist/src/main.js')) || process.env.BENCH_BUILD !== '0')
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  await prepareDatabase();
  const smtp = await startSmtp();
  // The service's own generator (admin generate-secrets), from the build above.
  const secrets = await require(join(ROOT, 'dist/src/cli/commands/setup.commands')).generateSecrets();
  const port = 3900 + randomInt(50);
  const authOrigin = `http://localhost:${port}`;
  const consoleOrigin = `http://127.0.0.1:${port}`;
  const huge = '100000000/60';
  const env = {
    ...process.env,
    ...secrets,
    NODE_ENV: 'development',
    PORT: String(port),
    AUTH_ORIGIN: authOrigin,
    CONSOLE_ORIGIN: consoleOrigin,
    DATABASE_URL: `${PG}/${DB}`,
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: `bench${randomBytes(3).toString('hex')}:`,
    CONSOLE_CLIENT_ID: 'cli_console',
    MAIL_TRANSPORT: 'smtp',
    SMTP_URL: smtp.url,
    MAIL_FROM: 'bench@localhost',
    LOG_LEVEL: 'warn',
    // Every budget the service knows (.env.example lists them all) raised by configuration only.
    ...Object.fromEntries(
      [...readFileSync(join(ROOT, '.env.example'), 'utf8').matchAll(/^(RATE_LIMIT_[A-Z_]+)=/gm)].map((m) => [
        m[1],
        huge,
      ]),
    ),
  };
  admin(env, 'migrate');
  admin(env, 'seed-control-plane');
  admin(env, 'tenant', 'create', '--id', 'bench', '--name', 'Bench');
  admin(
    env,
    'client',
    'create',
    '--tenant',
    'bench',
    '--id',
    'cli_bench',
    '--name',
    'Bench',
    '--type',
    'native',
    '--scopes',
    'openid offline_access',
    '--redirect-uri',
    'http://127.0.0.1/cb',
  );
  admin(env, 'membership', 'add', '--tenant', 'bench', '--email', 'bench-0@bench.example', '--role', 'owner');

  // The same V8 heap limits as production (Dockerfile, npm start): see docs/performance.md.
  const server = await spawnServer(env, [...HEAP_FLAGS, ...nodeArgs, 'dist/src/main.js'], {
    readyUrl: `http://127.0.0.1:${port}/readyz`,
    host: `localhost:${port}`,
  });
  const ctx = {
    redisKeyPrefix: env.REDIS_KEY_PREFIX,
    authOrigin,
    consoleOrigin,
    smtp,
    basic: `Basic ${Buffer.from(`cli_console:${secrets.CONSOLE_CLIENT_SECRET}`).toString('base64')}`,
  };
  return {
    ctx,
    pid: server.pid,
    secrets,
    env,
    stop: async () => {
      await server.stop();
      await smtp.close();
    },
  };
}

/** Pins the current process (the load generator) to CPU 1 when there are two. */
function pinLoadGenerator() {
  if (cpus().length < 2) return;
  try {
    execFileSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });
  } catch {
    /* taskset unavailable: both share the CPUs */
  }
}

/**
 * Starts `node args` (process.execPath: the Node that runs the bench) on CPU 0 and waits until
 * `readyUrl` answers 200. taskset execs node in place, so the child's pid is the server's.
 */
async function spawnServer(env, args, { readyUrl, host, cwd = ROOT }) {
  const pinned = cpus().length > 1;
  const server = spawn(pinned ? 'taskset' : process.execPath, pinned ? ['-c', '0', process.execPath, ...args] : args, {
    cwd,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const stopped = new Promise((r) => server.once('exit', r));
  const kill = () => server.kill('SIGTERM');
  process.on('exit', kill);
  await waitReady(readyUrl, host ?? new URL(readyUrl).host);
  return {
    pid: server.pid,
    stop: async () => {
      kill();
      await stopped;
      process.off('exit', kill);
    },
  };
}

/**
 * An autocannon request for a refresh grant as rotation chains: each request takes a refresh
 * token from the pool and puts the rotated one back, so every token is used exactly once.
 * `tokenUrl` and `basic` name the server (ours or the peer).
 */
function refreshChainRequest(tokenUrl, basic, pool) {
  const takeToken = (tokens) => {
    const token = tokens.pop();
    if (token === undefined) throw new Error('the refresh chain pool ran dry: every chain was cut');
    return token;
  };
  const host = new URL(tokenUrl).host;
  return {
    method: 'POST',
    setupRequest: (req) => ({
      ...req,
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded', host },
      body: `grant_type=refresh_token&refresh_token=${encodeURIComponent(takeToken(pool))}`,
    }),
    onResponse: (status, body) => {
      if (status === 200) pool.unshift(JSON.parse(body).refresh_token);
    },
  };
}

module.exports = {
  prepareDatabase,
  startService,
  spawnServer,
  pinLoadGenerator,
  refreshChainRequest,
  apiSignIn,
  bffSignIn,
  peakRssMb,
  cpuSeconds,
  median,
  sleep,
  log,
  ROOT,
};
