// Start-up with many finished workspaces (default 10,000): time until the daemon is ready (scan +
// watcher ready) and RSS, against a bare baseline measured in the same run: readdir + reading every
// state.json, with nothing else.
// Run: npx tsx bench/startup.ts   (STARTUP_N=10000)
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AuditLog } from '../src/audit/log.js';
import { configSchema } from '../src/config/schema.js';
import { Daemon } from '../src/daemon/daemon.js';
import type { RunExecutor } from '../src/run/types.js';
import { createLogger, silentLogger } from '../src/log/logger.js';

const N = Number(process.env.STARTUP_N ?? 10_000);
const executor: RunExecutor = {
  run: async () => ({ status: 'succeeded' }),
  adopt: async () => 'gone',
  readiness: async () => ({ ok: true, checks: [] }),
};

const root = await mkdtemp(path.join(tmpdir(), 'bench-startup-'));
const tCreate = performance.now();
for (let start = 0; start < N; start += 500) {
  await Promise.all(
    Array.from({ length: Math.min(500, N - start) }, async (_, k) => {
      const i = start + k;
      const dir = path.join(root, `done-${String(i).padStart(5, '0')}`);
      await mkdir(path.join(dir, '.triage'), { recursive: true });
      const incident = {
        incidentId: `done-${i}`,
        cluster: 'c',
        namespace: 'ns',
        resource: { kind: 'Pod', name: `p${i}` },
        faultType: 'CrashLoop',
        severity: 'high',
        timestamp: '2026-11-22T00:00:00Z',
      };
      await writeFile(path.join(dir, 'incident.json'), JSON.stringify(incident));
      const state = {
        incidentId: `done-${i}`,
        state: i % 10 === 0 ? 'failed' : 'succeeded',
        attempts: 1,
        updatedAt: '2026-11-22T00:01:00Z',
        runs: [{ id: `r${i}`, status: 'succeeded' }],
      };
      await writeFile(path.join(dir, '.triage', 'state.json'), JSON.stringify(state));
      await mkdir(path.join(dir, 'output'));
      await writeFile(path.join(dir, 'output', 'investigation.md'), '# report\n');
    }),
  );
}
const createMs = performance.now() - tCreate;

// Baseline: the least work that can tell finished from unfinished.
const rssBefore = process.memoryUsage().rss;
const tBase = performance.now();
const names = (await readdir(root)).filter((n) => !n.startsWith('.'));
let finished = 0;
for (let i = 0; i < names.length; i += 64) {
  const states = await Promise.all(
    names.slice(i, i + 64).map((n) => readFile(path.join(root, n, '.triage', 'state.json'), 'utf8')),
  );
  finished += states.filter((s) => /"state":"(succeeded|failed)"/.test(s)).length;
}
const baseMs = performance.now() - tBase;

const config = configSchema.parse({ workspaces_root: root, http: { port: 0 } });
const daemon = new Daemon({
  config,
  log: process.env.STARTUP_LOG ? createLogger({ level: process.env.STARTUP_LOG }) : silentLogger(),
  executor,
  audit: new AuditLog(),
});
const t0 = performance.now();
await daemon.start();
const readyMs = performance.now() - t0;
const rssReady = process.memoryUsage().rss;
const stats = daemon.stats();
await daemon.stop();
await rm(root, { recursive: true, force: true });

console.log(
  '| finished workspaces | daemon time to ready | baseline (readdir + read every state.json) | ratio | RSS before | RSS ready | queued after start |',
);
console.log('|---|---|---|---|---|---|---|');
console.log(
  `| ${N} (${finished} seen final) | ${readyMs.toFixed(0)} ms | ${baseMs.toFixed(0)} ms | ${(readyMs / baseMs).toFixed(1)}× | ${(rssBefore / 1048576).toFixed(0)} MiB | ${(rssReady / 1048576).toFixed(0)} MiB | ${stats.queued} |`,
);
console.log(`\n(fixture creation took ${(createMs / 1000).toFixed(1)} s)`);
