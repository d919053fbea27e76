// How the bench measures: every side of a scenario (ours, the peer, the lower bound) in alternating
// runs (A B A B A B) on the same pinned core, medians of the runs, and the server's CPU time per
// answered request from /proc, steadier than req/s when other work shares the machine.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import { log } from './service';

export const RUNS = Number(process.env.BENCH_RUNS ?? 3);
export const DURATION = Number(process.env.BENCH_SECONDS ?? 5);
const WARMUP_REQUESTS = Number(process.env.BENCH_WARMUP_REQUESTS ?? 10_000);
export const CONNECTIONS = 50;
export const SIGN_IN_CONCURRENCY = 10;

export interface Figures {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** Server CPU per answered request (or complete flow), µs. */
  readonly cpuUs: number;
  /** Answers other than 2xx, errors and timeouts, warm-up included. */
  readonly non2xx: number;
  readonly rssMb: number;
  /** Requests (or flows) per second of each run, in the order the runs alternated. */
  readonly runsRps: readonly number[];
}

export const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** Server CPU time in seconds (user + system), from /proc. */
export function cpuSeconds(pid: number): number {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export function peakRssMb(pid: number): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

function cannon(opts: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration: DURATION, ...opts }, (err, res) =>
      err ? reject(err) : resolve(res),
    );
  });
}

interface Run {
  rps: number;
  p50: number;
  p99: number;
  cpuUs: number;
  non2xx: number;
}

const summary = (runs: readonly Run[], pid: number, warmFailures: number): Figures => ({
  rps: median(runs.map((r) => r.rps)),
  cpuUs: median(runs.map((r) => r.cpuUs)),
  p50: median(runs.map((r) => r.p50)),
  p99: median(runs.map((r) => r.p99)),
  non2xx: runs.reduce((a, r) => a + r.non2xx, warmFailures),
  rssMb: peakRssMb(pid),
  runsRps: runs.map((r) => r.rps),
});

export interface HttpSide {
  readonly pid: number;
  /** A function when each run needs fresh state (the refresh chains). */
  readonly opts: autocannon.Options | (() => autocannon.Options);
}

/** A discarded warm-up of WARMUP_REQUESTS on each side (JIT, warm caches), then RUNS alternating runs. */
export async function compareHttp(sides: readonly HttpSide[]): Promise<Figures[]> {
  const optsOf = (side: HttpSide) => (typeof side.opts === 'function' ? side.opts() : side.opts);
  const failures = (r: autocannon.Result) => r.non2xx + r.errors + r.timeouts;
  const runs: Run[][] = sides.map(() => []);
  const warmFailures: number[] = [];
  for (const side of sides) warmFailures.push(failures(await cannon({ ...optsOf(side), amount: WARMUP_REQUESTS })));
  for (let i = 0; i < RUNS; i++) {
    for (const [k, side] of sides.entries()) {
      const cpu0 = cpuSeconds(side.pid);
      const r = await cannon(optsOf(side));
      const cpuUs = ((cpuSeconds(side.pid) - cpu0) * 1e6) / Math.max(1, r.requests.total);
      runs[k]?.push({ rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: failures(r), cpuUs });
    }
  }
  return sides.map((side, k) => summary(runs[k] ?? [], side.pid, warmFailures[k] ?? 0));
}

export interface FlowSide {
  readonly pid: number;
  flow(n: number): Promise<unknown>;
}

/** Complete flows per second with SIGN_IN_CONCURRENCY workers, alternating like compareHttp. */
export async function compareFlows(sides: readonly FlowSide[]): Promise<Figures[]> {
  const runOnce = async (side: FlowSide, seconds: number): Promise<Run> => {
    const latencies: number[] = [];
    let failed = 0;
    let n = 0;
    const cpu0 = cpuSeconds(side.pid);
    const started = Date.now();
    const until = started + seconds * 1000;
    await Promise.all(
      Array.from({ length: SIGN_IN_CONCURRENCY }, async () => {
        while (Date.now() < until) {
          const t0 = performance.now();
          try {
            await side.flow(n++);
            latencies.push(performance.now() - t0);
          } catch (err) {
            if (failed++ === 0) log(`flow failed: ${(err as Error).message}`);
          }
        }
      }),
    );
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
    const cpuUs = ((cpuSeconds(side.pid) - cpu0) * 1e6) / Math.max(1, latencies.length);
    return {
      rps: latencies.length / ((Date.now() - started) / 1000),
      p50: at(0.5),
      p99: at(0.99),
      non2xx: failed,
      cpuUs,
    };
  };
  const runs: Run[][] = sides.map(() => []);
  const warmFailures: number[] = [];
  for (const side of sides) warmFailures.push((await runOnce(side, 2)).non2xx);
  for (let i = 0; i < RUNS; i++) for (const [k, side] of sides.entries()) runs[k]?.push(await runOnce(side, DURATION));
  return sides.map((side, k) => summary(runs[k] ?? [], side.pid, warmFailures[k] ?? 0));
}

/**
 * Refresh tokens for rotation chains, each used once. A run that ends cuts up to one chain per
 * connection (its rotated token never arrives), so the pool holds enough for the warm-up and every run.
 */
export async function chainPool(refreshToken: (n: number) => Promise<string>): Promise<string[]> {
  const pool: string[] = [];
  const size = CONNECTIONS * (RUNS + 2);
  for (let i = 0; i < size; i += SIGN_IN_CONCURRENCY)
    pool.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(SIGN_IN_CONCURRENCY, size - i) }, (_, k) => refreshToken(i + k)),
      )),
    );
  return pool;
}

function takeToken(pool: string[]): string {
  const token = pool.pop();
  if (token === undefined) throw new Error('the refresh chain pool ran dry: every chain was cut');
  return token;
}

/**
 * A refresh grant as rotation chains: each request takes a token from the pool and puts the
 * rotated one back, so every token is used exactly once. `form` is the rest of the body.
 */
export function refreshChainRequest(
  tokenUrl: string,
  pool: string[],
  { authorization, form = '' }: { authorization?: string; form?: string },
): autocannon.Request {
  const headers = {
    ...(authorization ? { authorization } : {}),
    'content-type': 'application/x-www-form-urlencoded',
    host: new URL(tokenUrl).host,
  };
  return {
    method: 'POST',
    setupRequest: (req) => ({
      ...req,
      headers,
      body: `grant_type=refresh_token&refresh_token=${encodeURIComponent(takeToken(pool))}${form}`,
    }),
    onResponse: (status, body) => {
      if (status === 200) pool.unshift((JSON.parse(body) as { refresh_token: string }).refresh_token);
    },
  };
}

/**
 * The reuse rule (REFRESH_REUSE_INTERVAL): a connection rotates a token, then presents the same
 * token again at once, as a second tab or a retry after a lost answer does; that answer names the
 * same successor, which goes back to the pool. Half the requests rotate, half are reuses.
 */
export function refreshReuseRequests(tokenUrl: string, pool: string[], form: string): autocannon.Request[] {
  const headers = { 'content-type': 'application/x-www-form-urlencoded', host: new URL(tokenUrl).host };
  const body = (token: string) => `grant_type=refresh_token&refresh_token=${encodeURIComponent(token)}${form}`;
  return [
    {
      method: 'POST',
      setupRequest: (req, context) => {
        context.token = takeToken(pool);
        return { ...req, headers, body: body(context.token as string) };
      },
    },
    {
      method: 'POST',
      setupRequest: (req, context) => ({ ...req, headers, body: body(context.token as string) }),
      onResponse: (status, text) => {
        if (status === 200) pool.unshift((JSON.parse(text) as { refresh_token: string }).refresh_token);
      },
    },
  ];
}
