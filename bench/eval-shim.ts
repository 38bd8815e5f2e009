// The frozen-cluster kubectl's cost per call, as an agent pays it: the compiled shim spawned through
// its sh wrapper (answering `get pods -o wide` and a generated `describe pod`) against a bare
// `node -e ''` spawn measured in the same run, plus the in-process answer alone.
// Needs the compiled CLI (npm run build). Run: npx tsx bench/eval-shim.ts   (BENCH_SHIM_CALLS=30)
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { compileCluster } from '../src/eval/cases/compile.js';
import { answer } from '../src/eval/shim/answer.js';
import { classifyKubectl } from '../src/kubectl/policy/classify.js';
import type * as InstallShim from '../src/eval/install-shim.js';

const CALLS = Number(process.env.BENCH_SHIM_CALLS ?? 30);
const ROOT = path.resolve(import.meta.dirname, '..');
const CASE = path.join(ROOT, 'examples', 'evals', 'crashloop-bad-config');
const COMPILED = path.join(ROOT, 'dist', 'eval', 'install-shim.js');

const time = (fn: () => void): number => {
  const t = performance.now();
  fn();
  return performance.now() - t;
};
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? 0;

if (!existsSync(COMPILED)) {
  console.error(`${COMPILED} is missing: run npm run build first`);
  process.exit(2);
}
const dir = await mkdtemp(path.join(tmpdir(), 'bench-shim-'));
try {
  const cluster = await compileCluster(CASE, 'crashloop-bad-config');
  const { installShim } = (await import(COMPILED)) as typeof InstallShim;
  const shim = await installShim(path.join(dir, 'shim'), cluster);
  const env = { PATH: `${path.dirname(shim.kubectl)}:/usr/bin:/bin`, TRIAGE_RUN_DIR: dir };
  const rows: [string, number[]][] = [];
  const spawnRow = (name: string, file: string, args: string[]) =>
    rows.push([
      name,
      Array.from({ length: CALLS }, () => time(() => execFileSync(file, args, { env, stdio: 'pipe' }))),
    ]);
  spawnRow("baseline: node -e ''", process.execPath, ['-e', '']);
  spawnRow('kubectl get pods -n orders -o wide', shim.kubectl, ['get', 'pods', '-n', 'orders', '-o', 'wide']);
  spawnRow('kubectl describe pod … (generated)', shim.kubectl, [
    'describe',
    'pod',
    'orders-api-7f9c6d5b8d-x7k2p',
    '-n',
    'orders',
  ]);
  const cmd = classifyKubectl(['describe', 'pod', 'orders-api-7f9c6d5b8d-x7k2p', '-n', 'orders']);
  rows.push([
    'in process: describe answer only',
    Array.from({ length: CALLS * 10 }, () => time(() => answer(cmd, cluster))),
  ]);
  const base = pct(rows[0]?.[1] ?? [1], 0.5);
  console.log(`| measurement (${CALLS} calls) | p50 ms | p95 ms | p50 / baseline |`);
  console.log('|---|---:|---:|---:|');
  for (const [name, xs] of rows) {
    console.log(
      `| ${name} | ${pct(xs, 0.5).toFixed(1)} | ${pct(xs, 0.95).toFixed(1)} | ${(pct(xs, 0.5) / base).toFixed(2)} |`,
    );
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
