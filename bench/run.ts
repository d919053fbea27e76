// npm run bench: the service against its peer and its lower bound in one run (issue 15, contract
// 9; issue 24, point 6). Each scenario measures its sides alternately on the same pinned core: the
// peer is panva's oidc-provider configured for the same work (bench/peers/oidc-provider), the
// static route's counterpart a bare NestJS app (bench/peers/bare-nest.ts), and the lower bound
// (bench/peers/lower-bound.ts) the least a route on this stack can do for the static route, guest
// creation and the refresh grant, so a missed target can be told apart from one no implementation
// on the stack could meet. Prints figures and ratios, writes bench/out/latest.json, asserts nothing.
//   BENCH_ONLY=guest,refresh   only the scenarios whose names contain one of these
//   BENCH_LOWER_BOUND=0        without the lower bound
//   BENCH_PROFILE=1            V8 CPU profiles of our server, the peer and the lower bound in bench/out/profiles
//   BENCH_RUNS, BENCH_SECONDS, BENCH_WARMUP_REQUESTS, BENCH_BUILD=0 (reuse dist/)
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type autocannon from 'autocannon';
import Redis from 'ioredis';
import { chainPool, compareFlows, compareHttp, peakRssMb, refreshChainRequest, refreshReuseRequests } from './measure';
import { clientCredentialsRequest, peerSignIn, startBareNest, startLowerBound, startPeer } from './peers/peers';
import { report, type Scenario } from './report';
import { apiSignIn, bffSignIn, log, ROOT, startService } from './service';

const PROFILE_ARGS =
  process.env.BENCH_PROFILE === '1' ? ['--cpu-prof', `--cpu-prof-dir=${join(ROOT, 'bench/out/profiles')}`] : [];
const LOWER_BOUND = process.env.BENCH_LOWER_BOUND !== '0';

const wanted = (name: string) => {
  const only = process.env.BENCH_ONLY;
  return !only || only.split(',').some((o) => name.includes(o));
};

interface GuestTokens {
  readonly access_token: string;
  readonly refresh_token: string;
}

/** A guest of tenant `bench`, created with a raw request as a native game does. */
async function createGuest(origin: string): Promise<GuestTokens> {
  const res = await fetch(`${origin}/t/bench/guest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: 'cli_bench', browser_flow_id: `flw_${randomBytes(12).toString('base64url')}` }),
  });
  if (res.status !== 201) throw new Error(`guest creation answered ${res.status}`);
  return (await res.json()) as GuestTokens;
}

function guestCreation(origin: string): autocannon.Options {
  const host = new URL(origin).host;
  return {
    url: `${origin}/t/bench/guest`,
    requests: [
      {
        method: 'POST',
        setupRequest: (req) => ({
          ...req,
          headers: { 'content-type': 'application/json', host },
          body: JSON.stringify({
            client_id: 'cli_bench',
            browser_flow_id: `flw_${randomBytes(12).toString('base64url')}`,
          }),
        }),
      },
    ],
  };
}

async function main(): Promise<void> {
  // The servers run on process.execPath: the Node 24 that npm puts first on PATH (contract 9).
  if (!process.versions.node.startsWith('24.'))
    throw new Error(`bench: Node ${process.version}; run it with npm run bench`);
  const ours = await startService({ nodeArgs: PROFILE_ARGS });
  const peer = await startPeer({ nodeArgs: PROFILE_ARGS });
  const bare = await startBareNest();
  const lower = LOWER_BOUND ? await startLowerBound({ nodeArgs: PROFILE_ARGS }) : null;
  const { pid } = ours;
  const { authOrigin } = ours.t;
  const tag = randomBytes(3).toString('hex');
  const scenarios: Scenario[] = [];
  const scenario = async (
    name: string,
    peerName: string,
    target: number | null,
    measure: () => Promise<Array<Scenario['ours']>>,
  ): Promise<void> => {
    if (!wanted(name)) return;
    const [o, p, floor] = await measure();
    if (!o || !p) throw new Error(`${name}: a side was not measured`);
    scenarios.push({ name, peerName, target, ours: o, peer: p, ...(floor ? { lowerBound: floor } : {}) });
    log(
      `${name}: ${o.rps.toFixed(0)}/s vs ${peerName} ${p.rps.toFixed(0)}/s${floor ? `, lower bound ${floor.rps.toFixed(0)}/s` : ''}`,
    );
  };

  await scenario('static route /healthz', 'bare NestJS route', 0.9, () =>
    compareHttp([
      { pid, opts: { url: `${authOrigin}/healthz` } },
      { pid: bare.pid, opts: { url: `${bare.origin}/healthz` } },
      ...(lower ? [{ pid: lower.pid, opts: { url: `${lower.origin}/healthz` } }] : []),
    ]),
  );

  const peerUserinfo = async (account: string) => ({
    pid: peer.pid,
    opts: {
      url: `${peer.origin}/me`,
      headers: { authorization: `Bearer ${(await peerSignIn(peer, account, { resource: false })).access_token}` },
    },
  });

  await scenario('GET /management-auth/current', 'userinfo, opaque token', 2.0, async () => {
    const tokens = await apiSignIn(ours, `current-${tag}@bench.example`);
    const current = (origin: string, token: string) => ({
      url: `${origin}/management-auth/current`,
      headers: { authorization: `Bearer ${token}` },
    });
    return compareHttp([
      { pid, opts: current(authOrigin, tokens.access_token) },
      await peerUserinfo(`acc_current_${tag}`),
      ...(lower ? [{ pid: lower.pid, opts: current(lower.origin, await lower.accessToken()) }] : []),
    ]);
  });

  await scenario('GET /t/{tenant}/me', 'userinfo, opaque token', 1.5, async () => {
    const guest = await createGuest(authOrigin);
    return compareHttp([
      { pid, opts: { url: `${authOrigin}/t/bench/me`, headers: { authorization: `Bearer ${guest.access_token}` } } },
      await peerUserinfo(`acc_me_${tag}`),
    ]);
  });

  await scenario('refresh grant (rotation chains)', 'refresh grant, RS256 JWT', 1.5, async () => {
    const ourPool = await chainPool(
      async (i) => (await apiSignIn(ours, `chain-${tag}-${i}@bench.example`)).refresh_token,
    );
    const peerPool = await chainPool(async (i) => (await peerSignIn(peer, `acc_chain_${tag}_${i}`)).refresh_token);
    const ourToken = `${authOrigin}/management-auth/token`;
    const peerToken = `${peer.origin}/token`;
    const sides = [
      {
        pid,
        opts: () => ({
          url: ourToken,
          requests: [refreshChainRequest(ourToken, ourPool, { authorization: ours.basic })],
        }),
      },
      {
        pid: peer.pid,
        opts: () => ({
          url: peerToken,
          requests: [refreshChainRequest(peerToken, peerPool, { authorization: peer.basic })],
        }),
      },
    ];
    if (lower) {
      const lowerPool = await chainPool(() => lower.refreshChain());
      const lowerToken = `${lower.origin}/management-auth/token`;
      sides.push({
        pid: lower.pid,
        opts: () => ({
          url: lowerToken,
          requests: [refreshChainRequest(lowerToken, lowerPool, { authorization: lower.basic })],
        }),
      });
    }
    return compareHttp(sides);
  });

  await scenario('guest refresh, each token twice (reuse rule)', 'refresh grant, RS256 JWT', 1.0, async () => {
    const ourPool = await chainPool(async () => (await createGuest(authOrigin)).refresh_token);
    const peerPool = await chainPool(async (i) => (await peerSignIn(peer, `acc_reuse_${tag}_${i}`)).refresh_token);
    const ourToken = `${authOrigin}/t/bench/token`;
    const peerToken = `${peer.origin}/token`;
    return compareHttp([
      {
        pid,
        opts: () => ({ url: ourToken, requests: refreshReuseRequests(ourToken, ourPool, '&client_id=cli_bench') }),
      },
      {
        pid: peer.pid,
        opts: () => ({
          url: peerToken,
          requests: [refreshChainRequest(peerToken, peerPool, { authorization: peer.basic })],
        }),
      },
    ]);
  });

  // Issue 24: guest creation against client_credentials is reported, not a target (different work).
  await scenario('POST /t/{tenant}/guest', 'client_credentials, RS256 JWT', null, () =>
    compareHttp([
      { pid, opts: guestCreation(authOrigin) },
      { pid: peer.pid, opts: { url: `${peer.origin}/token`, ...clientCredentialsRequest(peer) } },
      ...(lower ? [{ pid: lower.pid, opts: guestCreation(lower.origin) }] : []),
    ]),
  );

  await scenario('complete sign-ins (10 concurrent)', 'authorization code + PKCE flows', 1.0, () =>
    compareFlows([
      { pid, flow: (i) => bffSignIn(ours, `signin-${tag}-${i}@bench.example`) },
      { pid: peer.pid, flow: (i) => peerSignIn(peer, `acc_signin_${tag}_${i}`) },
    ]),
  );

  const rss = { ours: peakRssMb(pid), peer: peakRssMb(peer.pid) };
  await Promise.all([bare.stop(), peer.stop(), ours.stop(), lower?.stop()]);
  await dropKeys([ours.env.REDIS_KEY_PREFIX as string, peer.keyPrefix, ...(lower ? [lower.keyPrefix] : [])]);
  report(scenarios, rss);
}

/** The run's Redis keys (every server's), so repeated runs leave nothing behind. */
async function dropKeys(prefixes: readonly string[]): Promise<void> {
  const redis = new Redis('redis://127.0.0.1:6379');
  for (const prefix of prefixes) {
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 }) as AsyncIterable<string[]>)
      if (keys.length > 0) await redis.unlink(...keys);
  }
  redis.disconnect();
}

main().then(
  () => process.exit(0),
  (err: Error) => {
    console.error(err);
    process.exit(1);
  },
);
