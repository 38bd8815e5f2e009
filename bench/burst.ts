// A burst of incidents (default 1,000) with max_concurrent 8 and a real fake agent process that
// sleeps 200 ms: wall time against the ideal (N / 8 × 0.2 s) and against a bare 8-wide pool running
// the same agent without the daemon (measured in the same run), incidents lost, peak RSS.
// Run: npx tsx bench/burst.ts   (BURST_N=1000 BURST_SLEEP_MS=200 BURST_CONCURRENCY=8)
import { mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AuditLog } from '../src/audit/log.js';
import { configSchema } from '../src/config/schema.js';
import { Daemon } from '../src/daemon/daemon.js';
import { readState } from '../src/workspace/state.js';
import { silentLogger } from '../src/log/logger.js';
import { createProcessFakeExecutor } from '../test/support/fake-executor.js';
import type { Workspace } from '../src/workspace/incident.js';
import { timePool } from './pool.js';

const N = Number(process.env.BURST_N ?? 1000);
const SLEEP_MS = Number(process.env.BURST_SLEEP_MS ?? 200);
const CONCURRENCY = Number(process.env.BURST_CONCURRENCY ?? 8);
const TIMEOUT_MS = Number(process.env.BURST_TIMEOUT_MS ?? 600_000);

const incident = (i: number) => ({
  incidentId: `burst-${i}`,
  cluster: `cluster-${i % 4}`,
  namespace: 'ns',
  resource: { kind: 'Pod', name: `pod-${i}` },
  faultType: 'CrashLoop',
  severity: i % 10 === 0 ? 'critical' : 'high',
  timestamp: new Date().toISOString(),
});

const baselinePool = (root: string): Promise<number> => {
  const executor = createProcessFakeExecutor({ sleepMs: SLEEP_MS });
  return timePool(root, N, CONCURRENCY, async (i, dir) => {
    const workspace = { dir, name: `b${i}`, incident: incident(i), incidentText: '' } as Workspace;
    await executor.run({
      workspace,
      runId: `r${i}`,
      attempt: 1,
      signal: new AbortController().signal,
      log: silentLogger(),
    });
  });
};

const base = await mkdtemp(path.join(tmpdir(), 'bench-burst-'));
const baselineMs = await baselinePool(path.join(base, 'baseline'));

const root = path.join(base, 'root');
await mkdir(root);
const config = configSchema.parse({
  workspaces_root: root,
  http: { port: 0 },
  scheduling: { max_concurrent: CONCURRENCY, max_per_cluster: CONCURRENCY, rescan_interval: '2s' },
});
const daemon = new Daemon({
  config,
  log: silentLogger(),
  executor: createProcessFakeExecutor({ sleepMs: SLEEP_MS }),
  audit: new AuditLog(),
});
await daemon.start();
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);

const t0 = performance.now();
for (let i = 0; i < N; i++) {
  const dir = path.join(root, `inc-${String(i).padStart(5, '0')}`);
  await mkdir(dir);
  await writeFile(path.join(dir, 'incident.json.tmp'), JSON.stringify(incident(i)));
  await rename(path.join(dir, 'incident.json.tmp'), path.join(dir, 'incident.json'));
}
const dropMs = performance.now() - t0;

const folders = (await readdir(root)).filter((f) => !f.startsWith('.'));
let finals: { state: string }[] = [];
const deadline = Date.now() + TIMEOUT_MS;
while (Date.now() < deadline) {
  const { queued, inFlight } = daemon.stats();
  if (queued === 0 && inFlight === 0) {
    finals = (await Promise.all(folders.map((f) => readState(path.join(root, f))))).filter(
      (s): s is NonNullable<typeof s> =>
        s !== undefined && ['succeeded', 'failed', 'rejected'].includes(s.state),
    );
    if (finals.length === N) break;
  }
  await new Promise((r) => setTimeout(r, 50));
}
const wallMs = performance.now() - t0;
clearInterval(sampler);
await daemon.stop();
const succeeded = finals.filter((s) => s.state === 'succeeded').length;
const idealMs = (N / CONCURRENCY) * SLEEP_MS;
await rm(base, { recursive: true, force: true });

console.log(
  '| incidents | max_concurrent | agent sleep | drop time | daemon wall | ideal | bare pool (same agent) | wall / ideal | wall / pool | succeeded | lost | peak RSS |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
console.log(
  `| ${N} | ${CONCURRENCY} | ${SLEEP_MS} ms | ${(dropMs / 1000).toFixed(1)} s | ${(wallMs / 1000).toFixed(1)} s | ${(idealMs / 1000).toFixed(1)} s | ${(baselineMs / 1000).toFixed(1)} s | ${(wallMs / idealMs).toFixed(2)}× | ${(wallMs / baselineMs).toFixed(2)}× | ${succeeded} | ${N - finals.length} | ${(peakRss / 1048576).toFixed(0)} MiB |`,
);
