// The bench's table and bench/out/latest.json: the figures of one run and the ratios between its
// sides. Targets are ratios of one run (the machine is shared and noisy): a missed one is printed
// as below target, never a failure of the run.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { CONNECTIONS, DURATION, RUNS, SIGN_IN_CONCURRENCY, type Figures } from './measure';
import { log, ROOT } from './service';

export interface Scenario {
  readonly name: string;
  readonly peerName: string;
  /** Ours over the peer, to reach. */
  readonly target: number;
  readonly ours: Figures;
  readonly peer: Figures;
  /** The lower bound (bench/peers/lower-bound.ts) where it implements the route. */
  readonly lowerBound?: Figures;
}

const fmt = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-');
const ratio = (a: Figures, b: Figures) => a.rps / b.rps;

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
      `${s.target}x`,
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
  console.log('\ntargets (ratios of this run, ours over the peer):');
  for (const s of scenarios) {
    const r = ratio(s.ours, s.peer);
    const floor = s.lowerBound ? `; the lower bound reaches ${fmt(ratio(s.lowerBound, s.peer), 2)}x` : '';
    console.log(
      `  ${r >= s.target ? 'reached     ' : 'below target'} ${s.name}: ${fmt(r, 2)}x of ${s.target}x${floor}`,
    );
  }
  const failures = scenarios.reduce((a, s) => a + s.ours.non2xx + s.peer.non2xx + (s.lowerBound?.non2xx ?? 0), 0);
  console.log(`  ${failures === 0 ? 'reached     ' : 'below target'} no non-2xx answer on any server: ${failures}`);

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
          ours: figures(s.ours),
          peer: figures(s.peer),
          ...(s.lowerBound ? { lowerBound: { ...figures(s.lowerBound), ratio: ratio(s.lowerBound, s.peer) } } : {}),
        })),
        peakRssMb: rss,
      },
      null,
      2,
    )}\n`,
  );
  log(`wrote ${join(out, 'latest.json')}`);
}
