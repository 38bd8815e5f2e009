import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Spawns test/support/daemon-main.ts as a real daemon process (its own process group).

const MAIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'daemon-main.ts');
const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface DaemonProcess {
  child: ChildProcess;
  pid: number;
  /** The HTTP port it printed with READY (0 when it serves none). */
  port: number;
  stderr: () => string;
  exited: Promise<number | null>;
}

export async function spawnDaemon(
  env: Record<string, string>,
  readyTimeoutMs = 20_000,
): Promise<DaemonProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    cwd: PACKAGE,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let err = '';
  let out = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`daemon did not print READY within ${readyTimeoutMs} ms; stderr:\n${err}`)),
      readyTimeoutMs,
    );
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('READY')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`daemon exited with ${String(code)} before READY; stderr:\n${err}`));
    });
  });
  if (child.pid === undefined) throw new Error('daemon process has no pid');
  const port = Number(/READY (\d+)/.exec(out)?.[1] ?? 0);
  return { child, pid: child.pid, port, stderr: () => err, exited };
}

/** Kills the process group (daemon and the agents it started), ignoring ones already gone. */
export function killGroup(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}
