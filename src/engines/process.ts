import { spawn, type ChildProcess } from 'node:child_process';
import { lstat, mkdir, readdir, readFile, rm, symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { writeFileAtomic } from '../util/fs.js';
import { errorMessage } from '../util/errors.js';
import { isSameProcessAlive, processStartTime } from '../util/process.js';
import { RUN_LABELS, WaitTimeoutError, assertNoEngineSocket } from './labels.js';
import type { Engine, RunExit, RunInfo, RunSpec, StopSignal } from './types.js';

// The process engine: the agent CLI as a child process of the daemon (development, or a daemon that
// already runs inside an isolated pod). No shell: command and args go to exec as they are. The child
// leads its own process group so signals reach everything it started.
//
// Isolation is the caller's business here: mounts are not enforced read-only. A mount whose target lies
// under HOME (skills, CLI config) becomes a symlink; any other mount must have target === source,
// because the run pipeline hands the agent host paths under this engine.

export const PID_FILE = 'agent.pid';
const ADOPTED_POLL_MS = 250;
const TRIAGE_RUNS = path.join('.triage', 'runs');

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
  /** Folders searched for `<workspace>/.triage/runs/<run>/agent.pid` by `list`; default: workspaces_root. */
  workspacesRoots?: string[];
  now?: () => Date;
}

interface Running {
  pid: number;
  pidFile?: string;
  record: PidFile;
  child?: ChildProcess;
  /** Settles with the child's exit (own children only). */
  exit?: Promise<RunExit>;
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

export function createProcessEngine(config: Config, log: Logger, options: ProcessEngineOptions = {}): Engine {
  const daemonEnv = options.env ?? process.env;
  const roots = options.workspacesRoots ?? [config.workspaces_root];
  const now = options.now ?? (() => new Date());
  const runs = new Map<string, Running>();

  const signalGroup = (run: Running, signal: NodeJS.Signals): void => {
    if (!run.child && !isSameProcessAlive(run.pid, run.record.startTime)) return;
    try {
      process.kill(-run.pid, signal);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  };

  const readPidFile = async (file: string): Promise<PidFile | undefined> => {
    try {
      return JSON.parse(await readFile(file, 'utf8')) as PidFile;
    } catch {
      return undefined;
    }
  };

  const scanPidFiles = async (): Promise<string[]> => {
    const files: string[] = [];
    for (const root of roots) {
      const workspaces = await readdir(root, { withFileTypes: true }).catch(() => []);
      for (const ws of workspaces) {
        if (!ws.isDirectory()) continue;
        const runsDir = path.join(root, ws.name, TRIAGE_RUNS);
        const runDirs = await readdir(runsDir, { withFileTypes: true }).catch(() => []);
        for (const r of runDirs) if (r.isDirectory()) files.push(path.join(runsDir, r.name, PID_FILE));
      }
    }
    return files;
  };

  const engine: Engine = {
    name: 'process',

    async ping() {
      // Nothing to reach: the CLI is looked up on PATH at start.
    },

    async start(spec) {
      assertNoEngineSocket(spec.mounts);
      const env = processEnv(daemonEnv, spec);
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
      const child = spawn(spec.command, spec.args, {
        cwd: spec.workdir,
        env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', (err) => {
          const code = (err as NodeJS.ErrnoException).code;
          reject(
            new Error(
              code === 'ENOENT'
                ? `agent CLI ${spec.command} not found (PATH=${env.PATH ?? ''}, cwd=${spec.workdir}): install it or set agent.command to its path`
                : `cannot start agent CLI ${spec.command}: ${errorMessage(err)}`,
              { cause: err },
            ),
          );
        });
      });
      const pid = child.pid as number;
      const exit = new Promise<RunExit>((resolve) => {
        child.once('close', (code, signal) => resolve({ exitCode: code, signal, oomKilled: false }));
      });
      child.stdout?.on('data', (c: Buffer) => spec.onStdout(c));
      child.stderr?.on('data', (c: Buffer) => spec.onStderr(c));
      child.stdin?.on('error', (err) =>
        log.debug({ err: errorMessage(err), runId: spec.runId }, 'stdin write failed'),
      );
      child.stdin?.end(spec.stdin);

      const record: PidFile = {
        pid,
        startTime: processStartTime(pid),
        runId: spec.runId,
        command: spec.command,
        labels: spec.labels,
        startedAt: now().toISOString(),
      };
      const run: Running = { pid, record, child, exit };
      if (spec.stateDir) {
        run.pidFile = path.join(spec.stateDir, PID_FILE);
        await writeFileAtomic(run.pidFile, `${JSON.stringify(record, null, 2)}\n`);
      }
      runs.set(String(pid), run);
      log.debug({ runId: spec.runId, pid }, 'agent process started');
      return { engine: 'process', id: String(pid), runId: spec.runId };
    },

    async wait(handle, timeoutMs) {
      const run = runs.get(handle.id);
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
      // An adopted process is not our child: its exit status went to its dead parent, so only its end is observable.
      const ended =
        run.exit ??
        new Promise<RunExit>((resolve) => {
          const check = () => {
            if (isSameProcessAlive(run.pid, run.record.startTime)) poll = setTimeout(check, ADOPTED_POLL_MS);
            else
              resolve({
                exitCode: null,
                signal: null,
                oomKilled: false,
                error: `process ${run.pid} was adopted after a daemon restart: its exit code and output are not observable`,
              });
          };
          check();
        });
      try {
        return await Promise.race([ended, timeout]);
      } finally {
        clearTimeout(timer);
        clearTimeout(poll);
      }
    },

    async signal(handle, signal: StopSignal) {
      const run = runs.get(handle.id);
      if (run) signalGroup(run, signal);
    },

    async remove(handle) {
      const run = runs.get(handle.id);
      if (!run) return;
      // Anything the agent left running in its group goes with it.
      signalGroup(run, 'SIGKILL');
      if (run.pidFile) await rm(run.pidFile, { force: true });
      runs.delete(handle.id);
    },

    async list(labels) {
      const matches = (l: Record<string, string>) => Object.entries(labels).every(([k, v]) => l[k] === v);
      const found = new Map<string, RunInfo>();
      for (const [id, run] of runs) {
        if (!matches(run.record.labels)) continue;
        const running = run.child
          ? run.child.exitCode === null && run.child.signalCode === null
          : isSameProcessAlive(run.pid, run.record.startTime);
        found.set(id, {
          handle: { engine: 'process', id, runId: run.record.runId },
          labels: run.record.labels,
          running,
          ...startedAt(run.record),
        });
      }
      for (const file of await scanPidFiles()) {
        const record = await readPidFile(file);
        if (!record || !matches(record.labels) || found.has(String(record.pid))) continue;
        const id = String(record.pid);
        runs.set(id, { pid: record.pid, pidFile: file, record });
        found.set(id, {
          handle: { engine: 'process', id, runId: record.runId ?? record.labels[RUN_LABELS.run] ?? '' },
          labels: record.labels,
          running: isSameProcessAlive(record.pid, record.startTime),
          ...startedAt(record),
        });
      }
      return [...found.values()];
    },

    async attach(handle, _onStdout, onStderr) {
      // The pipes of a process started by a previous daemon died with it: its output cannot be
      // re-attached. Say so in the run's stderr log rather than pretending it was empty.
      if (runs.get(handle.id)?.child) return;
      onStderr(
        Buffer.from(
          `[triage-runner: process ${handle.id} was adopted after a daemon restart; its output could not be re-attached]\n`,
        ),
      );
    },

    async close() {
      runs.clear();
    },
  };
  return engine;
}
