import { Worker } from 'node:worker_threads';

// Spawning off the event loop. child_process.spawn forks synchronously, and a fork costs in proportion
// to the daemon's resident memory (its page tables are copied): tens of milliseconds for a daemon of a
// few hundred MiB, during which no alert is answered and no run moves. A worker thread does the spawn
// instead and tells the daemon the pid, then the exit. The child is still this process's child (same
// pid namespace, same process group rules); only the thread that forks it differs.

export interface SpawnRequest {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Written to the child's stdin, which is then closed. */
  stdin: string;
  /** Open file descriptors of this process for the child's stdout and stderr (kept open until spawned). */
  stdout: number;
  stderr: number;
  /** The child leads a new process group (and session). */
  detached: boolean;
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The spawning thread died before the child ended: the exit was not observed (poll the pid instead). */
  lost?: true;
}

export interface Spawned {
  pid: number;
  exit: Promise<ChildExit>;
  /** Whether the exit was observed. */
  readonly exited: boolean;
}

/** An error from spawn itself (ENOENT, EACCES), with its code. */
export class SpawnError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'SpawnError';
  }
}

type Reply =
  | { id: number; pid: number }
  | { id: number; error: string; code?: string }
  | { id: number; exit: { code: number | null; signal: NodeJS.Signals | null } };

/** The worker's whole program: node builtins only, so it runs the same from sources and from dist/. */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { spawn } = require('node:child_process');
parentPort.on('message', (m) => {
  let child;
  try {
    child = spawn(m.file, m.args, { cwd: m.cwd, env: m.env, detached: m.detached, stdio: ['pipe', m.stdout, m.stderr] });
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: String(e && e.message), code: e && e.code });
    return;
  }
  let started = false;
  child.once('error', (e) => { if (!started) parentPort.postMessage({ id: m.id, error: String(e.message), code: e.code }); });
  child.once('spawn', () => {
    started = true;
    parentPort.postMessage({ id: m.id, pid: child.pid });
    child.stdin.on('error', () => {});
    child.stdin.end(m.stdin);
  });
  child.once('exit', (code, signal) => { if (started) parentPort.postMessage({ id: m.id, exit: { code, signal } }); });
});
`;

/** How long a spawn may take before it is reported as failed (the worker is stuck). */
const SPAWN_TIMEOUT_MS = 30_000;

interface Outstanding {
  started?: (pid: number) => void;
  failed?: (err: Error) => void;
  exited?: (exit: ChildExit) => void;
  timer?: NodeJS.Timeout;
}

/**
 * Spawns children from one worker thread. The worker keeps the process alive only while a spawn or a
 * child is outstanding; `close` ends it (children keep running, their exits are then reported lost).
 */
export class Spawner {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly outstanding = new Map<number, Outstanding>();

  spawn(request: SpawnRequest): Promise<Spawned> {
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<Spawned>((resolve, reject) => {
      let exited = false;
      let onExit: (exit: ChildExit) => void = () => undefined;
      const exit = new Promise<ChildExit>((r) => (onExit = r));
      const entry: Outstanding = {
        started: (pid) =>
          resolve({
            pid,
            exit,
            get exited() {
              return exited;
            },
          }),
        failed: reject,
        exited: (e) => {
          exited = true;
          onExit(e);
        },
      };
      entry.timer = setTimeout(() => {
        this.settle(id);
        reject(new SpawnError(`spawning ${request.file} took over ${SPAWN_TIMEOUT_MS} ms`, 'ETIMEDOUT'));
      }, SPAWN_TIMEOUT_MS);
      entry.timer.unref();
      this.outstanding.set(id, entry);
      this.refresh();
      worker.postMessage({ id, ...request });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    worker.on('message', (reply: Reply) => this.onReply(reply));
    const lost = (err?: unknown) => {
      if (this.worker === worker) this.worker = undefined;
      for (const [id, entry] of this.outstanding) {
        this.settle(id);
        entry.failed?.(
          new SpawnError(`the spawning thread ended: ${String(err ?? 'terminated')}`, undefined),
        );
        entry.exited?.({ code: null, signal: null, lost: true });
      }
    };
    worker.on('error', lost);
    worker.on('exit', () => lost());
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private onReply(reply: Reply): void {
    const entry = this.outstanding.get(reply.id);
    if (!entry) return;
    if ('pid' in reply) {
      clearTimeout(entry.timer);
      entry.started?.(reply.pid);
      entry.started = undefined;
      entry.failed = undefined;
    } else if ('error' in reply) {
      this.settle(reply.id);
      entry.failed?.(new SpawnError(reply.error, reply.code));
    } else {
      this.settle(reply.id);
      entry.exited?.({ code: reply.exit.code, signal: reply.exit.signal });
    }
  }

  private settle(id: number): void {
    clearTimeout(this.outstanding.get(id)?.timer);
    this.outstanding.delete(id);
    this.refresh();
  }

  /** Keeps the process alive while anything is outstanding, never while idle. */
  private refresh(): void {
    if (this.outstanding.size > 0) this.worker?.ref();
    else this.worker?.unref();
  }
}
