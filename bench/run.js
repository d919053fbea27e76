#!/usr/bin/env node
// npm run bench: throughput, latency and memory of the hot paths, printed as figures and as
// ratios to the framework floor and to the raw RS256 signing rate measured in the same run.
// The machine is shared and noisy, so targets are ratios, never absolute numbers.
'use strict';
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { cpus } = require('node:os');
const autocannon = require('autocannon');
const {
  startService,
  spawnServer,
  refreshChainRequest,
  apiSignIn,
  bffSignIn,
  peakRssMb,
  cpuSeconds,
  median,
  log,
} = require('./service');

const RUNS = Number(process.env.BENCH_RUNS || 3);
const DURATION = Number(process.env.BENCH_SECONDS || 5);
const WARMUP_REQUESTS = Number(process.env.BENCH_WARMUP_REQUESTS || 10_000);
const CONNECTIONS = 50;

function cannon(opts) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration: DURATION, ...opts }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  });
}

// BENCH_ONLY=refresh measures the floor and the named scenarios only (for profiling).
function wanted(name) {
  const only = process.env.BENCH_ONLY;
  return !only || name.includes('floor') || only.split(',').some((o) => name.includes(o));
}

async function measure(name, opts, serverPid) {
  if (!wanted(name)) return { name, rps: NaN, p50: NaN, p99: NaN, non2xx: 0, rssMb: peakRssMb(serverPid) };
  // A discarded warm-up of WARMUP_REQUESTS first: steady state is what an operator runs in
  // (JIT-compiled code, warm caches, and Node's check of the deprecated Buffer() constructor that
  // passport-http calls, which walks the stack on each call until it has run 10,000 times).
  const optsOfRun = () => (typeof opts === 'function' ? opts() : opts);
  const warm = await cannon({ ...optsOfRun(), amount: WARMUP_REQUESTS });
  const warmFailures = warm.non2xx + warm.errors + warm.timeouts;
  if (warmFailures > 0)
    log(`${name}: ${warmFailures} failed requests during the warm-up (status ${JSON.stringify(warm.statusCodeStats)})`);
  const runs = [];
  for (let i = 0; i < RUNS; i++) {
    const cpuBefore = cpuSeconds(serverPid);
    const r = await cannon(optsOfRun());
    const cpu = (cpuSeconds(serverPid) - cpuBefore) / r.duration;
    runs.push({
      rps: r.requests.average,
      p50: r.latency.p50,
      p99: r.latency.p99,
      non2xx: r.non2xx + r.errors + r.timeouts,
      cpu,
    });
  }
  const result = {
    name,
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
    rssMb: peakRssMb(serverPid),
    cpu: median(runs.map((r) => r.cpu)),
  };
  log(`${name}: ${result.rps.toFixed(0)} req/s`);
  return result;
}

/** Runs `node args` on the server's core (CPU 0) when there are two, and returns its stdout. */
function onServerCore(cores, args, env) {
  const [cmd, argv] = cores > 1 ? ['taskset', ['-c', '0', 'node', ...args]] : ['node', args];
  return execFileSync(cmd, argv, { env, encoding: 'utf8' });
}

// Raw RS256 signing rate of one core: measured in a child pinned to the server's CPU, so the
// ratio compares work done on the same core.
function rs256SignRate(jwk, cores) {
  const program = `
    const { createPrivateKey, sign } = require('node:crypto');
    const key = createPrivateKey({ key: JSON.parse(process.env.JWK), format: 'jwk' });
    const data = Buffer.from('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1c3JfeCJ9');
    for (let i = 0; i < 200; i++) sign('sha256', data, key);
    const start = process.hrtime.bigint(); let n = 0;
    while (process.hrtime.bigint() - start < 2000000000n) { sign('sha256', data, key); n++; }
    process.stdout.write(String(n / 2));`;
  return Number(onServerCore(cores, ['-e', program], { ...process.env, JWK: JSON.stringify(jwk) }));
}

// The refresh grant's own work without HTTP (bench/refresh-work.js), on the server's core while
// the server is idle: with the floor, it bounds what the refresh route could reach at best.
function refreshWorkRate(env, cores) {
  return JSON.parse(
    onServerCore(cores, [require.resolve('./refresh-work')], { ...env, WORK_CHAINS: String(CONNECTIONS) }),
  ).rps;
}

/**
 * Rotation chains: a pool of sessions; every refresh token is used exactly once. A run that ends
 * cuts up to one chain per connection (its rotated token never arrives), so the pool holds enough
 * chains for the warm-up and every run.
 */
async function refreshScenario(ctx) {
  const pool = [];
  for (let i = 0; i < CONNECTIONS * (RUNS + 2); i++)
    pool.push((await apiSignIn(ctx, `chain-${randomBytes(6).toString('hex')}@bench.example`)).refresh_token);
  return () => ({ url: `${ctx.authOrigin}/management-auth/token`, requests: [refreshChainRequest(ctx, pool)] });
}

async function main() {
  const { ctx, pid, cores, secrets, env, stopServer, stop } = await startService();
  const { authOrigin, consoleOrigin } = ctx;
  const port = new URL(authOrigin).port;

  const rsJwk = JSON.parse(secrets.SIGNING_KEYS).keys.find((k) => k.alg === 'RS256');
  const signRate = rs256SignRate(rsJwk, cores);
  log(`raw RS256 sign rate: ${signRate.toFixed(0)}/s`);

  const results = [];
  results.push(await measure('static route (floor)', { url: `${authOrigin}/healthz` }, pid));
  const floor = results[0].rps;

  const session = await apiSignIn(ctx, 'bench-0@bench.example');
  results.push(
    await measure(
      'GET /management-auth/current',
      { url: `${authOrigin}/management-auth/current`, headers: { authorization: `Bearer ${session.access_token}` } },
      pid,
    ),
  );

  results.push(
    await measure('refresh grant (rotation chain)', wanted('refresh') ? await refreshScenario(ctx) : {}, pid),
  );
  const workRate = refreshWorkRate(env, cores);
  log(`refresh work without HTTP: ${workRate.toFixed(0)}/s`);

  const guestProbe = await fetch(`${authOrigin}/t/bench/guest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: 'cli_bench', browser_flow_id: `flw_${randomBytes(12).toString('base64url')}` }),
  });
  if (guestProbe.status === 201) {
    results.push(
      await measure(
        'POST /t/{tenant}/guest',
        () => ({
          url: `${authOrigin}/t/bench/guest`,
          requests: [
            {
              method: 'POST',
              setupRequest: (req) => ({
                ...req,
                headers: { 'content-type': 'application/json', host: `localhost:${port}` },
                body: JSON.stringify({
                  client_id: 'cli_bench',
                  browser_flow_id: `flw_${randomBytes(12).toString('base64url')}`,
                }),
              }),
            },
          ],
        }),
        pid,
      ),
    );
  } else log(`guest creation not measured (probe answered ${guestProbe.status})`);

  const bffCookie = await bffSignIn(ctx).catch((err) => {
    log(`BFF proxy not measured: ${err.message}`);
    return null;
  });
  if (bffCookie) {
    results.push(
      await measure(
        'BFF proxied GET /api/management/tenants',
        { url: `${consoleOrigin}/api/management/tenants`, headers: { cookie: bffCookie } },
        pid,
      ),
    );
  }

  // Complete sign-ins per second, with 10 concurrent developers.
  const signIns = wanted('sign-in');
  let done = 0;
  let failed = 0;
  const until = Date.now() + DURATION * 1000;
  await Promise.all(
    Array.from({ length: 10 }, async (_, w) => {
      let i = 0;
      while (signIns && Date.now() < until) {
        try {
          await apiSignIn(ctx, `signin-${w}-${i++}@bench.example`);
          done++;
        } catch {
          failed++;
        }
      }
    }),
  );
  results.push({
    name: 'complete console sign-ins (10 concurrent)',
    rps: done / DURATION,
    p50: NaN,
    p99: NaN,
    non2xx: failed,
    rssMb: peakRssMb(pid),
  });

  // The same refresh route with Nest's handler swapped for a plain function (bench/refresh-route.js),
  // on a server started in place of the first one: what the route pipeline, passport and request
  // logging cost.
  await stopServer();
  const ablation = [];
  const labels = {
    passport: 'passport',
    direct: 'strategy check, no passport',
    unlogged: 'no passport, ahead of request logging',
  };
  for (const mode of wanted('refresh') ? Object.keys(labels) : []) {
    const variant = await spawnServer({ ...env, REFRESH_ROUTE: mode }, 'bench/refresh-route.js');
    ablation.push(await measure(`refresh, plain handler (${labels[mode]})`, await refreshScenario(ctx), variant.pid));
    await variant.stop();
  }
  await stop();
  report(results, floor, signRate, workRate, ablation);
}

function report(results, floor, signRate, workRate, ablation) {
  const limit = 1 / (1 / floor + 1 / signRate);
  // The refresh route if its HTTP pipeline cost no more than the floor's: floor plus its own work.
  const ceiling = 1 / (1 / floor + 1 / workRate);
  const fmt = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-');
  const rows = results.map((r) => [
    r.name,
    fmt(r.rps),
    fmt(r.p50, 1),
    fmt(r.p99, 1),
    fmt(r.rps / floor, 2),
    fmt(r.rps / signRate, 2),
    String(r.non2xx),
    fmt(r.rssMb, 1),
    fmt((r.cpu ?? NaN) * 100),
  ]);
  const head = [
    'scenario',
    'req/s',
    'p50 ms',
    'p99 ms',
    'x floor',
    'x RS256 sign',
    'non-2xx',
    'peak RSS MB',
    'server CPU %',
  ];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(
    `\nsvc-auth benchmark, ${new Date().toISOString().slice(0, 10)}, ${cpus()[0].model}, ${cpus().length} CPUs; ${CONNECTIONS} connections, ${RUNS} runs x ${DURATION} s, medians`,
  );
  console.log(`raw RS256 sign rate: ${fmt(signRate)}/s; refresh physical limit 1/(1/floor + 1/sign) = ${fmt(limit)}/s`);
  console.log(
    `refresh work without HTTP (rotation script + jose signing, 50 chains): ${fmt(workRate)}/s; with the floor it allows ${fmt(ceiling)}/s = ${fmt((100 * ceiling) / limit)} % of the limit\n`,
  );
  for (const a of ablation) {
    console.log(
      `${a.name}: ${fmt(a.rps)}/s = ${fmt((100 * a.rps) / limit)} % of the limit (p50 ${fmt(a.p50, 1)} ms, non-2xx ${a.non2xx})`,
    );
  }
  console.log('');
  console.log(line(head));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  rows.forEach((r) => console.log(line(r)));
  const by = (prefix) => results.find((r) => r.name.startsWith(prefix));
  const targets = [
    ['refresh grant >= 80 % of its physical limit', by('refresh') && by('refresh').rps / limit, 0.8],
    [
      'current >= 75 % of the floor',
      by('GET /management-auth/current') && by('GET /management-auth/current').rps / floor,
      0.75,
    ],
    ['guest creation >= 35 % of the floor', by('POST /t/') && by('POST /t/').rps / floor, 0.35],
  ];
  console.log('\ntargets (ratios in this run):');
  for (const [name, value, min] of targets) {
    console.log(
      `  ${value === undefined ? 'n/a ' : value >= min ? 'MET ' : 'MISS'} ${name}: ${value === undefined ? 'not measured' : `${(value * 100).toFixed(0)} %`}`,
    );
  }
  const peak = Math.max(...results.map((r) => r.rssMb));
  console.log(`  ${peak < 160 ? 'MET ' : 'MISS'} peak RSS < 160 MB: ${peak.toFixed(1)} MB`);
  const non2xx = [...results, ...ablation].reduce((a, r) => a + r.non2xx, 0);
  console.log(`  ${non2xx === 0 ? 'MET ' : 'MISS'} zero non-2xx responses: ${non2xx}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
