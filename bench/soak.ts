// Soak: many incidents (2,000 by default, 10,000 with --full) through the daemon and the REAL run pipeline (process engine,
// claude adapter, triage off, no skills sources) with a stand-in agent, in this process. After every
// 1,000 finished incidents it records resident memory (after a GC when --expose-gc is given) and open
// file descriptors; throughout, once a second, it asks the status API for the incident list
// (GET /v1/incidents, its first page, what the status page and `status` use) and times the answer.
// Pass: RSS after the last within 20% of after the first 1,000, no file-descriptor growth, every
// listing within 100 ms (the status index's target, bench/status.ts).
// Run: node --expose-gc --import tsx bench/soak.ts [--full]   (SOAK_N=2000 SOAK_SLEEP_MS=20 SOAK_CONCURRENCY=8)
// SOAK_PROFILE=<file.cpuprofile> records a CPU profile of the last 1,000 incidents (where a tail shows).
// 2,000 incidents by default (what `npm run bench` runs, about 10 minutes here); `--full` (or
// SOAK_N=10000) runs the 10,000 of the target, about 21 minutes on 2 cores, which no default run does.
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createStatusRoutes } from '../src/server/routes/status.js';
import { IncidentIndex } from '../src/status/incident-index.js';
import { dropIncident, startStandInDaemon, writeStandInAgent } from './stand-in-daemon.js';
import { silentLogger } from '../src/log/logger.js';
import { percentile, printTable } from './table.js';

/** The full soak (10,000 incidents, about 21 minutes on 2 cores) runs only when asked for. */
const FULL = process.argv.includes('--full');
const N = Number(process.env.SOAK_N ?? (FULL ? 10_000 : 2_000));
const SLEEP_MS = Number(process.env.SOAK_SLEEP_MS ?? 20);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 8);
const SAMPLE_EVERY = Math.min(1000, Math.max(1, Math.floor(N / 10)));
const LISTING_TARGET_MS = 100;
// Incidents dropped in but not yet finished: enough to keep every slot busy, not a 10,000-deep queue.
const AHEAD = CONCURRENCY * 4;

/** A port free on loopback right now (the daemon's HTTP port 0 means "off"). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

const gc = (globalThis as { gc?: () => void }).gc;
/** Forced GCs so far: a listing that overlapped one waited on the bench's own GC, not the daemon. */
let forcedGcs = 0;
const sample = async () => {
  if (gc) {
    gc();
    forcedGcs++;
  }
  return {
    rssMiB: process.memoryUsage().rss / 1048576,
    fds: (await readdir('/proc/self/fd')).length,
  };
};

const base = await mkdtemp(path.join(tmpdir(), 'bench-soak-'));
const agent = await writeStandInAgent(base, SLEEP_MS);
const port = await freePort();
const root = path.join(base, 'root');
const log = silentLogger();
const index = new IncidentIndex({ root, log });
let finals = 0;
let failed = 0;
let onFinal: () => void = () => undefined;
const { config, daemon } = await startStandInDaemon({
  base,
  agent,
  concurrency: CONCURRENCY,
  rescanInterval: '30s',
  http: { host: '127.0.0.1', port },
  onChange: (change) => {
    index.apply(change);
    const s = change.record.state;
    if (s !== 'succeeded' && s !== 'failed') return;
    finals++;
    if (s === 'failed') failed++;
    onFinal();
  },
  server: (d, config) => ({
    routes: createStatusRoutes({ index, host: d, lease: { ttlMs: config.scheduling.lease_ttl }, log }),
    log,
  }),
});
// As the daemon command does: the index reads every folder once after start-up, then sweeps.
await index.load();
index.startSweeping(config.scheduling.rescan_interval);

// The status listing, timed once a second while the soak runs.
const listingMs: number[] = [];
let listingErrors = 0;
let overlappedGc = 0;
let listing = true;
const lister = (async () => {
  while (listing) {
    const t0 = performance.now();
    const gcsBefore = forcedGcs;
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/incidents`, {
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      if (!res.ok) listingErrors++;
      if (forcedGcs === gcsBefore) listingMs.push(performance.now() - t0);
      else overlappedGc++;
    } catch {
      listingErrors++;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
})();

// The CPU profile of the last 1,000 incidents, when asked for: started once that many are left.
const PROFILE = process.env.SOAK_PROFILE;
const profiler = PROFILE ? new Session() : undefined;
const startProfile = async () => {
  if (!profiler) return;
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.setSamplingInterval', { interval: 1000 });
  await profiler.post('Profiler.start');
};

const samples: { done: number; rssMiB: number; fds: number; listingP99: number }[] = [];
let listedAt = 0;
const t0 = performance.now();
const cpu0 = process.cpuUsage();
for (let i = 0; i < N; i++) {
  while (i - finals >= AHEAD) await new Promise<void>((r) => (onFinal = r));
  if (i === Math.max(0, N - 1000)) await startProfile();
  await dropIncident(root, `inc-${String(i).padStart(5, '0')}`, 'soak', i);
  if (finals >= (samples.length + 1) * SAMPLE_EVERY) {
    samples.push({
      done: finals,
      ...(await sample()),
      listingP99: percentile(listingMs.slice(listedAt), 99),
    });
    listedAt = listingMs.length;
  }
}
while (finals < N) await new Promise<void>((r) => (onFinal = r));
const elapsedS = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
samples.push({ done: finals, ...(await sample()), listingP99: percentile(listingMs.slice(listedAt), 99) });
listing = false;
await lister;
if (profiler && PROFILE) {
  const { profile } = await profiler.post('Profiler.stop');
  await writeFile(PROFILE, JSON.stringify(profile));
  profiler.disconnect();
}
await daemon.stop();
index.close();
if (!process.env.BENCH_KEEP) await rm(base, { recursive: true, force: true });
else console.log(root);

const first = samples[0] as (typeof samples)[number];
const last = samples.at(-1) as (typeof samples)[number];
const rssRatio = last.rssMiB / first.rssMiB;
const worstListing = Math.max(0, ...listingMs);
printTable(
  `soak: ${N} incidents, ${SLEEP_MS} ms agent, concurrency ${CONCURRENCY} (${elapsedS.toFixed(0)} s, GC before samples: ${gc ? 'yes' : 'no, run with --expose-gc'})`,
  [
    ...samples.map((s) => [
      `after ${s.done}: RSS / open fds / listing p99`,
      `${s.rssMiB.toFixed(0)} MiB / ${s.fds} / ${s.listingP99} ms`,
      (s.rssMiB / first.rssMiB).toFixed(2),
    ]),
    ['RSS last / first sample (≤ 1.20)', `${rssRatio.toFixed(2)}`, rssRatio <= 1.2 ? 'met' : 'NOT met'],
    ['open fds last − first (≤ 0)', String(last.fds - first.fds), last.fds <= first.fds ? 'met' : 'NOT met'],
    [
      `status listing, ${listingMs.length} requests (${overlappedGc} left out: they overlapped the bench's forced GC): p50 / p99 / max (≤ ${LISTING_TARGET_MS} ms)`,
      `${percentile(listingMs, 50)} / ${percentile(listingMs, 99)} / ${Math.round(worstListing)} ms`,
      worstListing <= LISTING_TARGET_MS && listingErrors === 0 ? 'met' : 'NOT met',
    ],
    ['daemon CPU per run', `${((cpu.user + cpu.system) / 1000 / N).toFixed(1)} ms`, ''],
    ['incidents failed, listing errors (must be 0)', `${failed}, ${listingErrors}`, ''],
  ],
);
