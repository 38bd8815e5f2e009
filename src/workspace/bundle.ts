import { constants, createWriteStream, openSync, type WriteStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import path from 'node:path';
import { RUN_FILES, runDirOf } from './layout.js';
import type { Redactor } from '../log/redact.js';
import { fileModeFor, writeFileAtomic } from '../util/fs.js';
import { assertNoSymlinkBelow, ensureOwnDir, readOwnFile, readOwnFileBelow } from '../util/safe-path.js';

// One audit bundle per run: `<workspace>/.triage/runs/<run-id>/`. Everything written here passes
// through the redactor first, and never through a symbolic link below the workspace.

const LONG_LINE_CHARS = 64 * 1024;

export class RunBundle {
  /** The workspace the bundle belongs to (`<workspace>/.triage/runs/<run-id>`). */
  readonly workspaceDir: string;

  private constructor(
    workspaceDir: string,
    readonly dir: string,
    private readonly redactor: Redactor,
  ) {
    this.workspaceDir = workspaceDir;
  }

  static async create(workspaceDir: string, runId: string, redactor: Redactor): Promise<RunBundle> {
    const dir = runDirOf(workspaceDir, runId);
    await ensureOwnDir(path.join(dir, RUN_FILES.triageDir), workspaceDir);
    return new RunBundle(workspaceDir, dir, redactor);
  }

  path(name: string): string {
    return path.join(this.dir, name);
  }

  /** Throws UnsafePathError when a folder between the workspace and `name` is a symlink. */
  private async guard(name: string): Promise<void> {
    await assertNoSymlinkBelow(this.workspaceDir, path.dirname(this.path(name)));
  }

  /** The run's redaction (configured secret values + token shapes), for text that leaves the daemon, e.g. the prompt. */
  redact(text: string): string {
    return this.redactor.redact(text);
  }

  async writeText(name: string, text: string): Promise<void> {
    await this.guard(name);
    await writeFileAtomic(this.path(name), this.redactor.redact(text));
  }

  async writeJson(name: string, value: unknown): Promise<void> {
    await this.guard(name);
    await writeFileAtomic(this.path(name), `${JSON.stringify(this.redactor.redactValue(value), null, 2)}\n`);
  }

  /**
   * A stream for a log the run produces (agent stdout/stderr, triage output), redacted line by line and
   * capped; `rewrite` (e.g. host paths to the agent's) is applied to each line before redaction.
   */
  openLog(name: string, capBytes = 64 * 1024 * 1024, rewrite?: (text: string) => string): RedactingLog {
    return new RedactingLog(this.path(name), this.redactor, capBytes, rewrite);
  }

  /** Makes a sub-folder of the bundle (never through a symlink). */
  async makeDir(name: string): Promise<string> {
    const dir = this.path(name);
    await ensureOwnDir(dir, this.workspaceDir);
    return dir;
  }
}

/**
 * Writes text to a file through the redactor. Text is redacted a line at a time so that a secret split
 * across two chunks is still caught; output past `capBytes` is counted but not written.
 */
export class RedactingLog {
  private readonly stream: WriteStream | undefined;
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private written = 0;
  private closed: Promise<void> | undefined;
  /** Bytes received, before redaction and the cap. */
  received = 0;
  truncated = false;
  /** The first write error (disk full, folder removed); later output is dropped. */
  error: Error | undefined;

  constructor(
    readonly file: string,
    private readonly redactor: Redactor,
    private readonly capBytes: number,
    private readonly rewrite: (text: string) => string = (text) => text,
  ) {
    // O_NOFOLLOW: a link planted in the bundle (the agent may write there) is not followed.
    try {
      const fd = openSync(
        file,
        constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
        fileModeFor(file),
      );
      this.stream = createWriteStream('', { fd });
      this.stream.on('error', (err) => {
        this.error ??= err;
      });
    } catch (err) {
      this.error = err as Error;
    }
  }

  write(chunk: string | Buffer): void {
    // A decoder keeps a multi-byte character split across two chunks intact.
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    this.received += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    this.pending += text;
    const cut = this.pending.lastIndexOf('\n');
    if (cut >= 0) {
      this.emit(this.pending.slice(0, cut + 1));
      this.pending = this.pending.slice(cut + 1);
    }
    // A very long line without a newline is flushed anyway so memory stays bounded; it is cut after the
    // last whitespace or JSON/shell punctuation (minified JSON has no spaces), which no token or key
    // contains, so that a secret is not split in two halves that no longer match.
    if (this.pending.length > LONG_LINE_CHARS) {
      const at = safeCut(this.pending);
      this.emit(this.pending.slice(0, at));
      this.pending = this.pending.slice(at);
    }
  }

  private emit(text: string): void {
    if (this.truncated || this.error || this.closed || !this.stream) return;
    const clean = this.redactor.redact(this.rewrite(text));
    const room = this.capBytes - this.written;
    if (Buffer.byteLength(clean) > room) {
      this.stream.write(Buffer.from(clean).subarray(0, Math.max(0, room)));
      this.stream.write(`\n[triage-runner: output truncated at ${this.capBytes} bytes]\n`);
      this.truncated = true;
      this.written = this.capBytes;
      return;
    }
    this.stream.write(clean);
    this.written += Buffer.byteLength(clean);
  }

  /** Flushes the last partial line and closes the file; resolves (never rejects) even after a write error. */
  close(): Promise<void> {
    if (this.closed) return this.closed;
    const rest = this.pending + this.decoder.end();
    this.pending = '';
    if (rest) this.emit(rest);
    const stream = this.stream;
    this.closed = new Promise<void>((resolve) => {
      if (!stream || stream.destroyed) return resolve();
      stream.once('close', () => resolve());
      stream.end();
    });
    return this.closed;
  }
}

/** Index just after the last separator (whitespace, quote, comma, bracket…) of `text`, else its length. */
function safeCut(text: string): number {
  for (let i = text.length - 1; i > 0; i--) if (CUT_AFTER.has(text.charCodeAt(i))) return i + 1;
  return text.length;
}
const CUT_AFTER = new Set([...' \t\r"\',;{}[]()<>|&'].map((c) => c.charCodeAt(0)));

/**
 * Rewrites a file the agent produced (its report) through the redactor, atomically; resolves to true when
 * something was scrubbed, false when the file was clean, absent or refused. With `base` (the workspace),
 * a symbolic link in any folder between it and the file leaves the file alone: the agent may have
 * swapped `output/` for a link to redirect this write.
 */
export async function scrubFile(
  file: string,
  redactor: Redactor,
  maxBytes = 16 * 1024 * 1024,
  base?: string,
): Promise<boolean> {
  const read = base ? await readOwnFileBelow(base, file, maxBytes) : await readOwnFile(file, maxBytes);
  if (read.kind !== 'ok') return false;
  const clean = redactor.redact(read.text);
  if (clean === read.text) return false;
  if (base) await assertNoSymlinkBelow(base, path.dirname(file));
  await writeFileAtomic(file, clean);
  return true;
}
