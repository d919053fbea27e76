// The bench's table and bench/out/latest.json: the figures of one run and the ratios between its
// sides. Targets are ratios of one run (the machine is shared and noisy): a missed one is printed
// as below target, never a failure of the run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { CONNECTIONS, DURATION, RUNS, SIGN_IN_CONCURRENCY, type Figures } from './measure';
import { log, ROOT } from './service';

/** Issue 24: every hot route reaches this share of its lower bound's requests per second. */
export const LOWER_BOUND_TARGET = 0.85;
/** Issue 24: our peak RSS at most this share of the peer's. */
export const RSS_TARGET = 0.7;

export interface Scenario {
  readonly name: string;
  readonly peerName: string;
  /** Ours over the peer, to reach; null where the ratio is reported only. */
  readonly target: number | null;
  readonly ours: Figures;
  readonly peer: Figures;
  /** The lower bound (bench/peers/lower-bound.ts) where it implements the route. */
  readonly lowerBound?: Figures;
}

const fmt = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-');
const ratio = (a: Figures, b: Figures) => a.rps / b.rps;
/**
 * The same ratio from server CPU time per request (the counterpart's µs over ours): when other
 * work shares the cores, requests per second of both sides move with it, their CPU per request least.
 */
const ratioByCpu = (a: Figures, b: Figures) => b.cpuUs / a.cpuUs;
/**
 * The ratio in each run alone, ours against the counterpart run just beside it: how far a median
 * at the line could move on this machine, so a verdict within the spread reads as a tie.
 */
const runRatios = (a: Figures, b: Figures) => a.runsRps.map((rps, i) => rps / (b.runsRps[i] ?? NaN));
const spread = (a: Figures, b: Figures) => {
  const rs = runRatios(a, b);
  return `runs ${fmt(Math.min(...rs), 2)}–${fmt(Math.max(...rs), 2)}x`;
};

export function report(scenarios: readonly Scenario[], rss: { ours: number; peer: number }): void {
  const machine = `${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} CPUs`;
  const head = ['scenario', '/s', 'p50', 'p99', 'CPU µs', 'non-2xx', 'vs peer', 'target', 'of lower bound'];
  const row = (name: string, f: Figures, s: Scenario, target: string, ofFloor: string) => [
    name,
    fmt(f.rps),
    fmt(f.p50, 1),
    fmt(f.p99, 1),
    fmt(f.cpuUs),
    String(f.non2xx),
    `${fmt(ratio(f, s.peer), 2)}x`,
    target,
    ofFloor,
  ];
  const rows = scenarios.flatMap((s) => [
    row(
      s.name,
      s.ours,
      s,
      s.target === null ? 'reported' : `${s.target}x`,
      s.lowerBound ? `${fmt((100 * s.ours.rps) / s.lowerBound.rps)} %` : 'not built',
    ),
    row(`  peer: ${s.peerName}`, s.peer, s, '', ''),
    ...(s.lowerBound ? [row('  lower bound', s.lowerBound, s, '', '')] : []),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  console.log(
    `\nsvc-auth, its peer and its lower bound, ${new Date().toISOString().slice(0, 10)}, ${machine}, Node ${process.version}; ` +
      `servers on CPU 0, load on CPU 1; ${CONNECTIONS} connections (sign-ins: ${SIGN_IN_CONCURRENCY}), ` +
      `${RUNS} alternating runs x ${DURATION} s, medians; latency in ms, server CPU per request or flow in µs\n`,
  );
  console.log(line(head));
  console.log(line(widths.map((w) => '-'.repeat(w))));
  rows.forEach((r) => console.log(line(r)));
  console.log(`\npeak RSS: ours ${fmt(rss.ours)} MB, oidc-provider ${fmt(rss.peer)} MB`);
  console.log('\ntargets (ratios of this run):');
  const verdict = (reached: boolean) => (reached ? 'reached     ' : 'below target');
  for (const s of scenarios) {
    const r = ratio(s.ours, s.peer);
    if (s.target !== null)
      console.log(
        `  ${verdict(r >= s.target)} ${s.name}: ${fmt(r, 2)}x the peer, of ${s.target}x` +
          ` (${spread(s.ours, s.peer)}; by CPU: ${fmt(ratioByCpu(s.ours, s.peer), 2)}x)`,
      );
    if (s.lowerBound) {
      const f = ratio(s.ours, s.lowerBound);
      console.log(
        `  ${verdict(f >= LOWER_BOUND_TARGET)} ${s.name}: ${fmt(f, 2)}x its lower bound, of ${LOWER_BOUND_TARGET}x` +
          ` (${spread(s.ours, s.lowerBound)}; by CPU: ${fmt(ratioByCpu(s.ours, s.lowerBound), 2)}x;` +
          ` the lower bound: ${fmt(ratio(s.lowerBound, s.peer), 2)}x the peer)`,
      );
    }
  }
  const rssRatio = rss.ours / rss.peer;
  console.log(
    `  ${verdict(rssRatio <= RSS_TARGET)} peak RSS: ${fmt(rssRatio, 2)}x the peer's, of at most ${RSS_TARGET}x`,
  );
  const failures = scenarios.reduce((a, s) => a + s.ours.non2xx + s.peer.non2xx + (s.lowerBound?.non2xx ?? 0), 0);
  console.log(`  ${verdict(failures === 0)} no non-2xx answer on any server: ${failures}`);

  const out = join(ROOT, 'bench/out');
  mkdirSync(out, { recursive: true });
  const figures = (f: Figures) => ({ ...f, rssMb: undefined, peakRssMb: f.rssMb });
  writeFileSync(
    join(out, 'latest.json'),
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
          target: s.target,
          ratio: ratio(s.ours, s.peer),
          ratioByCpu: ratioByCpu(s.ours, s.peer),
          ratioOfEachRun: runRatios(s.ours, s.peer),
          ours: figures(s.ours),
          peer: figures(s.peer),
          ...(s.lowerBound
            ? {
                lowerBound: { ...figures(s.lowerBound), ratio: ratio(s.lowerBound, s.peer) },
                ofLowerBound: ratio(s.ours, s.lowerBound),
                ofLowerBoundByCpu: ratioByCpu(s.ours, s.lowerBound),
                ofLowerBoundOfEachRun: runRatios(s.ours, s.lowerBound),
                lowerBoundTarget: LOWER_BOUND_TARGET,
              }
            : {}),
        })),
        peakRssMb: rss,
        rssRatio: rss.ours / rss.peer,
        rssTarget: RSS_TARGET,
      },
      null,
      2,
    )}\n`,
  );
  log(`wrote ${join(out, 'latest.json')}`);
}
