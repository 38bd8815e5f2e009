// A burst of Alertmanager deliveries against POST /v1/alerts/alertmanager over real HTTP: 10,000
// webhook requests of one alert each, 20% of them redeliveries of an earlier alert, from 32
// concurrent connections (autocannon). Reports alerts accepted per second, p50/p99 latency,
// workspaces created and duplicates created (must be 0), against a baseline measured in the same
// run: the same server and payloads, with a route that answers 202 without doing any work.
// The server runs in a child process (the load generator does not share its event loop); the rate
// limit is off, the daemon itself (watcher, runs) is not running. First it measures the disk's own
// floor in the same folder: fsync'd new files per second with as many in flight as connections,
// since every new incident costs intake fsync'd files (incident.json, alerts.json, its storm record).
// Run: npx tsx bench/alerts.ts   (ALERTS_N=10000 ALERTS_DUP=0.2 ALERTS_GROUPS=1000 ALERTS_CONNECTIONS=32)
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { AlertsDoc } from '../src/intake/webhooks/disk.js';
import { writeNewFileSynced } from '../src/util/fs.js';
import type { RouteModule } from '../src/server/types.js';
import { amAlert, amPayload } from '../test/support/webhooks/alerts.js';
import { readIncidentFolders } from '../test/support/webhooks/folders.js';
import { startIntakeOnly } from '../test/support/webhooks/intake-only.js';
import { describeFolderCost, folderCost } from './folder-cost.js';

const N = Number(process.env.ALERTS_N ?? 10_000);
const DUP = Number(process.env.ALERTS_DUP ?? 0.2);
const GROUPS = Number(process.env.ALERTS_GROUPS ?? 1000);
const CONNECTIONS = Number(process.env.ALERTS_CONNECTIONS ?? 32);
/** libuv's pool runs the file I/O; the daemon's deployment sets the same (deploy/kubernetes). */
const THREADPOOL = process.env.UV_THREADPOOL_SIZE ?? '16';
const TOKEN = 'bench-token';
const SELF = fileURLToPath(import.meta.url);

/** Child mode: serve `intake` (the real routes and store) or `bare` (202 without work) on `root`. */
async function serve(mode: string, root: string): Promise<void> {
  const bare: RouteModule = {
    name: 'bare',
    plugin: async (app) => {
      app.post('/v1/alerts/alertmanager', async (_request, reply) =>
        reply.code(202).send({ incidentId: null, workspace: null, incidents: [] }),
      );
    },
  };
  const server = await startIntakeOnly(root, TOKEN, {
    daemonId: 'bench',
    ...(mode === 'bare' ? { routes: [bare] } : {}),
  });
  process.stdout.write(`READY ${server.port}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => void server.close().then(() => process.exit(0)));
}

/**
 * Webhook bodies for N alerts: (1 - DUP) * N distinct alerts over GROUPS groups, then redeliveries,
 * shuffled, `perRequest` alerts to a webhook (Alertmanager sends a group's alerts together).
 */
function bodies(perRequest: number): string[] {
  const unique = Math.round(N * (1 - DUP));
  const alerts = Array.from({ length: unique }, (_, i) => {
    const g = i % GROUPS;
    return amAlert(
      {
        alertname: `BenchAlert${g % 250}`,
        cluster: `c${g % 4}`,
        namespace: `ns-${g}`,
        pod: `app${g}-7d4b9c8f6d-${(i / GROUPS)
          .toString(27)
          .padStart(5, 'b')
          .slice(-5)
          .replace(/[^bcdfghjklmnpqrstvwxz2456789]/g, 'k')}`,
      },
      { fingerprint: `bench${String(i).padStart(11, '0')}` },
    );
  });
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const list = [
    ...alerts,
    ...Array.from({ length: N - unique }, () => alerts[Math.floor(random() * unique)]!),
  ];
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [list[i], list[j]] = [list[j]!, list[i]!];
  }
  const out: string[] = [];
  for (let i = 0; i < list.length; i += perRequest)
    out.push(JSON.stringify(amPayload(list.slice(i, i + perRequest))));
  return out;
}

async function run(mode: 'bare' | 'intake', payloads: string[]) {
  const root = await mkdtemp(path.join(tmpdir(), `bench-alerts-${mode}-`));
  const child = spawn(
    process.execPath,
    [
      ...(process.env.ALERTS_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.ALERTS_PROFILE] : []),
      '--import',
      'tsx',
      SELF,
      '--serve',
      mode,
      root,
    ],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, UV_THREADPOOL_SIZE: THREADPOOL },
    },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      const m = /READY (\d+)/.exec(d.toString());
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  let next = 0;
  // autocannon's own duration ends on its once-a-second tick, which swamps a run of a second or two
  // (the bare route's): the rate is taken from the first request to the last response instead.
  const started = performance.now();
  let last = started;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/v1/alerts/alertmanager`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    connections: CONNECTIONS,
    amount: payloads.length,
    timeout: 30,
    requests: [
      {
        setupRequest: (request) => ({ ...request, body: payloads[next++ % payloads.length] }),
        onResponse: () => {
          last = performance.now();
        },
      },
    ],
  });
  const seconds = (last - started) / 1000;
  const folders = mode === 'intake' ? await readIncidentFolders(root) : [];
  const docs = await Promise.all(
    folders.map(
      async (f) => JSON.parse(await readFile(path.join(root, f, 'alerts.json'), 'utf8')) as AlertsDoc,
    ),
  );
  child.stdin.end();
  await new Promise((r) => child.once('exit', r));
  await rm(root, { recursive: true, force: true });
  const keys = docs.flatMap((d) => d.alerts.map((a) => a.key));
  return {
    result,
    seconds,
    workspaces: folders.length,
    stored: keys.length,
    duplicateEntries: keys.length - new Set(keys).size,
  };
}

/** The disk's floor: new files written and fsynced per second, CONNECTIONS at a time. */
async function diskFloor(files: number): Promise<number> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-alerts-disk-'));
  const body = JSON.stringify(amPayload([amAlert({ alertname: 'Floor' })]), null, 2);
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < files) await writeNewFileSynced(path.join(dir, `f${next++}.json`), body);
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  await rm(dir, { recursive: true, force: true });
  return files / seconds;
}

if (process.argv[2] === '--serve') {
  await serve(process.argv[3] ?? 'intake', process.argv[4] ?? '.');
} else {
  const unique = Math.round(N * (1 - DUP));
  console.log(
    `${N} alerts (${N - unique} of them redeliveries) over ${GROUPS} groups, ${CONNECTIONS} connections, UV_THREADPOOL_SIZE=${THREADPOOL}\n`,
  );
  // Before the floor's own files are written and deleted.
  const folder = folderCost(tmpdir());
  const floor = await diskFloor(Math.min(N, 4000));
  console.log(
    `disk floor in the same folder: ${floor.toFixed(0)} new fsync'd files/s (${CONNECTIONS} in flight)`,
  );
  console.log(`${describeFolderCost(tmpdir(), folder)}\n`);
  console.log(
    '| server | alerts per request | requests | 2xx | errors | alerts/s | request p50 | request p99 | workspaces / duplicates created |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const perRequest of [1, 10]) {
    const payloads = bodies(perRequest);
    const bare = await run('bare', payloads);
    const intake = await run('intake', payloads);
    const perSecond = (r: typeof bare) => N / r.seconds;
    const row = (name: string, r: typeof bare, extra: string) =>
      `| ${name} | ${perRequest} | ${payloads.length} | ${r.result['2xx']} | ${r.result.non2xx + r.result.errors + r.result.timeouts} | ${perSecond(r).toFixed(0)} | ${r.result.latency.p50} ms | ${r.result.latency.p99} ms | ${extra} |`;
    console.log(row('bare (202, no work)', bare, '-'));
    console.log(
      row(
        `intake (×${(perSecond(intake) / perSecond(bare)).toFixed(2)} of bare)`,
        intake,
        `${intake.workspaces} (expected ${GROUPS}) / ${intake.workspaces - GROUPS + intake.duplicateEntries}; ${intake.stored} alerts stored (expected ${unique})`,
      ),
    );
  }
}
