import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { errorMessage } from './errors.js';

// The one way the daemon runs and stops a child process tree: the child leads its own process group,
// carries a marker variable in its environment, and is stopped by an escalation of signals to the group
// and to every process still carrying the marker (a `setsid` grandchild leaves the group, not the marker).

export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGKILL';

/** Environment variable naming the run a process belongs to (inherited by everything it starts). */
export const RUN_MARKER_ENV = 'TRIAGE_RUNNER_RUN';

/** Sends `signal` to the process group led by `pid`; false when the group is gone. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

/** How many /proc environ files are read between two turns of the event loop (inline sweep). */
const PROC_READS_PER_TURN = 64;

/**
 * Pids of processes (this user's, readable in /proc) whose environment carries `marker` as the value of
 * RUN_MARKER_ENV: the processes of one run, including those that left its process group with setsid.
 * Every /proc/<pid>/environ is read, on a worker thread (one message each way on the event loop,
 * however many processes the host runs); where the worker cannot run, here, with synchronous reads that
 * yield to the event loop every PROC_READS_PER_TURN files.
 * Linux only; elsewhere (no /proc) the list is empty and the group signal is all there is.
 */
export async function markedPids(marker: string): Promise<number[]> {
  const request = { entry: `${RUN_MARKER_ENV}=${marker}`, self: process.pid };
  const viaWorker = procSweeper.sweep(request);
  if (viaWorker) {
    const pids = await viaWorker.catch(() => undefined);
    if (pids) return pids;
  }
  return sweepHere(request);
}

interface SweepRequest {
  /** `NAME=value` as it appears in an environ block. */
  entry: string;
  /** This process's pid, never a match. */
  self: number;
}

/** markedPids without the worker, on this thread (where no worker thread can start). */
export const markedPidsHere = (marker: string): Promise<number[]> =>
  sweepHere({ entry: `${RUN_MARKER_ENV}=${marker}`, self: process.pid });

async function sweepHere({ entry, self }: SweepRequest): Promise<number[]> {
  const needle = Buffer.from(`\0${entry}\0`);
  const first = Buffer.from(`${entry}\0`);
  let entries: string[];
  try {
    entries = (await readdir('/proc')).filter((e) => /^\d+$/.test(e) && Number(e) !== self);
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const [i, name] of entries.entries()) {
    if (i > 0 && i % PROC_READS_PER_TURN === 0) await yieldToLoop();
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${name}/environ`);
    } catch {
      continue; // gone, or not ours to read
    }
    if (environ.includes(needle) || environ.subarray(0, first.length).equals(first)) pids.push(Number(name));
  }
  return pids;
}

/** The sweep worker's whole program: node builtins only, so it runs the same from sources and dist/. */
const SWEEP_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { readdirSync, readFileSync } = require('node:fs');
parentPort.on('message', ({ id, entry, self }) => {
  const needle = Buffer.from('\\0' + entry + '\\0');
  const first = Buffer.from(entry + '\\0');
  const pids = [];
  let names = [];
  try { names = readdirSync('/proc'); } catch {}
  for (const name of names) {
    if (!/^\\d+$/.test(name) || Number(name) === self) continue;
    let environ;
    try { environ = readFileSync('/proc/' + name + '/environ'); } catch { continue; }
    if (environ.includes(needle) || environ.subarray(0, first.length).equals(first)) pids.push(Number(name));
  }
  parentPort.postMessage({ id, pids });
});
`;

/** One worker thread for every sweep, started with the first; it keeps the process alive only while a sweep is out. */
class ProcSweeper {
  private worker: Worker | undefined;
  private broken = false;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (pids: number[]) => void; reject: (err: Error) => void }
  >();

  /** The sweep's result, or undefined when no worker can run (the caller sweeps itself). */
  sweep(request: SweepRequest): Promise<number[]> | undefined {
    const worker = this.start();
    if (!worker) return undefined;
    const id = this.nextId++;
    return new Promise<number[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, ...request });
    });
  }

  private start(): Worker | undefined {
    if (this.worker || this.broken) return this.worker;
    let worker: Worker;
    try {
      worker = new Worker(SWEEP_SOURCE, { eval: true });
    } catch {
      this.broken = true;
      return undefined;
    }
    worker.unref();
    worker.on('message', ({ id, pids }: { id: number; pids: number[] }) => {
      const waiting = this.pending.get(id);
      this.pending.delete(id);
      if (this.pending.size === 0) worker.unref();
      waiting?.resolve(pids);
    });
    const lost = (err?: unknown) => {
      if (this.worker === worker) this.worker = undefined;
      const failure = new Error(`the /proc sweep worker stopped: ${err ? errorMessage(err) : 'exited'}`);
      for (const waiting of this.pending.values()) waiting.reject(failure);
      this.pending.clear();
    };
    worker.once('error', lost);
    worker.once('exit', () => lost());
    this.worker = worker;
    return worker;
  }
}

const procSweeper = new ProcSweeper();

/**
 * Signals the group led by `pid` at once and, with a marker, every marked process outside it once
 * /proc has been read. Resolves when every signal is sent.
 */
export async function signalTree(
  pid: number | undefined,
  signal: NodeJS.Signals,
  marker?: string,
): Promise<void> {
  if (pid !== undefined) signalGroup(pid, signal);
  if (!marker) return;
  for (const other of await markedPids(marker)) {
    try {
      process.kill(other, signal);
    } catch {
      // Gone already, or not ours to signal.
    }
  }
}

export interface EscalationStep {
  signal: StopSignal;
  /** How long to wait for the end after sending it. */
  waitMs: number;
}

/**
 * Sends each signal in turn and waits for the end; resolves with the signal that ended the run, or
 * undefined when it outlived the whole escalation. `waitEnd(ms)` resolves true once the run has ended.
 */
export async function escalate(
  steps: readonly EscalationStep[],
  send: (signal: StopSignal) => Promise<void>,
  waitEnd: (ms: number) => Promise<boolean>,
  onStillRunning?: (step: EscalationStep) => void,
): Promise<StopSignal | undefined> {
  for (const step of steps) {
    await send(step.signal);
    if (await waitEnd(step.waitMs)) return step.signal;
    onStillRunning?.(step);
  }
  return undefined;
}

/** The usual escalation: SIGINT (an agent can end its turn), SIGTERM, SIGKILL. */
export const gracefulSteps = (graceMs: number, killWaitMs: number): EscalationStep[] => [
  { signal: 'SIGINT', waitMs: graceMs },
  { signal: 'SIGTERM', waitMs: graceMs },
  { signal: 'SIGKILL', waitMs: killWaitMs },
];

export interface GroupRunOptions {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  /** After SIGTERM, wait this long before SIGKILL. */
  killGraceMs: number;
  signal?: AbortSignal;
  onData?(chunk: Buffer, stream: 'stdout' | 'stderr'): void;
  /** Value of RUN_MARKER_ENV given to the process tree, so that setsid descendants are stopped too. */
  marker?: string;
  /** After the leader exits, how long its streams may stay open (a grandchild holding them) before they are closed. */
  drainMs?: number;
}

/** How a process run ended, in the shape execa reports it. */
export interface GroupResult {
  command: string;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Stopped because `signal` was aborted. */
  aborted: boolean;
  durationMs: number;
  /** The last bytes of stderr, for error messages. */
  stderrTail: string;
  /** Set when the process could not be started at all. */
  error?: string;
}

const STDERR_TAIL_BYTES = 4096;
const DEFAULT_DRAIN_MS = 500;

/**
 * Runs `command` as the leader of a new process group with stdin closed. On timeout or abort the tree
 * gets SIGTERM, then SIGKILL after the grace; once the leader exits whatever is left of the tree is
 * killed. Resolves after the output drained (at most drainMs after the exit); never rejects.
 */
export function runProcessGroup(opts: GroupRunOptions): Promise<GroupResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let stderrTail = Buffer.alloc(0);
    const timers: NodeJS.Timeout[] = [];
    const env = opts.marker ? { ...opts.env, [RUN_MARKER_ENV]: opts.marker } : opts.env;
    const child = spawn(opts.command, [...opts.args], {
      cwd: opts.cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // EPERM: nothing more we may do.
    const kill = (sig: NodeJS.Signals) => signalTree(child.pid, sig, opts.marker).catch(() => undefined);
    const terminate = () => {
      void kill('SIGTERM');
      timers.push(setTimeout(() => void kill('SIGKILL'), opts.killGraceMs));
    };
    child.stdout.on('data', (c: Buffer) => opts.onData?.(c, 'stdout'));
    child.stderr.on('data', (c: Buffer) => {
      stderrTail = Buffer.concat([stderrTail, c]);
      if (stderrTail.length > STDERR_TAIL_BYTES) stderrTail = stderrTail.subarray(-STDERR_TAIL_BYTES);
      opts.onData?.(c, 'stderr');
    });
    child.stdout.on('error', () => undefined);
    child.stderr.on('error', () => undefined);
    const onAbort = () => {
      aborted = true;
      terminate();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) onAbort();
    timers.push(
      setTimeout(() => {
        timedOut = true;
        terminate();
      }, opts.timeoutMs),
    );
    const finish = (exit: { exitCode: number | null; signal: string | null; error?: string }) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      const durationMs = Math.round(performance.now() - started);
      child.stdout.destroy();
      child.stderr.destroy();
      // Whatever is left of the tree (background or setsid grandchildren) goes with the run, before it
      // is reported ended.
      void kill('SIGKILL').then(() =>
        resolve({
          command: opts.command,
          ...exit,
          timedOut,
          aborted,
          durationMs,
          stderrTail: stderrTail.toString('utf8'),
        }),
      );
    };
    child.on('error', (err) => finish({ exitCode: null, signal: null, error: errorMessage(err) }));
    child.on('exit', (code, sig) => {
      const exit = { exitCode: code, signal: sig };
      // Let buffered output arrive; do not wait for a grandchild that holds the pipe open.
      timers.push(setTimeout(() => finish(exit), opts.drainMs ?? DEFAULT_DRAIN_MS));
      child.on('close', () => finish(exit));
    });
  });
}
