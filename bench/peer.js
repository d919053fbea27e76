'use strict';
// The benchmark's reference servers, started on the service's core: the peer (bench/peer, panva's
// oidc-provider with its own package.json and lockfile, installed here on first use) and the bare
// NestJS app (bench/bare-nest.js); and the client side of the peer's flows.
const { execFileSync } = require('node:child_process');
const { createHash, randomBytes, randomInt } = require('node:crypto');
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { prepareDatabase, spawnServer, ROOT } = require('./service');

const PEER_DIR = join(__dirname, 'peer');

const RESOURCE = 'https://api.bench.example';
const REDIRECT_URI = 'http://127.0.0.1/cb';

/** name=value of every Set-Cookie, merged into `jar`. */
function collectCookies(res, jar) {
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const eq = pair.indexOf('=');
    jar.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
}

const cookieHeader = (jar) => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');

/**
 * One complete authorization-code + PKCE flow: authorize → interaction (login, automatic
 * consent) → resumed authorize → code → token. `resource` asks for a JWT access token and a
 * rotating refresh token; without it, `openid` and an opaque access token for userinfo.
 */
async function peerSignIn(peer, accountId, { resource = true } = {}) {
  const verifier = randomBytes(32).toString('base64url');
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: 'bench',
    redirect_uri: REDIRECT_URI,
    scope: resource ? 'api:read' : 'openid',
    state: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    login_hint: accountId,
    ...(resource ? { resource: RESOURCE } : {}),
  });
  const jar = new Map();
  let location = `${peer.origin}/auth?${q}`;
  for (let hop = 0; hop < 4 && !location.startsWith(REDIRECT_URI); hop++) {
    const res = await fetch(new URL(location, peer.origin), {
      headers: { cookie: cookieHeader(jar) },
      redirect: 'manual',
    });
    collectCookies(res, jar);
    location = res.headers.get('location');
    if (!location) throw new Error(`peer flow: ${res.status} without a redirect`);
  }
  const code = new URL(location).searchParams.get('code');
  if (!code) throw new Error(`peer flow ended at ${location}`);
  const tok = await fetch(`${peer.origin}/token`, {
    method: 'POST',
    headers: { authorization: peer.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    }),
  });
  if (tok.status !== 200) throw new Error(`peer token ${tok.status} ${await tok.text()}`);
  return tok.json();
}

function clientCredentialsRequest(peer) {
  return {
    method: 'POST',
    headers: { authorization: peer.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: `grant_type=client_credentials&scope=api%3Aread&resource=${encodeURIComponent(RESOURCE)}`,
  };
}

/**
 * A token server of the bench on CPU 0 (`script` under `cwd`), on the same Redis under a key
 * prefix of its own, with one confidential client `clientId` whose secret it reads from
 * `secretVariable`. Returns its origin, key prefix, Basic header and pid.
 */
async function startTokenServer({
  script,
  cwd,
  portBase,
  keyPrefix,
  clientId,
  secretVariable,
  env = {},
  nodeArgs = [],
}) {
  const port = portBase + randomInt(25);
  const secret = randomBytes(32).toString('base64url');
  const prefix = `${keyPrefix}${randomBytes(3).toString('hex')}:`;
  const origin = `http://localhost:${port}`;
  const server = await spawnServer(
    {
      ...process.env,
      ...env,
      PORT: String(port),
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: prefix,
      [secretVariable]: secret,
    },
    [...nodeArgs, script],
    { readyUrl: `${origin}/readyz`, cwd },
  );
  return {
    origin,
    keyPrefix: prefix,
    basic: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
    pid: server.pid,
    stop: server.stop,
  };
}

/** oidc-provider, installed from its own lockfile on first use. */
async function startPeer({ nodeArgs = [] } = {}) {
  if (!existsSync(join(PEER_DIR, 'node_modules')))
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: PEER_DIR, stdio: 'inherit' });
  return startTokenServer({
    script: join(PEER_DIR, 'server.mjs'),
    cwd: PEER_DIR,
    portBase: 3950,
    keyPrefix: 'benchpeer',
    clientId: 'bench',
    secretVariable: 'PEER_CLIENT_SECRET',
    nodeArgs,
  });
}

/** The framework's floor: a bare NestJS + Express app with one static route, on CPU 0. */
async function startBareNest() {
  const port = 3975 + randomInt(25);
  const origin = `http://localhost:${port}`;
  const server = await spawnServer({ ...process.env, PORT: String(port) }, [join(__dirname, 'bare-nest.js')], {
    readyUrl: `${origin}/readyz`,
    cwd: ROOT,
  });
  return { origin, pid: server.pid, stop: server.stop };
}

/**
 * The lower bound (bench/lower-bound.js), with a database of its own. `refreshChain()` seeds one
 * refresh token for a rotation chain.
 */
async function startLowerBound() {
  const server = await startTokenServer({
    script: join(__dirname, 'lower-bound.js'),
    cwd: ROOT,
    portBase: 3860,
    keyPrefix: 'benchfloor',
    clientId: 'cli_console',
    secretVariable: 'LOWER_BOUND_CLIENT_SECRET',
    env: { DATABASE_URL: await prepareDatabase('svc_auth_bench_lower') },
  });
  const refreshChain = async () =>
    (await (await fetch(`${server.origin}/seed`, { method: 'POST' })).json()).refresh_token;
  return { ...server, refreshChain };
}

module.exports = { startPeer, startBareNest, startLowerBound, peerSignIn, clientCredentialsRequest };
