import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readiness, RunExecutor, RunOutcome, RunRequest } from '../../src/run/types.js';

// Test executors: one that runs a REAL tiny agent script as a child process (and can adopt a run
// whose daemon died, through the pid and exit-code files the script leaves), and an in-memory one
// for pure scheduling tests.

export const SLEEP_AGENT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../fixtures/agents/sleep-agent.sh',
);

/** Exit code the fake agent uses for "transient failure" (EX_TEMPFAIL). */
export const TRANSIENT_EXIT = 75;

export interface ProcessFakeOptions {
  sleepMs?: number;
  /** Exit code per request (default 0). */
  exitCode?: (request: Pick<RunRequest, 'workspace' | 'attempt'>) => number;
  readiness?: () => Promise<Readiness>;
  /** How long adopt() waits for a still-running agent to finish, in ms. */
  adoptTimeoutMs?: number;
}

const runDirOf = (request: Pick<RunRequest, 'workspace' | 'runId'>) =>
  path.join(request.workspace.dir, '.triage', 'runs', request.runId);

const outcomeOf = (code: number): RunOutcome =>
  code === 0
    ? { status: 'succeeded', exitCode: 0 }
    : {
        status: 'failed',
        exitCode: code,
        transient: code === TRANSIENT_EXIT,
        reason: `fake agent exited with ${code}`,
      };

export function createProcessFakeExecutor(options: ProcessFakeOptions = {}): RunExecutor {
  const sleepMs = options.sleepMs ?? 200;
  return {
    async run(request) {
      const runDir = runDirOf(request);
      await mkdir(runDir, { recursive: true });
      const code = options.exitCode?.(request) ?? 0;
      // Written before the spawn: adopt() then knows an agent may be starting and waits for its pid.
      await writeFile(path.join(runDir, 'launching'), '');
      const child = spawn('sh', [SLEEP_AGENT, request.workspace.dir, runDir], {
        env: { ...process.env, FAKE_AGENT_SLEEP_MS: String(sleepMs), FAKE_AGENT_EXIT: String(code) },
        stdio: 'ignore',
      });
      // Listened for at the spawn: the agent may be gone before the launch is recorded.
      const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (c, s) => resolve([c, s]));
      });
      exited.catch(() => undefined); // awaited below; a spawn error is not unhandled meanwhile
      const onAbort = () => child.kill('SIGTERM');
      request.signal.addEventListener('abort', onAbort, { once: true });
      await request.onStage?.({ type: 'launched', engine: 'process', id: String(child.pid) });
      const [exitCode, signal] = await exited;
      request.signal.removeEventListener('abort', onAbort);
      if (request.signal.aborted)
        return { status: 'interrupted', exitCode, reason: 'stopped by daemon shutdown' };
      if (signal) return { status: 'failed', exitCode: null, reason: `fake agent killed by ${signal}` };
      return outcomeOf(exitCode ?? 1);
    },
    async adopt(request) {
      const runDir = runDirOf(request);
      const pidFile = path.join(runDir, 'agent.pid');
      const startDeadline = Date.now() + 3000;
      while (existsSync(path.join(runDir, 'launching')) && !existsSync(pidFile) && Date.now() < startDeadline)
        await new Promise((r) => setTimeout(r, 20));
      const pid = Number(await readFile(pidFile, 'utf8').catch(() => 'NaN'));
      const exitFile = path.join(runDir, 'exit-code');
      const deadline = Date.now() + (options.adoptTimeoutMs ?? sleepMs + 30_000);
      while (!existsSync(exitFile)) {
        if (!Number.isInteger(pid) || !alive(pid))
          return existsSync(exitFile) ? outcomeOf(Number(await readFile(exitFile, 'utf8'))) : 'gone';
        if (Date.now() > deadline)
          return {
            status: 'failed',
            reason: `adopted agent pid ${pid} still running after ${options.adoptTimeoutMs ?? sleepMs + 30_000} ms`,
          };
        if (request.signal.aborted) return { status: 'interrupted', reason: 'stopped by daemon shutdown' };
        await new Promise((r) => setTimeout(r, 20));
      }
      return outcomeOf(Number(await readFile(exitFile, 'utf8')));
    },
    readiness: options.readiness ?? (async () => ({ ok: true, checks: [{ name: 'fake-agent', ok: true }] })),
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export interface MemoryExecutor extends RunExecutor {
  readonly calls: {
    incidentId: string;
    runId: string;
    attempt: number;
    startedAt: number;
    endedAt?: number;
  }[];
  readonly maxConcurrent: number;
  readonly maxPerCluster: Map<string, number>;
}

export interface MemoryFakeOptions {
  durationMs?: number;
  outcome?: (request: RunRequest) => RunOutcome | Promise<RunOutcome>;
  adopt?: (request: Omit<RunRequest, 'attempt'>) => Promise<RunOutcome | 'gone'>;
  now?: () => number;
}

/** In-memory executor: waits `durationMs` (or until aborted) and records concurrency. */
export function createMemoryExecutor(options: MemoryFakeOptions = {}): MemoryExecutor {
  const now = options.now ?? Date.now;
  const calls: MemoryExecutor['calls'] = [];
  const perCluster = new Map<string, number>();
  const maxPerCluster = new Map<string, number>();
  let running = 0;
  let maxConcurrent = 0;
  return {
    calls,
    get maxConcurrent() {
      return maxConcurrent;
    },
    maxPerCluster,
    async run(request) {
      const cluster = request.workspace.incident.cluster;
      const call: MemoryExecutor['calls'][number] = {
        incidentId: request.workspace.incident.incidentId,
        runId: request.runId,
        attempt: request.attempt,
        startedAt: now(),
      };
      calls.push(call);
      running++;
      maxConcurrent = Math.max(maxConcurrent, running);
      perCluster.set(cluster, (perCluster.get(cluster) ?? 0) + 1);
      maxPerCluster.set(cluster, Math.max(maxPerCluster.get(cluster) ?? 0, perCluster.get(cluster) ?? 0));
      try {
        await request.onStage?.({ type: 'launched', engine: 'process', id: `memory-${request.runId}` });
        const aborted = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), options.durationMs ?? 20);
          request.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            resolve(true);
          });
        });
        if (aborted) return { status: 'interrupted', reason: 'aborted' };
        return options.outcome ? await options.outcome(request) : { status: 'succeeded', exitCode: 0 };
      } finally {
        running--;
        perCluster.set(cluster, (perCluster.get(cluster) ?? 1) - 1);
        call.endedAt = now();
      }
    },
    adopt: options.adopt ?? (async () => 'gone' as const),
    readiness: async () => ({ ok: true, checks: [{ name: 'memory-executor', ok: true }] }),
  };
}
