// npm run soak: a bounded soak (5 minutes by default, SOAK_SECONDS to change) at moderate load:
// current, refresh rotation chains and sign-ins at fixed rates. Samples the server's RSS and the
// error count every 15 s and fails if memory keeps growing or errors appear.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { ManagementTokens } from '../test/support/management-flow';
import { refreshChainRequest } from './measure';
import { apiSignIn, log, startService } from './service';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 300);
const SAMPLE_SECONDS = 15;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

const cannon = (opts: autocannon.Options) =>
  new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(opts, (err, res) => (err ? reject(err) : resolve(res)));
  });

async function main(): Promise<void> {
  const service = await startService();
  const { authOrigin } = service.t;
  // Access tokens live 5 minutes: like a real client, the soak refreshes its token every minute.
  let session: ManagementTokens = await apiSignIn(service, 'soak-0@bench.example');
  const refresher = setInterval(() => {
    fetch(`${authOrigin}/management-auth/token`, {
      method: 'POST',
      headers: { authorization: service.basic, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: session.refresh_token }),
    })
      .then(async (res) => {
        if (res.status !== 200) throw new Error(`refresh answered ${res.status}`);
        session = (await res.json()) as ManagementTokens;
      })
      .catch((err: Error) => log(`token refresh failed: ${err.message}`));
  }, 60_000);
  const pool: string[] = [];
  for (let i = 0; i < 30; i++) pool.push((await apiSignIn(service, `soak-chain-${i}@bench.example`)).refresh_token);

  const common = { duration: SECONDS, connections: 10 };
  const tokenUrl = `${authOrigin}/management-auth/token`;
  const runs = [
    cannon({
      ...common,
      url: `${authOrigin}/management-auth/current`,
      overallRate: 300,
      requests: [
        {
          setupRequest: (req) => ({
            ...req,
            headers: { ...req.headers, authorization: `Bearer ${session.access_token}` },
          }),
        },
      ],
    }),
    cannon({
      ...common,
      url: tokenUrl,
      overallRate: 50,
      requests: [refreshChainRequest(tokenUrl, pool, { authorization: service.basic })],
    }),
  ];
  let signIns = 0;
  let signInErrors = 0;
  const until = Date.now() + SECONDS * 1000;
  const signInLoop = (async () => {
    while (Date.now() < until) {
      await apiSignIn(service, `soak-${signIns}@bench.example`).then(
        () => signIns++,
        () => signInErrors++,
      );
      await sleep(200);
    }
  })();

  const samples: Array<{ t: number; rss: number }> = [];
  while (Date.now() < until) {
    await sleep(SAMPLE_SECONDS * 1000);
    samples.push({ t: samples.length * SAMPLE_SECONDS + SAMPLE_SECONDS, rss: rssMb(service.pid) });
    log(`t=${samples.at(-1)?.t}s rss=${samples.at(-1)?.rss.toFixed(1)} MB sign-ins=${signIns} errors=${signInErrors}`);
  }
  const results = await Promise.all(runs);
  clearInterval(refresher);
  await signInLoop;
  await service.stop();

  const errors = results.reduce((a, r) => a + r.non2xx + r.errors + r.timeouts, 0) + signInErrors;
  // Compare the average of the last third with the middle third: after warm-up, memory is flat
  // when the later samples are not higher by more than 10 %.
  const third = Math.max(1, Math.floor(samples.length / 3));
  const avg = (xs: ReadonlyArray<{ rss: number }>) => xs.reduce((a, s) => a + s.rss, 0) / xs.length;
  const middle = avg(samples.slice(third, 2 * third));
  const last = avg(samples.slice(-third));
  const names = ['current', 'refresh'];
  const detail = results.map(
    (r, i) =>
      `${names[i]} ${r.requests.total} req (non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts}, status ${JSON.stringify(r.statusCodeStats)})`,
  );
  console.log(
    `\nsoak ${SECONDS} s: ${detail.join('; ')}; ${signIns} sign-ins (${signInErrors} failed); ${errors} errors`,
  );
  console.log(`rss samples (MB): ${samples.map((s) => s.rss.toFixed(0)).join(' ')}`);
  console.log(
    `rss middle third ${middle.toFixed(1)} MB, last third ${last.toFixed(1)} MB (${(((last - middle) / middle) * 100).toFixed(1)} %)`,
  );
  const flat = last <= middle * 1.1;
  console.log(`${flat ? 'MET ' : 'MISS'} memory flat; ${errors === 0 ? 'MET ' : 'MISS'} no errors`);
  process.exit(flat && errors === 0 ? 0 : 1);
}

main().catch((err: Error) => {
  console.error(err);
  process.exit(1);
});
