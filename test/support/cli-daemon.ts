// The real `triage-runner daemon` command as a child process for end-to-end tests: started from the
// source with a config file, its output kept for failure messages, stopped with SIGTERM then SIGKILL.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from './runs.js';

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
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms. ${detail()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Starts `triage-runner daemon --config <configFile> <args>` and waits until it watches its root. */
export async function startCliDaemon(
  configFile: string,
  args: string[],
  env: Record<string, string | undefined>,
): Promise<CliDaemon> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(REPO_ROOT, 'src/cli/main.ts'), 'daemon', '--config', configFile, ...args],
    { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
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
        return /daemon ready|watching/i.test(logs) ? true : undefined;
      },
      tail,
    );
  } catch (err) {
    await daemon.stop();
    throw err;
  }
  return daemon;
}
