import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { lstat, mkdir, open, readFile, symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { unlinkQuietly, writeFileAtomic } from '../util/fs.js';
import { errorMessage } from '../util/errors.js';
import { Spawner, type Spawned } from '../util/spawner.js';
import { isSameProcessAlive, processStartTime, resolveCommand } from '../util/process.js';
import { RUN_MARKER_ENV, signalTree } from '../util/process-group.js';
import { WaitTimeoutError, assertNoEngineSocket } from './labels.js';
import { StartGate } from './start-gate.js';
import type { Engine, RunExit, RunHandle, RunInfo, RunSpec, StopSignal } from './types.js';

// The process engine: the agent CLI as a child process of the daemon (development, or a daemon that
// already runs inside an isolated pod). No shell parses the prompt: command and args go to exec as they
// are, behind a fixed `sh -c` wrapper that records the exit code. The child leads its own process group
// and carries a run marker, so signals reach everything it started, setsid descendants included.
//
// Everything a restarted daemon needs lives in the run's state folder and outlives the daemon: the pid
// (with its kernel start time), the raw stdout and stderr (files, not pipes that die with the daemon)
// and the exit code. Isolation is the caller's business: a mount whose target lies under HOME becomes a
// symlink; any other mount must have target === source (the agent is given host paths).

export const PID_FILE = 'agent.pid';
export const EXIT_FILE = 'agent.exit';
/** Raw output before redaction: private to the daemon (0600) and removed with the run. */
export const RAW_STDOUT = '.agent-stdout.raw';
export const RAW_STDERR = '.agent-stderr.raw';
const TAIL_POLL_MS = 200;
const ADOPTED_POLL_MS = 250;
/**
 * Waits for the daemon's pid file, runs the agent, then records its exit status. The agent starts only
 * once the pid file exists: a daemon killed between spawning the wrapper and writing that file leaves
 * a wrapper that gives up after about a minute without running the agent, never an agent that no
 * daemon can find (the next daemon would run the incident again beside it). The trap keeps the wrapper alive through
 * SIGINT/SIGTERM (they reach the agent through the group) so that it can record how the agent ended.
 */
export const WRAPPER =
  'trap : INT TERM HUP; n=0; while [ ! -e "$TRIAGE_PID_FILE" ]; do n=$((n+1)); ' +
  '[ "$n" -gt 6000 ] && exit 125; sleep 0.01; done; ' +
  '"$@"; c=$?; printf "%s\\n" "$c" > "$TRIAGE_EXIT_FILE"; exit $c';

/** Variables taken from the daemon's environment; everything else the agent gets comes from the spec. */
export const PROCESS_ENV_ALLOWLIST = [
  'PATH',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'NODE_EXTRA_CA_CERTS',
  'HTTP_PROXY',
  'HTTPS_PROXY',
  'NO_PROXY',
  'http_proxy',
  'https_proxy',
  'no_proxy',
];

/** `<stateDir>/agent.pid`: enough to find, identify and signal the process after a daemon restart. */
export interface PidFile {
  pid: number;
  /** Kernel start time of the pid (clock ticks since boot), so a recycled pid is not mistaken for ours. */
  startTime: string | null;
  runId: string;
  command: string;
  labels: Record<string, string>;
  startedAt: string;
}

export interface ProcessEngineOptions {
  env?: Record<string, string | undefined>;
  now?: () => Date;
}

/** Follows a file another process appends to, from `offset`, handing each new chunk to `onData`. */
class FileTail {
  private offset = 0;
  private fd: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly file: string,
    private readonly onData: (chunk: Buffer) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.drain(), TAIL_POLL_MS);
    this.timer.unref();
  }

  /** Reads whatever was appended since the last read (one read at a time). */
  drain(): Promise<void> {
    this.reading = this.reading.then(() => this.readNew()).catch(() => undefined);
    return this.reading;
  }

  /** Reads the rest and stops following. */
  async finish(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (!this.stopped) {
      this.stopped = true;
      await this.drain();
    }
    await this.reading;
    const fd = this.fd;
    this.fd = undefined;
    if (fd !== undefined)
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
  }

  private async readNew(): Promise<void> {
    // Opened once (never through a symlink) and kept: each poll is one fstat, and a read when it grew
    // (synchronous calls, a few microseconds each: see util/fs.ts).
    if (this.fd === undefined)
      try {
        this.fd = openSync(this.file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      } catch {
        return;
      }
    const fd = this.fd;
    if (fstatSync(fd).size <= this.offset) return;
    const buffer = Buffer.alloc(64 * 1024);
    for (;;) {
      const bytesRead = readSync(fd, buffer, 0, buffer.length, this.offset);
      if (bytesRead === 0) return;
      this.offset += bytesRead;
      this.onData(Buffer.from(buffer.subarray(0, bytesRead)));
    }
  }
}

interface Running {
  pid: number;
  stateDir: string;
  record: PidFile;
  /** Our own child (spawned by this engine), as opposed to one adopted from a previous daemon. */
  child?: Spawned;
  /** Settles with the child's exit (own children only). */
  exit?: Promise<RunExit>;
  tails: FileTail[];
}

const isUnder = (child: string, parent: string): boolean => {
  const rel = path.relative(parent, child);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
};

/** Builds the child's environment: the allowlist from the daemon, then the spec's env and secrets. */
export function processEnv(
  daemonEnv: Record<string, string | undefined>,
  spec: Pick<RunSpec, 'env' | 'secretEnv'>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of PROCESS_ENV_ALLOWLIST) {
    const value = daemonEnv[key];
    if (value !== undefined) env[key] = value;
  }
  return { ...env, ...spec.env, ...spec.secretEnv };
}

/** `{ createdAt }` from a pid file's start time, when it is a valid date. */
function startedAt(record: PidFile): { createdAt?: Date } {
  const at = new Date(record.startedAt);
  return Number.isNaN(at.getTime()) ? {} : { createdAt: at };
}

async function replaceWithSymlink(target: string, source: string): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true });
  const existing = await lstat(target).catch(() => undefined);
  if (existing?.isSymbolicLink()) await unlink(target);
  else if (existing)
    throw new Error(
      `cannot link ${target} to ${source}: ${target} already exists in HOME and is not a symlink`,
    );
  await symlink(source, target);
}

/**
 * A pid file as start() writes it, or undefined. The file lives in the run bundle, which the agent
 * can write to, and a run is signalled as a whole process group (kill(-pid)): a pid of 1, of this
 * daemon or of its parent is never taken, and the start time must be there wherever /proc gives one
 * (without it a recycled or forged pid cannot be told from the agent).
 */
async function readPidFile(file: string): Promise<PidFile | undefined> {
  let parsed: Partial<PidFile> | null;
  try {
    parsed = JSON.parse(await readFile(file, 'utf8')) as Partial<PidFile> | null;
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { pid, startTime, runId, command, labels, startedAt } = parsed;
  if (!Number.isInteger(pid) || (pid as number) <= 1 || pid === process.pid || pid === process.ppid)
    return undefined;
  const knownStart =
    typeof startTime === 'string' || (startTime === null && processStartTime(process.pid) === null);
  const stringLabels =
    typeof labels === 'object' &&
    labels !== null &&
    !Array.isArray(labels) &&
    Object.values(labels).every((v) => typeof v === 'string');
  if (!knownStart || typeof runId !== 'string' || typeof command !== 'string' || !stringLabels)
    return undefined;
  if (typeof startedAt !== 'string') return undefined;
  return parsed as PidFile;
}

/** The exit code the wrapper recorded, or undefined when it could not (killed with the agent). */
async function recordedExit(stateDir: string): Promise<number | undefined> {
  const text = await readFile(path.join(stateDir, EXIT_FILE), 'utf8').catch(() => '');
  return /^\d+$/.test(text.trim()) ? Number(text.trim()) : undefined;
}

const info = (id: string, run: Running, running: boolean): RunInfo => ({
  handle: { engine: 'process', id, runId: run.record.runId },
  labels: run.record.labels,
  running,
  started: true,
  ...startedAt(run.record),
});

const isRunning = (run: Running): boolean =>
  run.child ? !run.child.exited : isSameProcessAlive(run.pid, run.record.startTime);

/** Links HOME mounts and checks the others; returns the child's environment. */
async function prepareHome(
  spec: RunSpec,
  daemonEnv: Record<string, string | undefined>,
): Promise<Record<string, string>> {
  assertNoEngineSocket(spec.mounts);
  const env: Record<string, string> = {
    ...processEnv(daemonEnv, spec),
    [RUN_MARKER_ENV]: spec.runId,
    TRIAGE_EXIT_FILE: path.join(spec.stateDir, EXIT_FILE),
    TRIAGE_PID_FILE: path.join(spec.stateDir, PID_FILE),
  };
  const home = env.HOME;
  if (!home || !path.isAbsolute(home)) {
    throw new Error(
      `process engine needs an absolute per-run HOME in the run's env (got ${JSON.stringify(home)}); the run pipeline sets it`,
    );
  }
  await mkdir(home, { recursive: true });
  for (const dir of spec.tmpfs) if (isUnder(dir, home)) await mkdir(dir, { recursive: true });
  for (const m of spec.mounts) {
    if (path.resolve(m.target) === path.resolve(m.source)) continue;
    if (!isUnder(m.target, home)) {
      throw new Error(
        `process engine cannot place ${m.source} at ${m.target}: only targets under HOME (${home}) can be linked; give the agent host paths instead`,
      );
    }
    await replaceWithSymlink(m.target, m.source);
  }
  return env;
}

/** Spawns the wrapped agent, which gets `stdin` and then EOF; its exit is listened for at once. */
async function spawnWrapped(spawner: Spawner, spec: RunSpec, env: Record<string, string>): Promise<Spawned> {
  const resolved = await resolveCommand(spec.command, env.PATH);
  if (!resolved) {
    throw new Error(
      `agent CLI ${spec.command} not found (PATH=${env.PATH ?? ''}, cwd=${spec.workdir}): install it or set agent.command to its path`,
    );
  }
  await mkdir(spec.stateDir, { recursive: true });
  // Plain files the engine wrote: one unlink each (rm's lstat first and thread-pool hops cost more).
  for (const f of [EXIT_FILE, PID_FILE]) unlinkQuietly(path.join(spec.stateDir, f));
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
  const out = await open(path.join(spec.stateDir, RAW_STDOUT), flags, 0o600);
  const err = await open(path.join(spec.stateDir, RAW_STDERR), flags, 0o600);
  try {
    return await spawner.spawn({
      file: '/bin/sh',
      args: ['-c', WRAPPER, 'triage-runner-agent', resolved, ...spec.args],
      cwd: spec.workdir,
      env,
      detached: true,
      stdin: spec.stdin,
      stdout: out.fd,
      stderr: err.fd,
    });
  } catch (e) {
    throw new Error(`cannot start agent CLI ${spec.command}: ${errorMessage(e)}`, { cause: e });
  } finally {
    await Promise.all([out.close(), err.close()]);
  }
}

/** The end of a process that is not (or no longer) observed as our child: polled, code from the wrapper's file. */
function polledExit(run: Running, onPoll: (t: NodeJS.Timeout) => void): Promise<RunExit> {
  return new Promise<RunExit>((resolve) => {
    const check = () => {
      if (isSameProcessAlive(run.pid, run.record.startTime)) {
        onPoll(setTimeout(check, ADOPTED_POLL_MS));
        return;
      }
      void recordedExit(run.stateDir).then((code) =>
        resolve(
          code === undefined
            ? {
                exitCode: null,
                signal: null,
                oomKilled: false,
                error: `process ${run.pid} ended without recording its exit code (it was killed with its wrapper)`,
              }
            : { exitCode: code, signal: null, oomKilled: false },
        ),
      );
    };
    check();
  });
}

function tailsOf(stateDir: string, onStdout: (c: Buffer) => void, onStderr: (c: Buffer) => void): FileTail[] {
  const tails = [
    new FileTail(path.join(stateDir, RAW_STDOUT), onStdout),
    new FileTail(path.join(stateDir, RAW_STDERR), onStderr),
  ];
  for (const t of tails) t.start();
  return tails;
}

/** The engine: the runs it started or found, by pid. */
class ProcessEngine implements Engine {
  readonly name = 'process' as const;
  readonly placement = 'host' as const;
  readonly capabilities = {
    reattachOutput: true,
    reportsOom: false,
    signals: ['SIGINT', 'SIGTERM', 'SIGKILL'] as StopSignal[],
    bundleSockets: true,
    hostLoopback: true,
  };
  private readonly runs = new Map<string, Running>();
  // Forks happen on a worker thread: a fork costs in proportion to the daemon's memory.
  private readonly spawner = new Spawner();
  private closed = false;

  constructor(
    private readonly log: Logger,
    private readonly daemonEnv: Record<string, string | undefined>,
    private readonly now: () => Date,
  ) {}

  async ping(): Promise<void> {
    // Nothing to reach: the CLI is looked up on PATH at start.
  }

  async start(spec: RunSpec) {
    const gate = new StartGate(spec.beforeStart);
    let env: Record<string, string>;
    try {
      env = await prepareHome(spec, this.daemonEnv);
      await gate.passed();
    } catch (err) {
      await gate.settled();
      throw err;
    }
    // The prompt is written at once, then stdin closed: Claude and Gemini only wait a moment for it.
    const child = await spawnWrapped(this.spawner, spec, env);
    const pid = child.pid;
    const record: PidFile = {
      pid,
      startTime: processStartTime(pid),
      runId: spec.runId,
      command: spec.command,
      labels: spec.labels,
      startedAt: this.now().toISOString(),
    };
    await writeFileAtomic(path.join(spec.stateDir, PID_FILE), `${JSON.stringify(record, null, 2)}\n`);
    const tails = tailsOf(spec.stateDir, spec.onStdout, spec.onStderr);
    const run: Running = { pid, stateDir: spec.stateDir, record, child, tails };
    let poll: NodeJS.Timeout | undefined;
    // Lost: the spawning thread died with the agent still running. Polled like an adopted process,
    // unless the engine is closing (the agent is then left for the next daemon to adopt).
    run.exit = child.exit.then((e): RunExit | Promise<RunExit> => {
      if (!e.lost) return { exitCode: e.code, signal: e.signal, oomKilled: false };
      if (this.closed)
        return { exitCode: null, signal: null, oomKilled: false, error: 'the engine was closed' };
      return polledExit(run, (t) => (poll = t)).finally(() => clearTimeout(poll));
    });
    this.runs.set(String(pid), run);
    this.log.debug({ runId: spec.runId, pid }, 'agent process started');
    return { engine: 'process' as const, id: String(pid), runId: spec.runId };
  }

  async wait(handle: RunHandle, timeoutMs: number): Promise<RunExit> {
    const run = this.runs.get(handle.id);
    if (!run)
      return {
        exitCode: null,
        signal: null,
        oomKilled: false,
        error: `no process known for run ${handle.runId} (pid ${handle.id})`,
      };
    let timer: NodeJS.Timeout | undefined;
    let poll: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new WaitTimeoutError(handle.id, timeoutMs)), timeoutMs);
    });
    // An adopted process is not our child: its end is observed by polling, its code read from the wrapper's file.
    const ended = run.exit ?? polledExit(run, (t) => (poll = t));
    try {
      const exit = await Promise.race([ended, timeout]);
      await Promise.all(run.tails.map((t) => t.finish()));
      return exit;
    } finally {
      clearTimeout(timer);
      clearTimeout(poll);
    }
  }

  async signal(handle: RunHandle, signal: StopSignal): Promise<void> {
    const run = this.runs.get(handle.id);
    if (!run || (!run.child && !isSameProcessAlive(run.pid, run.record.startTime))) return;
    await signalTree(run.pid, signal, run.record.runId);
  }

  async remove(handle: RunHandle): Promise<void> {
    const run = this.runs.get(handle.id);
    if (!run) return;
    this.runs.delete(handle.id);
    // Anything the agent left running (its group, setsid descendants) goes with it.
    if (run.child || isSameProcessAlive(run.pid, run.record.startTime))
      await signalTree(run.pid, 'SIGKILL', run.record.runId);
    await Promise.all(run.tails.map((t) => t.finish()));
    for (const f of [PID_FILE, EXIT_FILE, RAW_STDOUT, RAW_STDERR]) unlinkQuietly(path.join(run.stateDir, f));
  }

  async find(runId: string, stateDir: string): Promise<RunInfo | undefined> {
    for (const [id, run] of this.runs) if (run.record.runId === runId) return info(id, run, isRunning(run));
    const record = await readPidFile(path.join(stateDir, PID_FILE));
    if (!record || record.runId !== runId) return undefined;
    const run: Running = { pid: record.pid, stateDir, record, tails: [] };
    this.runs.set(String(record.pid), run);
    return info(String(record.pid), run, isRunning(run));
  }

  async list(labels: Record<string, string>): Promise<RunInfo[]> {
    const matches = (l: Record<string, string>) => Object.entries(labels).every(([k, v]) => l[k] === v);
    return [...this.runs.entries()]
      .filter(([, r]) => matches(r.record.labels))
      .map(([id, r]) => info(id, r, isRunning(r)));
  }

  async attach(
    handle: RunHandle,
    onStdout: (c: Buffer) => void,
    onStderr: (c: Buffer) => void,
  ): Promise<void> {
    const run = this.runs.get(handle.id);
    if (!run || run.child) return;
    // The whole output from the start: an adopting daemon rewrites the run's logs.
    run.tails = tailsOf(run.stateDir, onStdout, onStderr);
  }

  async close(): Promise<void> {
    await Promise.all([...this.runs.values()].flatMap((r) => r.tails.map((t) => t.finish())));
    this.runs.clear();
    this.closed = true;
    await this.spawner.close();
  }
}

export function createProcessEngine(
  _config: Config,
  log: Logger,
  options: ProcessEngineOptions = {},
): Engine {
  return new ProcessEngine(log, options.env ?? process.env, options.now ?? (() => new Date()));
}
