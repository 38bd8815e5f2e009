// What the kubectl guard adds to one kubectl call, as an agent pays it: `kubectl get pods` through the
// guard's wrapper and client, the run's broker and a daemon-side kubectl stand-in (a sh script), against
// the stand-in run directly and a bare `node -e ''` spawn (the client is a node process), measured in
// the same run; plus a refused call (no kubectl runs) and the in-process decision alone.
//   npx tsx bench/kubectl-guard.ts          (BENCH_GUARD_CALLS=40, BENCH_KUBECTL=/usr/bin/kubectl)
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startBroker } from '../src/kubectl/broker/broker.js';
import { installGuard } from '../src/kubectl/broker/install-guard.js';
import { decideCall } from '../src/kubectl/policy/decide.js';
import { DEFAULT_HELPERS, compilePolicy } from '../src/kubectl/policy/policy.js';

const CALLS = Number(process.env.BENCH_GUARD_CALLS ?? 40);
const REAL_KUBECTL = process.env.BENCH_KUBECTL ?? '/usr/bin/kubectl';
const STAND_IN = '#!/bin/sh\nprintf "NAME    READY   STATUS\\nweb-1   1/1     Running\\n"\n';

// Calls are awaited, never synchronous: the broker answers from this same process.
const time = async (fn: () => Promise<void> | void): Promise<number> => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))] ?? 0;

const dir = await mkdtemp(path.join(tmpdir(), 'bench-guard-'));
const policy = compilePolicy(DEFAULT_HELPERS, 'kubernetes-sre', 'built-in');
let calls = 0;
const broker = await startBroker({
  socketPath: path.join(dir, 'kubectl.sock'),
  policy,
  kubectl: { command: path.join(dir, 'kubectl-real'), env: { PATH: '/usr/bin:/bin' }, cwd: dir },
  callTimeoutMs: 30_000,
  onCall: () => void calls++,
});
try {
  await writeFile(path.join(dir, 'kubectl-real'), STAND_IN, { mode: 0o755 });
  const guard = await installGuard(path.join(dir, 'guard'), {
    socketPath: broker.socketPath,
    nodePath: process.execPath,
    runId: 'bench',
  });
  const env = { PATH: '/usr/bin:/bin' };
  // A refusal exits 1: timed all the same.
  const run = (file: string, args: string[]) => () =>
    new Promise<void>((resolve) => execFile(file, args, { env }, () => resolve()));
  const rows: [string, number[]][] = [];
  // Interleaved, so that load from other work on the machine falls on every row alike.
  const series: [string, () => Promise<void>][] = [
    ['baseline: the stand-in kubectl run directly', run(path.join(dir, 'kubectl-real'), ['get', 'pods'])],
    ["node -e '' (the client's floor)", run(process.execPath, ['-e', ''])],
    ['kubectl get pods through the guard and broker', run(guard.kubectl, ['get', 'pods', '-n', 'shop'])],
    ['kubectl delete pod (refused by the broker)', run(guard.kubectl, ['delete', 'pod', 'web-1'])],
  ];
  // For scale, when the machine has one: a real kubectl that does not even reach a server.
  if (existsSync(REAL_KUBECTL))
    series.push(['for scale: real `kubectl version --client`', run(REAL_KUBECTL, ['version', '--client'])]);
  const samples = series.map(([name]) => [name, [] as number[]] as [string, number[]]);
  for (let i = 0; i < CALLS; i++) {
    for (const [k, [, fn]] of series.entries()) samples[k]?.[1].push(await time(fn));
  }
  rows.push(...samples);
  const decisions: number[] = [];
  for (let i = 0; i < CALLS * 10; i++)
    decisions.push(
      await time(() => void decideCall({ argv: ['get', 'pods', '-n', 'shop', '-o', 'wide'] }, policy)),
    );
  rows.push(['in process: decideCall alone', decisions]);
  const base = pct(rows[0]?.[1] ?? [1], 0.5);
  console.log(`| measurement (${CALLS} calls) | p50 ms | p95 ms | p50 / baseline |`);
  console.log('|---|---:|---:|---:|');
  for (const [name, xs] of rows) {
    console.log(
      `| ${name} | ${pct(xs, 0.5).toFixed(2)} | ${pct(xs, 0.95).toFixed(2)} | ${(pct(xs, 0.5) / base).toFixed(2)} |`,
    );
  }
  console.log(`\n${calls} calls recorded by the broker`);
} finally {
  await broker.stop();
  await rm(dir, { recursive: true, force: true });
}
