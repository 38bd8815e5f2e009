// Listing 10,000 incidents: the status index (what `GET /v1/incidents` and the page serve) against
// reading every workspace (what each request would cost without the index), measured in the same run.
// Also: loading the index at daemon start, and the HTTP listing of all 10,000 end to end.
// Run: npx tsx bench/status.ts   (STATUS_N=10000)
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeState, type IncidentState } from '../src/workspace/state.js';
import { startHttpServer } from '../src/server/http.js';
import { statusApiRoutes } from '../src/server/routes/status.js';
import { IncidentIndex } from '../src/status/incident-index.js';
import { readAllFacts } from '../src/status/scan.js';
import { viewOf, withAge } from '../src/status/view.js';

const N = Number(process.env.STATUS_N ?? 10_000);
const STATES: IncidentState[] = [
  'succeeded',
  'succeeded',
  'succeeded',
  'failed',
  'rejected',
  'queued',
  'resolved',
];

const root = await mkdtemp(path.join(tmpdir(), 'bench-status-'));
const tCreate = performance.now();
for (let start = 0; start < N; start += 500) {
  await Promise.all(
    Array.from({ length: Math.min(500, N - start) }, async (_, k) => {
      const i = start + k;
      const dir = path.join(root, `inc-${String(i).padStart(5, '0')}`);
      const state = STATES[i % STATES.length] as IncidentState;
      const runId = `run-${i}`;
      await mkdir(path.join(dir, '.triage', 'runs', runId), { recursive: true });
      await writeFile(path.join(dir, 'incident.json'), JSON.stringify({ incidentId: `inc-${i}` }));
      await writeState(path.join(dir, '.triage', 'state.json'), {
        incidentId: `inc-${i}`,
        state,
        attempts: state === 'queued' || state === 'rejected' ? 0 : 1,
        updatedAt: new Date(Date.UTC(2026, 10, 22) + i * 1000).toISOString(),
        runs: state === 'succeeded' || state === 'failed' ? [{ id: runId, status: state }] : [],
        ...(state === 'failed' ? { reason: 'the agent timed out' } : {}),
      });
      if (state !== 'succeeded' && state !== 'failed') return;
      const reportBytes = state === 'succeeded' ? 2048 : 0;
      await writeFile(
        path.join(dir, '.triage', 'runs', runId, 'result.json'),
        JSON.stringify({
          status: state,
          exitCode: state === 'succeeded' ? 0 : 1,
          agent: 'claude',
          engine: 'docker',
          startedAt: '2026-11-22T00:00:00Z',
          finishedAt: '2026-11-22T00:02:00Z',
          durationMs: 120_000,
          tokens: { input: 20_000, output: 2_000 },
          costUsd: 0.3,
          report: { path: '/workspace/output/investigation.md', bytes: reportBytes, missingSections: [] },
          answer: `Hypothesis ${i}: the pod crash-loops on a missing key; confidence high; first action: restore it`,
        }),
      );
      if (reportBytes) {
        await mkdir(path.join(dir, 'output'));
        await writeFile(path.join(dir, 'output', 'investigation.md'), 'x'.repeat(reportBytes));
      }
    }),
  );
}
const createMs = performance.now() - tCreate;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
async function time(runs: number, fn: () => unknown): Promise<number> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return median(out);
}

// Baseline: the listing without an index, reading every workspace as a request would have to.
const baselineMs = await time(3, async () => {
  const now = Date.now();
  const views = (await readAllFacts(root)).map((f) => withAge(viewOf(f), f.arrivedAtMs, now));
  return JSON.stringify(views).length;
});

const index = new IncidentIndex({ root });
const tLoad = performance.now();
const loaded = await index.load();
const loadMs = performance.now() - tLoad;
if (loaded.count !== N) throw new Error(`index loaded ${loaded.count} incidents, expected ${N}`);

const listMs = await time(20, () => JSON.stringify(index.list({ limit: N })).length);
// What GET /v1/incidents sends: each view's JSON is kept, only its age is spliced in.
const listJsonMs = await time(20, () => index.listJson({ limit: N }).length);
const pageMs = await time(50, () => JSON.stringify(index.list({ limit: 100, state: 'failed' })).length);
/** Median time of `list` right after one incident changed (the change itself is not timed). */
async function afterChange(runs: number, list: () => unknown): Promise<number> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    // The oldest folders become the newest: each change moves an entry across the whole order.
    const file = path.join(root, `inc-${String(i).padStart(5, '0')}`, '.triage', 'state.json');
    const state = JSON.parse(await readFile(file, 'utf8')) as { updatedAt: string };
    await writeFile(
      file,
      JSON.stringify({ ...state, updatedAt: new Date(Date.UTC(2027, 0, 1) + i).toISOString() }),
    );
    await index.refresh(path.basename(path.dirname(path.dirname(file))));
    const t0 = performance.now();
    list();
    out.push(performance.now() - t0);
  }
  return median(out);
}
const firstPageMs = await time(50, () => index.listJson({}).length);
const listAfterChangeMs = await afterChange(20, () => JSON.stringify(index.list({ limit: N })).length);
// The first page (100) after a change: what the status page and `status` ask while incidents run.
const firstPageAfterChangeMs = await afterChange(50, () => index.listJson({}).length);

const server = await startHttpServer({
  port: 0,
  host: '127.0.0.1',
  readiness: async () => ({ ok: true, checks: [] }),
  metrics: { render: async () => '', contentType: 'text/plain' },
  routes: [statusApiRoutes({ index })],
  limits: { rateLimitMax: 0 },
});
const url = `http://127.0.0.1:${server.port}/v1/incidents?limit=${N}`;
let httpCount = 0;
const httpMs = await time(10, async () => {
  const body = (await (await fetch(url)).json()) as { incidents: unknown[] };
  httpCount = body.incidents.length;
});
await server.close();
index.close();
await rm(root, { recursive: true, force: true });

const rows: [string, number][] = [
  [`baseline: read every workspace (${N})`, baselineMs],
  [`index load at daemon start (${N})`, loadMs],
  [`index list all ${N} + JSON`, listMs],
  [`index list all ${N} as the API sends it (kept JSON)`, listJsonMs],
  [`index list all ${N} after a change + JSON`, listAfterChangeMs],
  ['index first page of 100 as the API sends it', firstPageMs],
  ['index first page of 100 as the API sends it, after a change', firstPageAfterChangeMs],
  ['index page of 100, filtered by state + JSON', pageMs],
  [`HTTP GET /v1/incidents?limit=${N} (${httpCount} incidents)`, httpMs],
];
console.log(`status listing, ${N} incidents (fixture written in ${Math.round(createMs)} ms)`);
console.log('| what | median ms | baseline / this |');
console.log('|---|---:|---:|');
for (const [what, ms] of rows)
  console.log(`| ${what} | ${ms < 1 ? ms.toFixed(2) : ms.toFixed(1)} | ${(baselineMs / ms).toFixed(1)}x |`);
console.log(
  `target: listing ${N} incidents <= 100 ms: ${listMs <= 100 && httpMs <= 100 ? 'met' : 'NOT met'}`,
);
