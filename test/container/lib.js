'use strict';
// Shared by the container tests (scripts/container-test.sh runs them with its own daemon in
// DOCKER_HOST): the docker client, free loopback ports, the health wait, and the HTTP flows a
// game and the console run against the service in the container.
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const net = require('node:net');

const DOCKER = process.env.DOCKER || '/usr/bin/docker';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function log(msg) {
  process.stderr.write(`container-test: ${msg}\n`);
}

function docker(...args) {
  return execFileSync(DOCKER, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** A port nothing listens on at 127.0.0.1 now (the containers use the host's network). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

/**
 * Waits for the container's HEALTHCHECK to say healthy; also records when /readyz first answered
 * 200, since the first health probe runs only one interval (10 s) after the start.
 */
async function waitHealthy(container, readyUrl, { timeoutMs = 120_000 } = {}) {
  const t0 = Date.now();
  let readyAt = null;
  for (;;) {
    const state = JSON.parse(docker('inspect', '--format', '{{json .State}}', container));
    if (state.Health?.Status === 'healthy') return { healthyMs: Date.now() - t0, readyMs: readyAt ?? Date.now() - t0 };
    if (!state.Running || state.Health?.Status === 'unhealthy') {
      throw new Error(`${container} is ${state.Status}/${state.Health?.Status}:\n${logsOf(container)}`);
    }
    if (readyAt === null) {
      try {
        if ((await fetch(readyUrl, { signal: AbortSignal.timeout(1000) })).ok) readyAt = Date.now() - t0;
      } catch {
        /* not listening yet */
      }
    }
    if (Date.now() - t0 > timeoutMs)
      throw new Error(`${container} not healthy after ${timeoutMs} ms:\n${logsOf(container)}`);
    await sleep(200);
  }
}

function logsOf(container) {
  try {
    return execFileSync(DOCKER, ['logs', '--tail', '40', container], { encoding: 'utf8', stdio: 'pipe' });
  } catch (err) {
    return `${err.stdout ?? ''}${err.stderr ?? ''}`;
  }
}

function cookieOf(res, name) {
  const c = res.headers.getSetCookie().find((x) => x.startsWith(`${name}=`));
  return c ? c.split(';')[0] : undefined;
}

async function json(res, what) {
  const text = await res.text();
  check(res.ok, `${what}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** A game creates a guest, then refreshes its session once (POST /t/{tenant}/guest, /token). */
async function guestAndRefresh(authOrigin, tenant, clientId) {
  const post = (path, body) =>
    fetch(`${authOrigin}/t/${tenant}/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const created = await json(
    await post('guest', { client_id: clientId, browser_flow_id: `flw_${randomBytes(18).toString('base64url')}` }),
    'guest creation',
  );
  check(/^usr_/.test(created.user_id) && created.refresh_token, 'guest creation gave no user or refresh token');
  const refreshed = await json(
    await post('token', { grant_type: 'refresh_token', client_id: clientId, refresh_token: created.refresh_token }),
    'refresh',
  );
  check(refreshed.refresh_token && refreshed.refresh_token !== created.refresh_token, 'the refresh did not rotate');
  return { userId: created.user_id };
}

/**
 * A console sign-in through the BFF, as the browser does it: start → authorize (the hosted form)
 * → email code (read by `codeFor(email)`) → confirm → callback; then /api/auth/current.
 */
async function bffSignIn({ authOrigin, consoleOrigin }, email, codeFor) {
  const start = await fetch(`${consoleOrigin}/api/auth/start`, {
    method: 'POST',
    headers: { origin: consoleOrigin },
    redirect: 'manual',
  });
  check(start.status === 303, `/api/auth/start answered ${start.status}`);
  const bffFlow = cookieOf(start, '__Host-svc_control_flow');
  const form = await fetch(start.headers.get('location'));
  const flowId = /data-flow-id="([^"]+)"/.exec(await form.text())?.[1];
  check(flowId, `authorize answered ${form.status} without the sign-in form`);
  const cookie = cookieOf(form, '__Host-svc_control_flow');
  const post = (p, body) =>
    fetch(`${authOrigin}/management-auth/email/${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: authOrigin, cookie },
      body: JSON.stringify(body),
    });
  const started = await post('start', { flow_id: flowId, email });
  check(started.status === 202, `email/start answered ${started.status}`);
  const code = await codeFor(email);
  const confirmed = await json(await post('confirm', { flow_id: flowId, email, code }), 'email/confirm');
  const cb = await fetch(confirmed.redirect_to, { headers: { cookie: bffFlow }, redirect: 'manual' });
  const consoleCookie = cookieOf(cb, '__Host-svc_console');
  check(cb.status === 303 && consoleCookie, `callback answered ${cb.status} without a console session`);
  const current = await json(
    await fetch(`${consoleOrigin}/api/auth/current`, { headers: { cookie: consoleCookie } }),
    '/api/auth/current',
  );
  check(JSON.stringify(current).includes(email), `/api/auth/current does not name ${email}`);
  return current;
}

/** The six-digit code in a message's text. */
function codeIn(text) {
  return /\b(\d{6})\b/.exec(text)?.[1];
}

module.exports = {
  DOCKER,
  docker,
  freePort,
  check,
  waitHealthy,
  logsOf,
  guestAndRefresh,
  bffSignIn,
  codeIn,
  log,
  sleep,
};
