// `npm run bench`: every benchmark in bench/, one after another, each as its own node process (so that
// one's memory and loaded modules do not skew the next), printing their tables. BENCH_QUICK=1 runs the
// slow ones on smaller inputs; BENCH_ONLY=a,b runs only those files. The compiled CLI is built first
// (cold-start and eval-shim measure dist/). Exit code 1 when any benchmark failed.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCH = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.dirname(BENCH);
/** Shared modules and this runner: not benchmarks. */
const NOT_BENCHMARKS = new Set(['run.ts', 'table.ts', 'pool.ts', 'stand-in-daemon.ts', 'folder-cost.ts']);
/** Smaller inputs for the benchmarks that take minutes at full size. */
const QUICK: Record<string, Record<string, string>> = {
  'startup.ts': { STARTUP_N: '2000' },
  'pipeline-burst.ts': { BURST_N: '64' },
  // 2,000 by default; the 10,000 of the target only with `npx tsx bench/soak.ts --full`.
  'soak.ts': { SOAK_N: '500' },
  'burst.ts': { BURST_N: '200' },
  'alerts.ts': { ALERTS_N: '2000' },
  'status.ts': { STATUS_N: '2000' },
  // One round of each of the six orders of its three paths.
  'launch.ts': { BENCH_N: '6' },
  'gateway.ts': { BENCH_GATEWAY_CALLS: '100', BENCH_GATEWAY_MIB: '16' },
};

const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
const files = readdirSync(BENCH)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !NOT_BENCHMARKS.has(f))
  .filter((f) => !only || only.includes(f) || only.includes(f.replace(/\.ts$/, '')))
  .sort();
const quick = process.env.BENCH_QUICK === '1';

const build = spawnSync('npm', ['run', 'build'], { cwd: REPO, stdio: 'inherit' });
if (build.status !== 0) process.exit(1);

const results: { file: string; status: string; seconds: number }[] = [];
for (const file of files) {
  process.stdout.write(`\n## ${file}${quick && QUICK[file] ? ' (quick)' : ''}\n`);
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', path.join(BENCH, file)], {
    cwd: REPO,
    stdio: 'inherit',
    env: { ...process.env, ...(quick ? QUICK[file] : {}) },
  });
  const status = r.status === 0 ? 'ok' : `failed (${r.signal ?? `exit ${r.status}`})`;
  results.push({ file, status, seconds: (performance.now() - t0) / 1000 });
}
process.stdout.write('\n## summary\n');
for (const r of results)
  process.stdout.write(`${r.file.padEnd(24)} ${r.status.padEnd(20)} ${r.seconds.toFixed(1)} s\n`);
process.exitCode = results.every((r) => r.status === 'ok') ? 0 : 1;
