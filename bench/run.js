#!/usr/bin/env node
// npm run bench: the service against a peer in one run (issue 15, contract 9). Each scenario
// measures ours and its counterpart alternately (A B A B A B) on the same pinned core: the peer
// is panva's oidc-provider configured for the same work (bench/peer), the static route's
// counterpart a bare NestJS app (bench/bare-nest.js). Prints both, the ratio, met/missed per
// target, and writes bench/out/latest.json. The machine is shared and noisy, so the targets are
// ratios of one run, never absolute numbers. BENCH_LOWER_BOUND=1 adds a third side to the static
// route, guest creation and the refresh grant: bench/lower-bound.js, the least a route on this stack can do for
// them, so a missed target can be told apart from one no implementation on the stack could meet.
'use strict';
const { randomBytes } = require('node:crypto');
const { mkdirSync, writeFileSync } = require('node:fs');
const { cpus } = require('node:os');
const { join } = require('node:path');
const autocannon = require('autocannon');
const Redis = require('ioredis');
const service = require('./service');
const { startPeer, startBareNest, startLowerBound, peerSignIn, clientCredentialsRequest } = require('./peer');

const RUNS = Number(process.env.BENCH_RUNS || 3);
const DURATION = Number(process.env.BENCH_SECONDS || 5);
const WARMUP_REQUESTS = Number(process.env.BENCH_WARMUP_REQUESTS || 10_000);
const CONNECTIONS = 50;
const SIGN_IN_CONCURRENCY = 10;
const OUT = join(__dirname, 'out');
// BENCH_PROFILE=1: our server and the peer write V8 CPU profiles into bench/out/profiles.
const PROFILE_ARGS = process.env.BENCH_PROFILE === '1' ? ['--cpu-prof', `--cpu-prof-dir=${join(OUT, 'profiles')}`] : [];
const LOWER_BOUND = process.env.BENCH_LOWER_BOUND === '1';

function cannon(opts) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration: DURATION, ...opts }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  });
}

// BENCH_ONLY=guest,refresh measures the named scenarios only (for profiling).
function wanted(name) {
  const only = process.env.BENCH_ONLY;
  return !only || only.split(',').some((o) => name.includes(o));
}

const summary = (runs, pid) => ({
  rps: service.median(runs.map((r) => r.rps)),
  cpuUs: service.median(runs.map((r) => r.cpuUs)),
  p50: service.median(runs.map((r) => r.p50)),
  p99: service.median(runs.map((r) => r.p99)),
  non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
  rssMb: service.peakRssMb(pid),
});

/**
 * One HTTP scenario: a discarded warm-up of WARMUP_REQUESTS on each side (steady state: JIT and
 * warm caches), then RUNS alternating runs.
 * `opts` of a side is a function when each run needs fresh state (the refresh chains).
 */
async function compareHttp(sides) {
  const optsOf = (side) => (typeof side.opts === 'function' ? side.opts() : side.opts);
  const failures = (r) => r.non2xx + r.errors + r.timeouts;
  const runs = sides.map(() => []);
  const warmFailures = [];
  for (const side of sides) warmFailures.push(failures(await cannon({ ...optsOf(side), amount: WARMUP_REQUESTS })));
  for (let i = 0; i < RUNS; i++) {
    for (const [k, side] of sides.entries()) {
      const cpu0 = service.cpuSeconds(side.pid);
      const r = await cannon(optsOf(side));
      // Server CPU per answered request: steadier than req/s when other work shares the core.
      const cpuUs = ((service.cpuSeconds(side.pid) - cpu0) * 1e6) / Math.max(1, r.requests.total);
      runs[k].push({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: failures(r), cpuUs });
    }
  }
  return sides.map((side, k) => {
    const s = summary(runs[k], side.pid);
    s.non2xx += warmFailures[k];
    return s;
  });
}

/** Complete flows per second with SIGN_IN_CONCURRENCY workers, alternating like compareHttp. */
async function compareFlows(sides) {
  const runOnce = async (flow, seconds) => {
    const latencies = [];
    let failed = 0;
    let n = 0;
    const started = Date.now();
    const until = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: SIGN_IN_CONCURRENCY }, async () => {
        while (Date.now() < until) {
          const t0 = performance.now();
          try {
            await flow(n++);
            latencies.push(performance.now() - t0);
          } catch (err) {
            if (failed++ === 0) service.log(`flow failed: ${err.message}`);
          }
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    const elapsed = (Date.now() - started) / 1000;
    return { rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), non2xx: failed, done: latencies.length };
  };
  const runs = sides.map(() => []);
  let warmFailures = 0;
  for (const side of sides) warmFailures += (await runOnce(side.flow, 2)).non2xx;
  for (let i = 0; i < RUNS; i++)
    for (const [k, side] of sides.entries()) {
      const cpu0 = service.cpuSeconds(side.pid);
      const r = await runOnce(side.flow, DURATION);
      r.cpuUs = ((service.cpuSeconds(side.pid) - cpu0) * 1e6) / Math.max(1, r.done);
      runs[k].push(r);
    }
  return sides.map((side, k) => {
    const s = summary(runs[k], side.pid);
    if (k === 0) s.non2xx += warmFailures;
    return s;
  });
}

/**
 * Rotation chains: a pool of refresh tokens, each used exactly once. A run that ends cuts up to
 * one chain per connection (its rotated token never arrives), so the pool holds enough chains
 * for the warm-up and every run.
 */
async function chainPool(signIn) {
  const pool = [];
  const size = CONNECTIONS * (RUNS + 2);
  for (let i = 0; i < size; i += SIGN_IN_CONCURRENCY)
    pool.push(
      ...(await Promise.all(
        Array.from(
          { length: Math.min(SIGN_IN_CONCURRENCY, size - i) },
          async (_, k) => (await signIn(i + k)).refresh_token,
        ),
      )),
    );
  return pool;
}

async function main() {
  // The servers run on process.execPath: the Node 24 that npm puts first on PATH (contract 9).
  if (!process.versions.node.startsWith('24.'))
    throw new Error(`bench: Node ${process.version}; run it with npm run bench`);
  const { ctx, pid, stop } = await service.startService({ nodeArgs: PROFILE_ARGS });
  const peer = await startPeer({ nodeArgs: PROFILE_ARGS });
  const bare = await startBareNest();
  const lower = LOWER_BOUND ? await startLowerBound() : null;
  const { authOrigin, consoleOrigin } = ctx;
  const tag = randomBytes(3).toString('hex');
  const scenarios = [];
  const scenario = async (name, peerName, target, measure) => {
    if (!wanted(name)) return;
    const [ours, theirs, floor] = await measure();
    const lowerBound = floor ? { ...floor, ratio: floor.rps / theirs.rps } : undefined;
    scenarios.push({ name, peerName, target, ours, peer: theirs, ratio: ours.rps / theirs.rps, lowerBound });
    service.log(`${name}: ${ours.rps.toFixed(0)}/s vs ${peerName} ${theirs.rps.toFixed(0)}/s`);
  };

  await scenario('static route /healthz', 'bare NestJS route', 0.9, () =>
    compareHttp([
      { pid, opts: { url: `${authOrigin}/healthz` } },
      { pid: bare.pid, opts: { url: `${bare.origin}/healthz` } },
      ...(lower ? [{ pid: lower.pid, opts: { url: `${lower.origin}/healthz` } }] : []),
    ]),
  );

  await scenario('GET /management-auth/current', 'userinfo, opaque token', 1.5, async () => {
    const ours = await service.apiSignIn(ctx, `current-${tag}@bench.example`);
    const theirs = await peerSignIn(peer, `acc_current_${tag}`, { resource: false });
    return compareHttp([
      {
        pid,
        opts: {
          url: `${authOrigin}/management-auth/current`,
          headers: { authorization: `Bearer ${ours.access_token}` },
        },
      },
      {
        pid: peer.pid,
        opts: { url: `${peer.origin}/me`, headers: { authorization: `Bearer ${theirs.access_token}` } },
      },
    ]);
  });

  await scenario('refresh grant (rotation chains)', 'refresh grant, RS256 JWT', 1.5, async () => {
    const ourPool = await chainPool((i) => service.apiSignIn(ctx, `chain-${tag}-${i}@bench.example`));
    const peerPool = await chainPool((i) => peerSignIn(peer, `acc_chain_${tag}_${i}`));
    const ourToken = `${authOrigin}/management-auth/token`;
    const peerToken = `${peer.origin}/token`;
    const sides = [
      { pid, opts: () => ({ url: ourToken, requests: [service.refreshChainRequest(ourToken, ctx.basic, ourPool)] }) },
      {
        pid: peer.pid,
        opts: () => ({ url: peerToken, requests: [service.refreshChainRequest(peerToken, peer.basic, peerPool)] }),
      },
    ];
    if (lower) {
      const lowerPool = await chainPool(async () => ({ refresh_token: await lower.refreshChain() }));
      const lowerToken = `${lower.origin}/management-auth/token`;
      sides.push({
        pid: lower.pid,
        opts: () => ({ url: lowerToken, requests: [service.refreshChainRequest(lowerToken, lower.basic, lowerPool)] }),
      });
    }
    return compareHttp(sides);
  });

  const guestCreation = (origin) => ({
    url: `${origin}/t/bench/guest`,
    requests: [
      {
        method: 'POST',
        setupRequest: (req) => ({
          ...req,
          headers: { 'content-type': 'application/json', host: new URL(origin).host },
          body: JSON.stringify({
            client_id: 'cli_bench',
            browser_flow_id: `flw_${randomBytes(12).toString('base64url')}`,
          }),
        }),
      },
    ],
  });
  await scenario('POST /t/{tenant}/guest', 'client_credentials, RS256 JWT', 1.0, () =>
    compareHttp([
      { pid, opts: guestCreation(authOrigin) },
      { pid: peer.pid, opts: { url: `${peer.origin}/token`, ...clientCredentialsRequest(peer) } },
      ...(lower ? [{ pid: lower.pid, opts: guestCreation(lower.origin) }] : []),
    ]),
  );

  await scenario(`complete sign-ins (${SIGN_IN_CONCURRENCY} concurrent)`, 'authorization code + PKCE flows', 1.0, () =>
    compareFlows([
      { pid, flow: (i) => service.bffSignIn(ctx, `signin-${tag}-${i}@bench.example`) },
      { pid: peer.pid, flow: (i) => peerSignIn(peer, `acc_signin_${tag}_${i}`) },
    ]),
  );

  const rss = { ours: service.peakRssMb(pid), peer: service.peakRssMb(peer.pid) };
  await Promise.all([bare.stop(), peer.stop(), stop(), lower?.stop()]);
  await dropKeys([ctx.redisKeyPrefix, peer.keyPrefix, ...(lower ? [lower.keyPrefix] : [])]);
  report(scenarios, rss);
}

/** The run's Redis keys (every server's), so repeated runs leave nothing behind. */
async function dropKeys(prefixes) {
  const redis = new Redis('redis://127.0.0.1:6379');
  for (const prefix of prefixes) {
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 1000 }))
      if (keys.length > 0) await redis.unlink(...keys);
  }
  redis.disconnect();
}

function report(scenarios, rss) {
  const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-');
  const machine = `${cpus()[0].model}, ${cpus().length} CPUs`;
  const date = new Date().toISOString().slice(0, 10);
  const targets = scenarios.map((s) => ({
    name: `${s.name} >= ${s.target < 1 ? `${s.target * 100} %` : `${s.target}x`} of ${s.peerName}`,
    value: `${fmt(s.ratio, 2)}x`,
    met: s.ratio >= s.target,
  }));
  targets.push({
    name: 'peak RSS <= the peer’s',
    value: `${fmt(rss.ours)} vs ${fmt(rss.peer)} MB`,
    met: rss.ours <= rss.peer,
  });
  const non2xx = scenarios.reduce((a, s) => a + s.ours.non2xx + s.peer.non2xx + (s.lowerBound?.non2xx ?? 0), 0);
  targets.push({ name: 'zero non-2xx (every server)', value: String(non2xx), met: non2xx === 0 });

  const head = [
    'scenario',
    'ours/s',
    'p50',
    'p99',
    'CPU µs',
    'peer',
    'peer/s',
    'p50',
    'p99',
    'CPU µs',
    'ratio',
    'target',
    'non-2xx',
  ];
  const row = (name, ours, s, ratio) => [
    name,
    fmt(ours.rps),
    fmt(ours.p50, 1),
    fmt(ours.p99, 1),
    fmt(ours.cpuUs),
    s.peerName,
    fmt(s.peer.rps),
    fmt(s.peer.p50, 1),
    fmt(s.peer.p99, 1),
    fmt(s.peer.cpuUs),
    `${fmt(ratio, 2)}x`,
    `${s.target}x`,
    `${ours.non2xx}/${s.peer.non2xx}`,
  ];
  const rows = scenarios.flatMap((s) => [
    row(s.name, s.ours, s, s.ratio),
    ...(s.lowerBound ? [row('  lower bound (bench/lower-bound.js)', s.lowerBound, s, s.lowerBound.ratio)] : []),
  ]);
  rows.push([
    'peak RSS MB',
    fmt(rss.ours),
    '',
    '',
    '',
    'oidc-provider',
    fmt(rss.peer),
    '',
    '',
    '',
    `${fmt(rss.ours / rss.peer, 2)}x`,
    '<= 1x',
    '',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(
    `\nsvc-auth vs peer, ${date}, ${machine}, Node ${process.version}; servers on CPU 0, load on CPU 1; ` +
      `${CONNECTIONS} connections (sign-ins: ${SIGN_IN_CONCURRENCY}), ${RUNS} alternating runs x ${DURATION} s, medians; latency in ms, server CPU per request or flow in µs\n`,
  );
  console.log(line(head));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  rows.forEach((r) => console.log(line(r)));
  console.log('\ntargets (ratios of this run):');
  for (const t of targets) console.log(`  ${t.met ? 'met   ' : 'MISSED'} ${t.name}: ${t.value}`);

  mkdirSync(OUT, { recursive: true });
  const side = (r) => ({ rps: r.rps, p50: r.p50, p99: r.p99, cpuUs: r.cpuUs, non2xx: r.non2xx, peakRssMb: r.rssMb });
  writeFileSync(
    join(OUT, 'latest.json'),
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        machine,
        node: process.version,
        connections: CONNECTIONS,
        signInConcurrency: SIGN_IN_CONCURRENCY,
        runs: RUNS,
        secondsPerRun: DURATION,
        scenarios: scenarios.map((s) => ({
          name: s.name,
          peerName: s.peerName,
          ours: side(s.ours),
          peer: side(s.peer),
          ratio: s.ratio,
          target: s.target,
          met: s.ratio >= s.target,
          ...(s.lowerBound ? { lowerBound: { ...side(s.lowerBound), ratio: s.lowerBound.ratio } } : {}),
        })),
        peakRssMb: rss,
        targets,
      },
      null,
      2,
    )}\n`,
  );
  service.log(`wrote ${join(OUT, 'latest.json')}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
