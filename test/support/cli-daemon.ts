// The real `triage-runner daemon` command as a child process for end-to-end tests: started from the
// source with a config file, its output kept for failure messages, stopped with SIGTERM then SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { stringify } from 'yaml';
import { REPO_ROOT } from './runs.js';
import { eventually } from './wait.js';

const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

export interface CliDaemon {
  child: ChildProcess;
  /** Everything the daemon printed so far (stdout and stderr). */
  logs(): string;
  /** The last 3,000 characters of the output, for assertion messages. */
  tail(): string;
  /** SIGTERM, then SIGKILL after 15 s; resolves once it has exited. */
  stop(): Promise<void>;
}

/** Polls `fn` every 100 ms until it returns a value; throws after `timeoutMs` with `detail()`. */
export async function until<T>(
  what: string,
  timeoutMs: number,
  fn: () => Promise<T | undefined>,
  detail: () => string = () => '',
): Promise<T> {
  return eventually(what, fn, timeoutMs, 100, detail);
}

export interface CliDaemonOptions {
  /** Folder for the config file and the skills cache. */
  dir: string;
  /** Configuration keys; merged over: no skills sources or triage preload, HTTP on a free port, info logs. */
  config: Record<string, unknown>;
  /** A shipped config file to run instead of writing one from `config` (ignored then; override with env). */
  configFile?: string;
  /** Flags after `daemon --config <file>`. */
  args: string[];
  env: Record<string, string | undefined>;
  /** What in the output means started (default: "daemon ready"; a standby never says that). */
  readyPattern?: RegExp;
  /** A command the daemon runs under (its arguments, then node's): another user, a network namespace. */
  wrap?: string[];
  /** The daemon's working directory (default: the repository). */
  cwd?: string;
}

/** Runs the daemon in a network namespace of its own, loopback up: its ports are free whatever runs beside it. */
export const OWN_NETWORK = ['unshare', '--net', 'sh', '-c', 'ip link set lo up && exec "$0" "$@"'];

/** Runs the daemon as `nobody` (uid and gid 65534, no other groups): a user that owns nothing. */
export const AS_NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups', '--'];

/** Writes the config and starts `triage-runner daemon --config <file> <args>`; resolves once it watches its root. */
export async function startCliDaemon(options: CliDaemonOptions): Promise<CliDaemon> {
  const { dir, args, env } = options;
  const configFile = options.configFile ?? path.join(dir, 'triage-runner.yaml');
  // The daemon watches a root that exists (it creates one only with --create-root).
  const root = options.config.workspaces_root;
  if (typeof root === 'string') await mkdir(root, { recursive: true });
  if (!options.configFile) {
    await writeFile(
      configFile,
      stringify({
        skills: { sources: [], cache_dir: path.join(dir, 'skills'), disable_triage_preload: true },
        http: { port: 0 },
        log: { level: 'info' },
        ...options.config,
      }),
    );
  }
  const argv = [
    process.execPath,
    '--import',
    // By path: the daemon may run from a folder outside the repository (cwd).
    pathToFileURL(path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href,
    path.join(REPO_ROOT, 'src/cli/main.ts'),
    'daemon',
    '--config',
    configFile,
    ...args,
  ];
  const [command = process.execPath, ...rest] = [...(options.wrap ?? []), ...argv];
  const child = spawn(command, rest, {
    cwd: options.cwd ?? REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  child.stdout?.on('data', (c: Buffer) => (logs += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (logs += c.toString()));
  const tail = () => `daemon output (tail): ${logs.slice(-3000)}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const daemon: CliDaemon = {
    child,
    logs: () => logs,
    tail,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, STOP_TIMEOUT_MS))]);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
  try {
    await until(
      'daemon ready',
      READY_TIMEOUT_MS,
      async () => {
        if (child.exitCode !== null) throw new Error(`daemon exited with ${child.exitCode}. ${tail()}`);
        return (options.readyPattern ?? /daemon ready|watching/i).test(logs) ? true : undefined;
      },
      tail,
    );
  } catch (err) {
    await daemon.stop();
    throw err;
  }
  return daemon;
}

/** Drops `incident` into `workspace` the way producers do: a temp file renamed into place. */
export async function dropIncident(workspace: string, incident: Record<string, unknown>): Promise<void> {
  await mkdir(workspace, { recursive: true });
  await writeFile(path.join(workspace, 'incident.json.tmp'), JSON.stringify(incident, null, 2));
  await rename(path.join(workspace, 'incident.json.tmp'), path.join(workspace, 'incident.json'));
}

export interface FinishedRun {
  state: { state: string; runs: { id: string; status: string }[] };
  /** The last run's bundle folder. */
  bundle: string;
  /** The last run's result.json, or undefined when there is none (a rejected incident). */
  result: Record<string, unknown> | undefined;
}

/** Waits until the workspace's state.json is final (succeeded, failed or rejected); returns its last run. */
export async function waitForFinalRun(
  workspace: string,
  timeoutMs: number,
  detail: () => string,
): Promise<FinishedRun> {
  const state = await until(
    `a final state in ${path.join(workspace, '.triage', 'state.json')}`,
    timeoutMs,
    async () => {
      const s = await readFile(path.join(workspace, '.triage', 'state.json'), 'utf8').then(
        (t) => JSON.parse(t) as FinishedRun['state'],
        () => undefined,
      );
      return s && ['succeeded', 'failed', 'rejected'].includes(s.state) ? s : undefined;
    },
    detail,
  );
  const bundle = path.join(workspace, '.triage', 'runs', state.runs.at(-1)?.id ?? '');
  const result = await readFile(path.join(bundle, 'result.json'), 'utf8').then(
    (t) => JSON.parse(t) as Record<string, unknown>,
    () => undefined,
  );
  return { state, bundle, result };
}
