// Cheap runs: a burst of incidents through the daemon and the REAL run pipeline (process engine, claude
// adapter, triage off, no skills sources) with a stand-in agent that sleeps 200 ms, against a bare
// 8-wide pool spawning the same agent directly, measured in the same run. Also "run started" (claimed)
// → "agent launched" from the audit trail, p50/p90.
// Run: npx tsx bench/pipeline-burst.ts   (BURST_N=200 BURST_SLEEP_MS=200 BURST_CONCURRENCY=8)
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readState } from '../src/workspace/state.js';
import { dropIncident, startStandInDaemon, writeStandInAgent } from './stand-in-daemon.js';
import { percentile, printTable } from './table.js';
import { timePool } from './pool.js';
import { describeFolderCost, folderCost } from './folder-cost.js';

const N = Number(process.env.BURST_N ?? 200);
const SLEEP_MS = Number(process.env.BURST_SLEEP_MS ?? 200);
const CONCURRENCY = Number(process.env.BURST_CONCURRENCY ?? 8);
const TIMEOUT_MS = Number(process.env.BURST_TIMEOUT_MS ?? 600_000);

const barePool = (agent: string, root: string): Promise<number> =>
  timePool(
    root,
    N,
    CONCURRENCY,
    (_i, dir) =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(agent, [], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
        child.stdout.resume();
        child.stderr.resume();
        child.stdin.end('prompt');
        child.once('error', reject);
        child.once('close', () => resolve());
      }),
  );

// Measured before the bench writes (and later deletes) its own files.
const folder = folderCost(tmpdir());
const base = await mkdtemp(path.join(tmpdir(), 'bench-pipeline-burst-'));
const agent = await writeStandInAgent(base, SLEEP_MS);
const bareMs = await barePool(agent, path.join(base, 'bare'));

// Final states are counted from the store's changes: polling every state file from this process would
// load the same event loop the daemon runs on.
const finalDirs = new Set<string>();
let allFinal: () => void = () => undefined;
const done = new Promise<void>((resolve) => (allFinal = resolve));
const { root, daemon } = await startStandInDaemon({
  base,
  agent,
  concurrency: CONCURRENCY,
  rescanInterval: '5s',
  onChange: ({ dir, record }) => {
    if (record.state !== 'succeeded' && record.state !== 'failed') return;
    finalDirs.add(dir);
    if (finalDirs.size >= N) allFinal();
  },
});

const t0 = performance.now();
const cpu0 = process.cpuUsage();
for (let i = 0; i < N; i++) await dropIncident(root, `inc-${String(i).padStart(4, '0')}`, 'burst', i);
let timer: NodeJS.Timeout | undefined;
await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, TIMEOUT_MS)))]);
clearTimeout(timer);
const daemonMs = performance.now() - t0;
// This process is the daemon (plus the loop above that drops the incidents in): its CPU per run.
const cpu = process.cpuUsage(cpu0);
const cpuPerRunMs = (cpu.user + cpu.system) / 1000 / N;
const finals = finalDirs.size;
const folders = (await readdir(root)).filter((f) => f.startsWith('inc-'));
await daemon.stop();

const launchMs: number[] = [];
let failed = 0;
for (const f of folders) {
  const lines = (await readFile(path.join(root, f, '.triage', 'audit.jsonl'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; ts: string });
  const claimed = lines.find((l) => l.type === 'claimed');
  const launched = lines.find((l) => l.type === 'launched');
  if (claimed && launched) launchMs.push(Date.parse(launched.ts) - Date.parse(claimed.ts));
  if ((await readState(path.join(root, f)))?.state !== 'succeeded') failed++;
}
if (!process.env.BENCH_KEEP) await rm(base, { recursive: true, force: true });
else console.log(root);

console.log(describeFolderCost(tmpdir(), folder));
printTable(`pipeline burst: ${N} incidents, ${SLEEP_MS} ms agent, concurrency ${CONCURRENCY}`, [
  ['bare 8-wide pool (baseline)', `${(bareMs / 1000).toFixed(2)} s`, '1.00'],
  ['daemon + real pipeline', `${(daemonMs / 1000).toFixed(2)} s`, (daemonMs / bareMs).toFixed(2)],
  [
    'run started → agent launched, p50 / p90',
    `${percentile(launchMs, 50)} / ${percentile(launchMs, 90)} ms`,
    '',
  ],
  ['daemon CPU per run (user + system, this process)', `${cpuPerRunMs.toFixed(1)} ms`, ''],
  ['incidents not succeeded (must be 0)', String(failed + (N - finals)), ''],
]);
