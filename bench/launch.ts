// Incident-to-agent-start latency: the run pipeline (bundle, context, adapter invocation, hardened
// container through the docker engine) against a bare `podman run` (or `docker run`) of the same
// image, measured in the same run: each round runs the three paths, the rounds taking all six orders in
// turn, with a pause before each start (BENCH_SETTLE_MS, default 1000). "Agent start" = the fake agent's
// first stderr line. BENCH_N (default 12) is best a multiple of 6.
//
//   npx tsx bench/launch.ts            BENCH_N=24 npx tsx bench/launch.ts     BENCH_CLI=docker …
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AuditLog } from '../src/audit/log.js';
import { loadConfig } from '../src/config/index.js';
import { createRunExecutor } from '../src/run/pipeline.js';
import { createDockerEngine } from '../src/engines/docker/index.js';
import type { Engine, RunSpec } from '../src/engines/types.js';
import { readWorkspace } from '../src/workspace/incident.js';
import { silentLogger } from '../src/log/logger.js';
import { Redactor } from '../src/log/redact.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const IMAGE = process.env.BENCH_IMAGE ?? 'triage-runner-test-agent:latest';
const N = Number(process.env.BENCH_N ?? 12);
const START_TIMEOUT_MS = 60_000;
/** Pause before each measured start, for the engine to finish the last one's clean-up (BENCH_SETTLE_MS). */
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 1000);
const STARTED = 'fake-agent: started';

function engineCli(): string {
  if (process.env.BENCH_CLI) return process.env.BENCH_CLI;
  return spawnSync('podman', ['--version']).status === 0 ? 'podman' : 'docker';
}

function dockerHost(): string {
  if (process.env.DOCKER_HOST) return process.env.DOCKER_HOST;
  return spawnSync('test', ['-S', '/var/run/docker.sock']).status === 0
    ? 'unix:///var/run/docker.sock'
    : 'unix:///run/podman/podman.sock';
}

/** Bare CLI: `<cli> run --rm -i --user 1000:1000 IMAGE fake-agent`, timed until its start line. */
function bareRun(cli: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(
      cli,
      ['run', '--rm', '-i', '--user', '1000:1000', '--network', 'none', IMAGE, '/usr/local/bin/fake-agent'],
      {
        stdio: ['pipe', 'ignore', 'pipe'],
      },
    );
    let seen = false;
    let err = '';
    const timer = setTimeout(
      () => reject(new Error(`${cli} run did not start the agent within ${START_TIMEOUT_MS} ms: ${err}`)),
      START_TIMEOUT_MS,
    );
    child.stderr.on('data', (c: Buffer) => {
      err += c.toString();
      if (!seen && err.includes(STARTED)) {
        seen = true;
        resolve(performance.now() - t0);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (!seen) reject(new Error(`${cli} run exited ${String(code)} before the agent started: ${err}`));
    });
    child.stdin.end('prompt\n');
  });
}

/** Wraps the engine so the first "started" line of each run is timestamped. */
function timingEngine(inner: Engine, onStarted: () => void): Engine {
  return {
    ...inner,
    name: inner.name,
    ping: () => inner.ping(),
    wait: (h, t) => inner.wait(h, t),
    signal: (h, s) => inner.signal(h, s),
    remove: (h) => inner.remove(h),
    list: (l) => inner.list(l),
    attach: (h, o, e) => inner.attach(h, o, e),
    close: () => inner.close(),
    start: (spec: RunSpec) => {
      let seen = false;
      let text = '';
      return inner.start({
        ...spec,
        onStderr: (c) => {
          spec.onStderr(c);
          text += c.toString();
          if (!seen && text.includes(STARTED)) {
            seen = true;
            onStarted();
          }
        },
      });
    },
  };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
};

async function main(): Promise<void> {
  const cli = engineCli();
  const work = await mkdtemp(path.join(tmpdir(), 'triage-bench-launch-'));
  try {
    const config = loadConfig({
      env: {},
      cwd: ROOT,
      flags: {
        workspaces_root: path.join(work, 'incidents'),
        agent: { image: IMAGE, command: '/usr/local/bin/fake-agent', min_report_bytes: 0 },
        docker: { host: dockerHost(), network: 'none' },
        skills: { sources: [], cache_dir: path.join(work, 'skills'), disable_triage_preload: true },
      },
    }).config;
    const log = silentLogger();
    const docker = createDockerEngine(config, log);
    await docker.ping();
    let startedAt = 0;
    const engine = timingEngine(docker, () => (startedAt = performance.now()));
    const stages = new Map<string, number[]>();
    const executor = createRunExecutor({
      config,
      log,
      metrics: {
        stage: (stage, seconds) => stages.set(stage, [...(stages.get(stage) ?? []), seconds * 1000]),
        triageTimeout: () => undefined,
        truncation: () => undefined,
      },
      redactor: new Redactor(),
      secrets: {},
      audit: new AuditLog(),
      env: {},
      engine,
      skills: {
        acquire: async () => ({ sources: [], unavailable: [], release: () => undefined }),
        readiness: async () => ({ ready: true, sources: [] }),
      },
      daemonId: 'bench',
    });

    const pipeline: number[] = [];
    const engineOnly: number[] = [];
    const bare: number[] = [];
    /** Pipeline: from the incident (already validated) to the agent's first line. */
    const measurePipeline = async (i: number): Promise<number> => {
      const dir = path.join(work, 'incidents', `inc-${i}`);
      await mkdir(dir, { recursive: true });
      await writeFile(
        path.join(dir, 'incident.json'),
        JSON.stringify({
          incidentId: `bench-${i}`,
          cluster: 'c',
          namespace: 'n',
          resource: { kind: 'Pod', name: 'p' },
          faultType: 'CrashLoop',
          severity: 'high',
          timestamp: '2026-11-22T00:00:00Z',
        }),
      );
      const read = await readWorkspace(dir, { maxBytes: 1 << 20 });
      if (read.kind !== 'ok') throw new Error(`bench workspace ${dir} did not read`);
      const t0 = performance.now();
      const outcome = await executor.run({
        workspace: read.workspace,
        runId: `bench-${i}`,
        attempt: 1,
        signal: new AbortController().signal,
        log,
      });
      if (outcome.status !== 'succeeded' || startedAt < t0)
        throw new Error(`bench run ${i} ${outcome.status}: ${outcome.reason ?? ''}`);
      return startedAt - t0;
    };
    /** Engine alone: the same hardened container, no context preparation. */
    const measureEngine = async (i: number): Promise<number> => {
      const e0 = performance.now();
      let eStarted = 0;
      const h = await timingEngine(docker, () => (eStarted = performance.now())).start({
        runId: `bench-engine-${i}`,
        incidentId: 'bench',
        labels: { 'io.triage-runner/run': `bench-engine-${i}` },
        image: IMAGE,
        command: '/usr/local/bin/fake-agent',
        args: [],
        env: { HOME: '/home/agent', FAKE_AGENT_REPORT: 'none' },
        secretEnv: {},
        stdin: 'prompt\n',
        workdir: '/home/agent',
        mounts: [],
        tmpfs: ['/home/agent', '/tmp'],
        stateDir: work,
        onStdout: () => undefined,
        onStderr: () => undefined,
      });
      await docker.wait(h, START_TIMEOUT_MS);
      await docker.remove(h);
      return eStarted - e0;
    };
    // Each path runs once per round, after a pause, the rounds going through all six orders of the
    // three in turn: the engine's own work after a container ends (with Podman, the exit command conmon
    // runs and the removal) otherwise lands in whatever path comes next. In a fixed order the pipeline
    // always came right after the bare `run --rm` and paid for it (docs/performance.md, "Launch
    // measured fairly").
    const paths: ((i: number) => Promise<void>)[] = [
      async (i) => void pipeline.push(await measurePipeline(i)),
      async (i) => void engineOnly.push(await measureEngine(i)),
      async () => void bare.push(await bareRun(cli)),
    ];
    // The first round warms caches (image layers, tokenizer) and is not counted.
    for (const measure of paths) await measure(0);
    pipeline.length = engineOnly.length = bare.length = 0;
    const orders = [
      [0, 1, 2],
      [0, 2, 1],
      [1, 0, 2],
      [1, 2, 0],
      [2, 0, 1],
      [2, 1, 0],
    ];
    for (let i = 1; i <= N; i++) {
      for (const k of orders[(i - 1) % orders.length] as number[]) {
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        await (paths[k] as (i: number) => Promise<void>)(i);
      }
    }
    const base50 = pct(bare, 50);
    const base95 = pct(bare, 95);
    const row = (name: string, xs: number[]) =>
      `| ${name} | ${xs.length} | ${pct(xs, 50).toFixed(0)} | ${pct(xs, 95).toFixed(0)} | ${(pct(xs, 50) / base50).toFixed(2)} | ${(pct(xs, 95) / base95).toFixed(2)} |`;
    console.log(
      `\nIncident-to-agent-start latency, image ${IMAGE}, engine ${dockerHost()} (${cli} CLI for the baseline)\n`,
    );
    console.log('| path | runs | p50 ms | p95 ms | p50 ratio vs bare | p95 ratio vs bare |');
    console.log('|---|---|---|---|---|---|');
    console.log(row(`bare \`${cli} run --rm -i\` (baseline)`, bare));
    console.log(row('docker engine only (hardened create+attach+start)', engineOnly));
    console.log(row('run pipeline (bundle, context, invocation, docker engine)', pipeline));
    // Each round's pipeline less the engine alone in the same round: what the daemon adds, with less of
    // the engine's drift between rounds in it than the p50s' difference.
    const added = pipeline.map((p, i) => p - (engineOnly[i] as number));
    console.log(
      `| pipeline − engine alone, same round (what the daemon adds) | ${added.length} | ${pct(added, 50).toFixed(0)} | ${pct(added, 95).toFixed(0)} | | |`,
    );
    console.log(
      '\nPipeline stages (p50 ms, warm-up round included): ' +
        ['context', 'launch', 'collect']
          .map((st) => `${st} ${pct(stages.get(st) ?? [], 50).toFixed(0)}`)
          .join(', '),
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
