// Detection latency: from incident.json appearing to the run starting, for an atomic rename, an
// in-place single write and an in-place chunked write, against a bare fs.watch on the same folder
// reacting to the very same event (the fastest possible reaction on this machine).
// Run: npx tsx bench/detection.ts   (DETECTION_SAMPLES=50)
import { watch } from 'node:fs';
import { mkdir, mkdtemp, open, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AuditLog } from '../src/audit/log.js';
import { configSchema } from '../src/config/schema.js';
import { Daemon } from '../src/daemon/daemon.js';
import type { RunExecutor } from '../src/run/types.js';
import { createLogger } from '../src/log/logger.js';

const SAMPLES = Number(process.env.DETECTION_SAMPLES ?? 50);
type Style = 'rename' | 'in-place' | 'in-place chunked';

const started = new Map<string, (t: number) => void>();
const inspectedAt = new Map<string, number>();
const executor: RunExecutor = {
  run: async (req) => {
    started.get(req.workspace.incident.incidentId)?.(performance.now());
    return { status: 'succeeded', exitCode: 0 };
  },
  adopt: async () => 'gone',
  readiness: async () => ({ ok: true, checks: [] }),
};

const incident = (id: string) =>
  JSON.stringify({
    incidentId: id,
    cluster: 'bench',
    namespace: 'ns',
    resource: { kind: 'Pod', name: id },
    faultType: 'CrashLoop',
    severity: 'high',
    timestamp: new Date().toISOString(),
    context: { pad: 'x'.repeat(1500) },
  });

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};

async function sample(
  root: string,
  style: Style,
  i: number,
): Promise<{ daemon: number; reacted: number; baseline: number }> {
  const id = `${style.replace(/ /g, '-')}-${i}`;
  const dir = path.join(root, id);
  await mkdir(dir);
  await new Promise((r) => setTimeout(r, 60)); // let chokidar pick up the new folder
  const text = incident(id);
  const events: number[] = [];
  const fsw = watch(dir, (_event, name) => {
    if (name === 'incident.json') events.push(performance.now());
  });
  const runAt = new Promise<number>((resolve, reject) => {
    started.set(id, resolve);
    setTimeout(() => reject(new Error(`run of ${id} did not start within 10000 ms`)), 10_000).unref();
  });
  let t0: number;
  if (style === 'rename') {
    await writeFile(path.join(dir, 'incident.json.tmp'), text);
    t0 = performance.now();
    await rename(path.join(dir, 'incident.json.tmp'), path.join(dir, 'incident.json'));
  } else {
    t0 = performance.now();
    const handle = await open(path.join(dir, 'incident.json'), 'w');
    if (style === 'in-place') {
      await handle.write(text);
    } else {
      await handle.write(text.slice(0, 700));
      await new Promise((r) => setTimeout(r, 30));
      t0 = performance.now(); // measured from the last chunk: earlier bytes cannot be judged complete
      await handle.write(text.slice(700));
    }
    await handle.close();
  }
  const t2 = await runAt;
  fsw.close();
  const baselineAt = events.find((t) => t >= t0) ?? NaN;
  return { daemon: t2 - t0, reacted: (inspectedAt.get(id) ?? NaN) - t0, baseline: baselineAt - t0 };
}

const root = await mkdtemp(path.join(tmpdir(), 'bench-detect-'));
const config = configSchema.parse({
  workspaces_root: root,
  http: { port: 0 },
  scheduling: { max_concurrent: 64, max_per_cluster: 64 },
});
const daemon = new Daemon({
  config,
  // Trace lines tell when the daemon judged the file complete (its reaction, before any bookkeeping).
  log: createLogger({
    level: 'trace',
    destination: {
      write: (line: string) => {
        if (!line.includes('"workspace inspected"') || !line.includes('"judgement":"accept"')) return;
        const ws = (JSON.parse(line) as { workspace: string }).workspace;
        if (!inspectedAt.has(ws)) inspectedAt.set(ws, performance.now());
      },
    },
  }),
  executor,
  audit: new AuditLog(),
});
await daemon.start();
const rows: string[] = [];
for (const style of ['rename', 'in-place', 'in-place chunked'] as Style[]) {
  const d: number[] = [];
  const r0: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const r = await sample(root, style, i);
    d.push(r.daemon);
    if (!Number.isNaN(r.reacted)) r0.push(r.reacted);
    if (!Number.isNaN(r.baseline)) b.push(r.baseline);
  }
  const f = (x: number) => x.toFixed(2);
  rows.push(
    `| ${style} | ${SAMPLES} | ${f(pct(b, 50))} / ${f(pct(b, 99))} | ${f(pct(r0, 50))} / ${f(pct(r0, 99))} | ` +
      `${f(pct(d, 50))} / ${f(pct(d, 99))} | ${f(pct(d, 50) / pct(b, 50))}× |`,
  );
}
await daemon.stop();
await rm(root, { recursive: true, force: true });
console.log(
  '| write style | samples | bare fs.watch p50 / p99 ms | daemon judged it complete p50 / p99 ms | run started p50 / p99 ms | run-start p50 / fs.watch p50 |',
);
console.log('|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
console.log(
  '\nFrom incident.json appearing (chunked: from its last chunk). "Run started" = executor.run() called, after validation, ' +
    'lease, state.json writes and the claim audit entry.',
);
