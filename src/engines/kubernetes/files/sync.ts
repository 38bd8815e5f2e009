import { spawn } from 'node:child_process';
import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readdirSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import { Refusal, call } from './http.js';
import { ENV, OUTPUTS_PATH, headerOf, type Skipped } from './protocol.js';

// In front of the agent CLI in an agent pod: runs it (the arguments after `--`; stdio passed through,
// signals forwarded, its exit its own) and returns what it writes in its writable folders (the report's
// output/, the run's agent-notes/) to the daemon with the run's files token: every interval what changed
// since the last upload, and once more when the CLI has ended, marked final. A pod that dies therefore
// loses only what its agent wrote since the last upload, and the daemon can tell a whole return from a
// cut one. Runs on import; node builtins only.

const FORWARDED: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];
const UPLOAD_TIMEOUT_MS = 30_000;
/** Files looked at in the writable folders, at most (what an agent writes is a few). */
const MAX_FILES = 10_000;

interface Seen {
  /** The agent's path (what the daemon is told). */
  p: string;
  /** Where it is (below ENV.root when the pod's file system is a folder: the tests run it so). */
  full: string;
  key: string;
}

function note(message: string): void {
  process.stderr.write(`run-files: ${message}\n`);
}

/** Regular files below each folder (by agent path), never through a link; a missing folder is empty. */
function scan(root: string, dirs: readonly string[]): Map<string, Seen> {
  const found = new Map<string, Seen>();
  const walk = (dir: string): void => {
    let names: string[];
    try {
      names = readdirSync(path.join(root, dir)).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (found.size >= MAX_FILES) return;
      const p = path.posix.join(dir, name);
      const full = path.join(root, p);
      const st = lstatSync(full, { throwIfNoEntry: false });
      if (st?.isDirectory()) walk(p);
      else if (st?.isFile()) found.set(p, { p, full, key: `${st.size}:${st.mtimeMs}` });
    }
  };
  for (const dir of dirs) walk(dir);
  return found;
}

/** A file's bytes, read without following a link; undefined when it went away or is no file now. */
function readFile(full: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(full, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    return fstatSync(fd).isFile() ? readFileSync(fd) : undefined;
  } finally {
    closeSync(fd);
  }
}

interface Upload {
  body: Buffer;
  sent: [string, string][];
}

/** The changed files as one gzip'd record stream, within `maxBytes`; what did not fit is listed as skipped. */
function build(changed: Seen[], final: boolean, maxBytes: number): Upload {
  const parts: Buffer[] = [];
  const skipped: Skipped[] = [];
  const sent: [string, string][] = [];
  let bytes = 0;
  let files = 0;
  for (const file of changed) {
    const data = readFile(file.full);
    if (!data) continue;
    if (bytes + data.length > maxBytes) {
      skipped.push({ p: file.p, why: `${data.length} bytes, over the ${maxBytes} bytes a pod may return` });
      continue;
    }
    parts.push(headerOf({ k: 'f', p: file.p, n: data.length }), data);
    bytes += data.length;
    files += 1;
    sent.push([file.p, file.key]);
  }
  parts.push(
    headerOf({ k: 'end', files, bytes, ...(final ? { final } : {}), ...(skipped.length ? { skipped } : {}) }),
  );
  return { body: gzipSync(Buffer.concat(parts)), sent };
}

class Returner {
  private sent = new Map<string, string>();
  private busy: Promise<void> | undefined;
  private refused = false;

  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly root: string,
    private readonly dirs: readonly string[],
    private readonly maxBytes: number,
  ) {
    // What was there before the agent started came from the daemon: only changes go back.
    for (const [p, seen] of scan(root, dirs)) this.sent.set(p, seen.key);
  }

  private changed(): Seen[] {
    return [...scan(this.root, this.dirs).values()].filter((s) => this.sent.get(s.p) !== s.key);
  }

  private async send(final: boolean): Promise<void> {
    const upload = build(this.changed(), final, this.maxBytes);
    const res = await call(this.url, {
      method: 'POST',
      token: this.token,
      body: upload.body,
      timeoutMs: UPLOAD_TIMEOUT_MS,
    });
    res.resume();
    for (const [p, key] of upload.sent) this.sent.set(p, key);
  }

  /** An upload of what changed, unless one is under way or the daemon refused for good. */
  tick(): void {
    if (this.busy || this.refused || this.changed().length === 0) return;
    this.busy = this.send(false)
      .catch((err: unknown) => this.failed(err))
      .finally(() => (this.busy = undefined));
  }

  private failed(err: unknown): void {
    if (err instanceof Refusal && err.final) {
      this.refused = true;
      note(`the daemon refused what the agent wrote: ${err.message}`);
    } else
      note(
        `returning what the agent wrote failed (${err instanceof Error ? err.message : String(err)}); trying again`,
      );
  }

  /** The last upload, marked final, tried again with backoff for up to `withinMs`. */
  async finish(withinMs: number): Promise<void> {
    await this.busy;
    const until = Date.now() + withinMs;
    for (let wait = 500; !this.refused; wait *= 2) {
      try {
        return await this.send(true);
      } catch (err) {
        this.failed(err);
        if (Date.now() + wait > until) break;
        await sleep(wait);
      }
    }
    note('what the agent wrote last could not be returned to the daemon');
  }
}

function settings() {
  const url = process.env[ENV.url];
  const tokenFile = process.env[ENV.tokenFile];
  const dirs = JSON.parse(process.env[ENV.outputs] ?? '[]') as unknown;
  const sep = process.argv.indexOf('--');
  const [command, ...args] = sep === -1 ? [] : process.argv.slice(sep + 1);
  if (!url || !tokenFile || !command || !Array.isArray(dirs) || !dirs.every((d) => typeof d === 'string')) {
    note(`${ENV.url}, ${ENV.tokenFile} and ${ENV.outputs} must be set, and the command given after --`);
    process.exit(126);
  }
  const number = (name: string, fallback: number) => Number(process.env[name]) || fallback;
  return {
    url: new URL(OUTPUTS_PATH.slice(1), url.endsWith('/') ? url : `${url}/`).href,
    token: readFileSync(tokenFile, 'utf8').trim(),
    // Unset in a pod; a folder standing for the pod's file system when the pod is emulated on a host.
    root: process.env[ENV.root] ?? '/',
    dirs: dirs as string[],
    command,
    args,
    intervalMs: number(ENV.intervalMs, 15_000),
    maxBytes: number(ENV.maxOutputBytes, 16 << 20),
    finalMs: number(ENV.finalMs, 15_000),
  };
}

function main(): void {
  const s = settings();
  const returner = new Returner(s.url, s.token, s.root, s.dirs, s.maxBytes);
  // The CLI gets the pod's environment without these settings.
  const env = { ...process.env };
  for (const name of Object.values(ENV)) delete env[name];
  const child = spawn(s.command, s.args, { stdio: 'inherit', env });
  for (const signal of FORWARDED) process.on(signal, () => child.kill(signal));
  const timer = setInterval(() => returner.tick(), s.intervalMs);
  child.on('error', (err: NodeJS.ErrnoException) => {
    note(`cannot start ${s.command} (${err.code ?? err.message})`);
    process.exit(err.code === 'ENOENT' ? 127 : 126);
  });
  child.on('exit', (code, signal) => {
    clearInterval(timer);
    void returner.finish(s.finalMs).then(() => {
      // The container's first process cannot die of a signal it does not handle: a shell's exit code says it.
      process.exit(signal ? 128 + (osConstants.signals[signal] ?? 0) : (code ?? 1));
    });
  });
}

main();
