// A burst of Alertmanager deliveries against POST /v1/alerts/alertmanager over real HTTP: 10,000
// alerts, 20% of them redeliveries of an earlier alert, one alert per request and then ten. Two
// loads for each:
// - closed loop (capacity): 32 connections (autocannon), each sending its next request when the
//   last was answered; the rate is what the server sustains, and its latency is mostly the queue of
//   requests in flight (Little's law: 320 alerts in flight at 3,000/s wait about 107 ms each);
// - open loop (the targets' load): requests due on a fixed schedule, 2,000 alerts/s one per request
//   and 3,000 alerts/s ten per request, over at most as many connections; latency counts from each
//   request's due time, so a server that cannot keep up shows its growing queue.
// Reports alerts accepted per second, p50/p99 latency, the server's CPU per alert and how busy its
// main thread (its event loop) was, workspaces and duplicates created (must be 0), against a
// baseline measured in the same run: the same server and payloads, with a route that answers 202
// without doing any work. The server runs in a child process (the load generator does not share its
// event loop); the rate limit is off, the daemon itself (watcher, runs) is not running. First it
// measures the folder's floor: fsync'd new files per second with as many in flight as connections,
// since every new incident costs intake fsync'd files (incident.json, alerts.json, its storm record).
// Run: npx tsx bench/alerts.ts   (ALERTS_N=10000 ALERTS_DUP=0.2 ALERTS_GROUPS=1000
// ALERTS_ALERTNAMES=250 ALERTS_CONNECTIONS=32 ALERTS_RATES=2000,3000 ALERTS_PER_REQUEST=1,10
// ALERTS_LOADS=closed,open). ALERTS_ALERTNAMES=1 is a storm:
// four storm keys (one per cluster), whose third incidents take every further group. ALERTS_PERF=1
// starts the server with --perf-basic-prof, so that `perf record` names its JavaScript functions.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
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
import { percentile } from './table.js';

const N = Number(process.env.ALERTS_N ?? 10_000);
const DUP = Number(process.env.ALERTS_DUP ?? 0.2);
const GROUPS = Number(process.env.ALERTS_GROUPS ?? 1000);
/** Distinct alert names; with the 4 clusters they make the storm keys (storm_by: cluster, alertname). */
const ALERTNAMES = Number(process.env.ALERTS_ALERTNAMES ?? 250);
const CONNECTIONS = Number(process.env.ALERTS_CONNECTIONS ?? 32);
/** Open-loop rates in alerts per second: one alert per request, ten per request (the targets). */
const [RATE_1 = 2000, RATE_10 = 3000] = (process.env.ALERTS_RATES ?? '2000,3000').split(',').map(Number);
/** Which shapes (alerts per request: 1, 10) and loads (closed, open) to run; all by default. */
const PER_REQUEST = (process.env.ALERTS_PER_REQUEST ?? '1,10').split(',').map(Number);
const LOADS = (process.env.ALERTS_LOADS ?? 'closed,open').split(',');
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
        alertname: `BenchAlert${g % ALERTNAMES}`,
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

/** What one load reports: requests answered 2xx or not, latency percentiles (ms), first send → last answer. */
interface LoadResult {
  ok: number;
  failed: number;
  p50: number;
  p99: number;
  seconds: number;
}

type Load = (port: number, payloads: string[]) => Promise<LoadResult>;

/** Closed loop: CONNECTIONS connections, each sending its next request once the last is answered. */
const closedLoop: Load = async (port, payloads) => {
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
  return {
    ok: result['2xx'],
    failed: result.non2xx + result.errors + result.timeouts,
    p50: result.latency.p50,
    p99: result.latency.p99,
    seconds: (last - started) / 1000,
  };
};

/**
 * Open loop: request i is due at i / rate seconds and is sent then (checked every millisecond),
 * whether or not earlier ones were answered, over at most CONNECTIONS keep-alive connections (a
 * request waits for a free one). Latency counts from the due time, so that wait counts too.
 */
const openLoop =
  (requestsPerSecond: number): Load =>
  async (port, payloads) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    const latencies: number[] = [];
    let ok = 0;
    let failed = 0;
    const started = performance.now();
    let last = started;
    await new Promise<void>((resolve) => {
      let sent = 0;
      let answered = 0;
      const settle = (due: number, good: boolean) => {
        last = performance.now();
        latencies.push(last - due);
        if (good) ok++;
        else failed++;
        if (++answered === payloads.length) resolve();
      };
      const send = (i: number) => {
        const due = started + (i * 1000) / requestsPerSecond;
        const request = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/v1/alerts/alertmanager',
            agent,
            headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
          },
          (response) => {
            response.resume();
            response.on('end', () => settle(due, response.statusCode === 202));
          },
        );
        request.on('error', () => settle(due, false));
        request.end(payloads[i]);
      };
      const tick = () => {
        const due = Math.min(
          payloads.length,
          Math.floor(((performance.now() - started) * requestsPerSecond) / 1000) + 1,
        );
        while (sent < due) send(sent++);
        if (sent < payloads.length) setTimeout(tick, 1);
      };
      tick();
    });
    agent.destroy();
    return {
      ok,
      failed,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      seconds: (last - started) / 1000,
    };
  };

/** CPU seconds (user + system) a process has used, all threads and its main thread; Linux /proc. */
function cpuOf(pid: number | undefined): { all: number; main: number } {
  const ticks = (file: string): number => {
    try {
      // The fields after the command name; utime and stime (12th and 13th) are in ticks of 1/100 s.
      const fields = readFileSync(file, 'utf8').split(') ')[1]?.split(' ') ?? [];
      return (Number(fields[11]) + Number(fields[12])) / 100;
    } catch {
      return Number.NaN;
    }
  };
  return { all: ticks(`/proc/${pid}/stat`), main: ticks(`/proc/${pid}/task/${pid}/stat`) };
}

async function run(mode: 'bare' | 'intake', payloads: string[], load: Load) {
  const root = await mkdtemp(path.join(tmpdir(), `bench-alerts-${mode}-`));
  const child = spawn(
    process.execPath,
    [
      ...(process.env.ALERTS_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', process.env.ALERTS_PROFILE] : []),
      ...(process.env.ALERTS_PERF ? ['--perf-basic-prof'] : []),
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
  const cpuBefore = cpuOf(child.pid);
  const result = await load(port, payloads);
  const cpuAfter = cpuOf(child.pid);
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
    seconds: result.seconds,
    // The server's CPU over the load: all its threads, and its main thread alone (its event loop).
    cpuSeconds: cpuAfter.all - cpuBefore.all,
    mainSeconds: cpuAfter.main - cpuBefore.main,
    workspaces: folders.length,
    // Alerts the incidents counted (an incident stores at most max_alerts_per_incident of them).
    counted: docs.reduce((n, d) => n + d.count, 0),
    duplicateEntries: keys.length - new Set(keys).size,
  };
}

/**
 * Incidents the alerts open: one per group that receives an alert, at most storm_limit (3, the
 * default) per storm key (storm_by's default: cluster and alertname); further groups join.
 */
function expectedIncidents(unique: number): number {
  const groups = new Map<string, number>();
  for (let g = 0; g < Math.min(GROUPS, unique); g++) {
    const storm = `c${g % 4}/BenchAlert${g % ALERTNAMES}`;
    groups.set(storm, (groups.get(storm) ?? 0) + 1);
  }
  return [...groups.values()].reduce((n, count) => n + Math.min(count, 3), 0);
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
    `${N} alerts (${N - unique} of them redeliveries) over ${GROUPS} groups and ${ALERTNAMES} alert names, ${CONNECTIONS} connections, UV_THREADPOOL_SIZE=${THREADPOOL}\n`,
  );
  // Before the floor's own files are written and deleted.
  const folder = folderCost(tmpdir());
  const floor = await diskFloor(Math.min(N, 4000));
  console.log(
    `disk floor in the same folder: ${floor.toFixed(0)} new fsync'd files/s (${CONNECTIONS} in flight)`,
  );
  console.log(`${describeFolderCost(tmpdir(), folder)}\n`);
  console.log(
    '| server | load | alerts per request | requests | 2xx | errors | alerts/s | request p50 | request p99 | server CPU per alert | main thread busy | workspaces / duplicates created |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  const expected = expectedIncidents(unique);
  for (const perRequest of PER_REQUEST) {
    const payloads = bodies(perRequest);
    const rate = perRequest === 1 ? RATE_1 : RATE_10;
    const loads: [string, Load][] = [
      ...(LOADS.includes('closed')
        ? [[`closed, ${CONNECTIONS} connections`, closedLoop] as [string, Load]]
        : []),
      ...(LOADS.includes('open')
        ? [[`open, ${rate} alerts/s`, openLoop(rate / perRequest)] as [string, Load]]
        : []),
    ];
    for (const [loadName, load] of loads) {
      const bare = await run('bare', payloads, load);
      const intake = await run('intake', payloads, load);
      const perSecond = (r: typeof bare) => N / r.seconds;
      const row = (name: string, r: typeof bare, extra: string) =>
        `| ${name} | ${loadName} | ${perRequest} | ${payloads.length} | ${r.result.ok} | ${r.result.failed} | ${perSecond(r).toFixed(0)} | ${r.result.p50} ms | ${r.result.p99} ms | ${((r.cpuSeconds / N) * 1e6).toFixed(0)} µs | ${((100 * r.mainSeconds) / r.seconds).toFixed(0)}% | ${extra} |`;
      console.log(row('bare (202, no work)', bare, '-'));
      console.log(
        row(
          `intake (×${(perSecond(intake) / perSecond(bare)).toFixed(2)} of bare)`,
          intake,
          `${intake.workspaces} (expected ${expected}) / ${intake.workspaces - expected + intake.duplicateEntries}; ${intake.counted} alerts counted (expected ${unique})`,
        ),
      );
    }
  }
}
