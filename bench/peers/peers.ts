// The benchmark's reference servers, started on the service's core: the peer (oidc-provider/,
// panva's oidc-provider with its own package.json and lockfile, installed on first use), the bare
// NestJS app (bare-nest.ts) and the lower bound (lower-bound.ts); and the client side of the
// peer's flows.
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import { benchDatabase, ROOT, spawnServer } from '../service';

const PEER_DIR = join(ROOT, 'bench/peers/oidc-provider');
const RESOURCE = 'https://api.bench.example';
const REDIRECT_URI = 'http://127.0.0.1/cb';

export interface TokenServer {
  readonly origin: string;
  readonly keyPrefix: string;
  /** `Basic …` of its one confidential client. */
  readonly basic: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** name=value of every Set-Cookie, merged into `jar`. */
function collectCookies(res: Response, jar: Map<string, string>): void {
  for (const c of res.headers.getSetCookie()) {
    const [pair = ''] = c.split(';');
    const eq = pair.indexOf('=');
    jar.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
}

const cookieHeader = (jar: Map<string, string>) => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');

export interface PeerTokens {
  readonly access_token: string;
  readonly refresh_token: string;
}

/**
 * One complete authorization-code + PKCE flow at the peer: authorize → interaction (login,
 * automatic consent) → resumed authorize → code → token. `resource` asks for a JWT access token
 * and a rotating refresh token; without it, `openid` and an opaque access token for userinfo.
 */
export async function peerSignIn(peer: TokenServer, accountId: string, { resource = true } = {}): Promise<PeerTokens> {
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
  const jar = new Map<string, string>();
  let location = `${peer.origin}/auth?${q.toString()}`;
  for (let hop = 0; hop < 4 && !location.startsWith(REDIRECT_URI); hop++) {
    const res = await fetch(new URL(location, peer.origin), {
      headers: { cookie: cookieHeader(jar) },
      redirect: 'manual',
    });
    collectCookies(res, jar);
    const next = res.headers.get('location');
    if (!next) throw new Error(`peer flow: ${res.status} without a redirect`);
    location = next;
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
  return (await tok.json()) as PeerTokens;
}

/** The peer's client_credentials grant for a JWT access token (RS256), as autocannon options. */
export function clientCredentialsRequest(peer: TokenServer): Pick<autocannon.Options, 'method' | 'headers' | 'body'> {
  return {
    method: 'POST',
    headers: { authorization: peer.basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: `grant_type=client_credentials&scope=api%3Aread&resource=${encodeURIComponent(RESOURCE)}`,
  };
}

/**
 * A token server on CPU 0 (`script` under `cwd`), on the same Redis under a key prefix of its own,
 * with one confidential client `clientId` whose secret it reads from `secretVariable`.
 */
async function startTokenServer(opts: {
  script: string;
  cwd: string;
  portBase: number;
  keyPrefix: string;
  clientId: string;
  secretVariable: string;
  env?: Record<string, string>;
  nodeArgs?: readonly string[];
}): Promise<TokenServer> {
  const port = opts.portBase + randomInt(25);
  const secret = randomBytes(32).toString('base64url');
  const prefix = `${opts.keyPrefix}${randomBytes(3).toString('hex')}:`;
  const origin = `http://localhost:${port}`;
  const server = await spawnServer(
    {
      ...(process.env as Record<string, string>),
      ...opts.env,
      PORT: String(port),
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: prefix,
      [opts.secretVariable]: secret,
    },
    [...(opts.nodeArgs ?? []), opts.script],
    { readyUrl: `${origin}/readyz`, cwd: opts.cwd },
  );
  return {
    origin,
    keyPrefix: prefix,
    basic: `Basic ${Buffer.from(`${opts.clientId}:${secret}`).toString('base64')}`,
    pid: server.pid,
    stop: server.stop,
  };
}

/** oidc-provider, installed from its own lockfile on first use. */
export function startPeer({ nodeArgs = [] as readonly string[] } = {}): Promise<TokenServer> {
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
export async function startBareNest(): Promise<{ origin: string; pid: number; stop(): Promise<void> }> {
  const port = 3975 + randomInt(25);
  const origin = `http://localhost:${port}`;
  const server = await spawnServer(
    { ...(process.env as Record<string, string>), PORT: String(port) },
    [join(__dirname, 'bare-nest.js')],
    { readyUrl: `${origin}/readyz` },
  );
  return { origin, pid: server.pid, stop: server.stop };
}

/** The lower bound with a database of its own; `refreshChain()` and `accessToken()` each seed a live session. */
export async function startLowerBound({ nodeArgs = [] as readonly string[] } = {}): Promise<
  TokenServer & { refreshChain(): Promise<string>; accessToken(): Promise<string> }
> {
  const server = await startTokenServer({
    script: join(__dirname, 'lower-bound.js'),
    cwd: ROOT,
    portBase: 3860,
    keyPrefix: 'benchfloor',
    clientId: 'cli_console',
    secretVariable: 'LOWER_BOUND_CLIENT_SECRET',
    env: { DATABASE_URL: await benchDatabase('lower') },
    nodeArgs,
  });
  const seed = async () =>
    (await (await fetch(`${server.origin}/seed`, { method: 'POST' })).json()) as {
      refresh_token: string;
      access_token: string;
    };
  return {
    ...server,
    refreshChain: async () => (await seed()).refresh_token,
    accessToken: async () => (await seed()).access_token,
  };
}
