import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Env } from '../config/load.js';
import { PACKAGE_ROOT } from '../config/paths.js';

/** Process globals passed in, so commands run the same in tests and for real. */
export interface CliIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Env;
  cwd: string;
  /** The terminal's width when stdout is a terminal (output such as `status` is cut to it). */
  columns?: () => number | undefined;
  /** Where SIGTERM/SIGINT arrive (the daemon stops on the first, forces on the second); default `process`. */
  signals?: NodeJS.Process;
  /** Ends the process now (a daemon that lost the leader Lease); default `process.exit`. */
  exit?: (code: number) => void;
}

export const processIO = (): CliIO => ({
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  env: process.env,
  cwd: process.cwd(),
  columns: () => (process.stdout.isTTY ? process.stdout.columns : undefined),
});

export { PACKAGE_ROOT };

export const PACKAGE_VERSION = (
  JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

/** Exit codes, a stable interface for scripts: 0 success, 1 the work failed, 2 usage/config error. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** Thrown by commands to end with a message and an exit code, without a stack trace. */
export class CliExit extends Error {
  constructor(
    readonly code: number,
    message = '',
  ) {
    super(message);
    this.name = 'CliExit';
  }
}
