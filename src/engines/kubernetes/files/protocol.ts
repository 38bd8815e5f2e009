import path from 'node:path';

// How an agent pod gets its run's files and returns what its agent wrote, through the daemon's Service
// port with the run's files token (the pod mounts no volume of the daemon's). Both directions carry the
// same stream, gzip-compressed: records, each a JSON header line and, for a file, its bytes. Paths are
// the agent's (absolute, as the Job's mounts place them). Node builtins only: the pod's two programs
// (fetch.ts in the init container, sync.ts in front of the agent CLI) are installed beside this module.

/** Under the daemon's pod port: `GET …/inputs` (the run's files), `POST …/outputs` (what the agent wrote). */
export const FILES_PREFIX = '/v1/run-files/';
export const INPUTS_PATH = `${FILES_PREFIX}inputs`;
export const OUTPUTS_PATH = `${FILES_PREFIX}outputs`;

/** In the pod: the emptyDir the init container fills; the agent container mounts parts of it by subPath. */
export const POD_FILES_ROOT = '/run/triage-runner/files';
/** Inside that emptyDir: the pod's programs (never a mount target: every target is an absolute path). */
export const PROGRAM_SUBPATH = '.triage-runner/program';
/** Where the agent container mounts the programs (read-only). */
export const PROGRAM_MOUNT = '/opt/triage/run-files';
/** Where both containers mount the run's Secret holding the token. */
export const TOKEN_MOUNT = '/run/triage-runner/token';
export const TOKEN_KEY = 'token';
/** Where the agent's stdin is delivered (a file the CLI's stdin is read from). */
export const STDIN_PATH = '/run/triage-runner/stdin';

/** The pod programs' settings, set in the Job. */
export const ENV = {
  url: 'TRIAGE_RUN_FILES_URL',
  tokenFile: 'TRIAGE_RUN_FILES_TOKEN_FILE',
  root: 'TRIAGE_RUN_FILES_ROOT',
  /** JSON array of the writable mounts' targets: what sync.ts returns. */
  outputs: 'TRIAGE_RUN_FILES_OUTPUTS',
  intervalMs: 'TRIAGE_RUN_FILES_INTERVAL_MS',
  maxOutputBytes: 'TRIAGE_RUN_FILES_MAX_OUTPUT_BYTES',
  /** How long sync.ts keeps trying its last upload after the agent ended. */
  finalMs: 'TRIAGE_RUN_FILES_FINAL_MS',
} as const;

/** A header line longer than this is not one. */
export const MAX_HEADER_BYTES = 16 * 1024;
const MAX_PATH_BYTES = 4096;
const MAX_NAME_BYTES = 255;

export interface DirRecord {
  k: 'd';
  p: string;
}
export interface FileRecord {
  k: 'f';
  p: string;
  /** Its size: the bytes that follow the header. */
  n: number;
  /** Executable. */
  x?: boolean;
}
/** A file the sender left out, and why (too large, a link). */
export interface Skipped {
  p: string;
  why: string;
}
/** The last record: what came, so that a cut stream is told from a whole one. */
export interface EndRecord {
  k: 'end';
  files: number;
  bytes: number;
  /** Outputs: the upload made when the agent had ended (nothing more will come). */
  final?: boolean;
  skipped?: Skipped[];
}
export type FileSetRecord = DirRecord | FileRecord;

/** The stream is not one the other side could have sent whole (cut, malformed, over a bound). */
export class FrameError extends Error {
  constructor(
    message: string,
    /** Over a size or count bound, rather than malformed. */
    readonly tooLarge = false,
  ) {
    super(message);
    this.name = 'FrameError';
  }
}

/** Why `p` is not a path a record may name (absolute, normalized, no `..`, bounded), or undefined. */
export function pathProblem(p: unknown): string | undefined {
  if (typeof p !== 'string' || p === '') return 'the path is missing';
  if (p.includes('\0')) return 'the path contains a NUL byte';
  if (Buffer.byteLength(p) > MAX_PATH_BYTES) return `the path is longer than ${MAX_PATH_BYTES} bytes`;
  if (!p.startsWith('/') || p === '/') return `${JSON.stringify(p)} is not an absolute path below /`;
  const parts = p.slice(1).split('/');
  if (parts.some((s) => s === '..')) return `${JSON.stringify(p)} climbs out with ..`;
  if (path.posix.normalize(p) !== p || p.endsWith('/'))
    return `${JSON.stringify(p)} is not in its normal form`;
  if (parts.some((s) => Buffer.byteLength(s) > MAX_NAME_BYTES))
    return `${JSON.stringify(p)} has a name longer than ${MAX_NAME_BYTES} bytes`;
  return undefined;
}

/** Whether `p` is `dir` or below it. */
export const isWithin = (p: string, dir: string): boolean => p === dir || p.startsWith(`${dir}/`);

export const headerOf = (record: FileSetRecord | EndRecord): Buffer =>
  Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');

function recordOf(line: string): FileSetRecord | EndRecord {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new FrameError('a record header is not JSON');
  }
  const r = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  if (r.k === 'end') {
    if (!Number.isSafeInteger(r.files) || !Number.isSafeInteger(r.bytes))
      throw new FrameError('the end record has no file and byte counts');
    return r as unknown as EndRecord;
  }
  if (r.k !== 'd' && r.k !== 'f') throw new FrameError(`unknown record kind ${JSON.stringify(r.k)}`);
  const problem = pathProblem(r.p);
  if (problem) throw new FrameError(problem);
  if (r.k === 'f' && (!Number.isSafeInteger(r.n) || (r.n as number) < 0))
    throw new FrameError(`${String(r.p)}: the file's size is not a count of bytes`);
  return r as unknown as FileSetRecord;
}

export interface FrameHandlers {
  /** A folder, or a file whose bytes follow (`data`, then `fileEnd`). */
  record(record: FileSetRecord): void;
  data(chunk: Buffer): void;
  fileEnd(): void;
  end(record: EndRecord): void;
}

/**
 * Reads a record stream pushed to it chunk by chunk (after gunzip), bounded: at most `maxBytes` of file
 * content and `maxRecords` records. Throws FrameError on anything a whole, well-formed stream would not
 * hold; `finish()` throws when the stream stopped before its end record.
 */
export class FrameDecoder {
  private header: Buffer[] = [];
  private headerBytes = 0;
  private remaining = 0;
  private inFile = false;
  private ended: EndRecord | undefined;
  private files = 0;
  private bytes = 0;
  private records = 0;

  constructor(
    private readonly handlers: FrameHandlers,
    private readonly limits: { maxBytes: number; maxRecords: number },
  ) {}

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.ended) throw new FrameError('bytes follow the end record');
      if (this.inFile) {
        const take = Math.min(this.remaining, chunk.length - at);
        this.handlers.data(chunk.subarray(at, at + take));
        at += take;
        this.remaining -= take;
        if (this.remaining === 0) this.closeFile();
        continue;
      }
      const nl = chunk.indexOf(0x0a, at);
      const stop = nl === -1 ? chunk.length : nl;
      this.headerBytes += stop - at;
      if (this.headerBytes > MAX_HEADER_BYTES)
        throw new FrameError(`a record header is longer than ${MAX_HEADER_BYTES} bytes`);
      this.header.push(chunk.subarray(at, stop));
      at = stop;
      if (nl === -1) break;
      at = nl + 1;
      const line = Buffer.concat(this.header).toString('utf8');
      this.header = [];
      this.headerBytes = 0;
      this.take(recordOf(line));
    }
  }

  private take(record: FileSetRecord | EndRecord): void {
    if (record.k === 'end') {
      if (record.files !== this.files || record.bytes !== this.bytes)
        throw new FrameError(
          `the end record counts ${record.files} files of ${record.bytes} bytes, ${this.files} of ${this.bytes} came`,
        );
      this.ended = record;
      this.handlers.end(record);
      return;
    }
    this.records += 1;
    if (this.records > this.limits.maxRecords)
      throw new FrameError(`more than ${this.limits.maxRecords} files and folders`, true);
    this.handlers.record(record);
    if (record.k === 'd') return;
    this.files += 1;
    this.bytes += record.n;
    if (this.bytes > this.limits.maxBytes)
      throw new FrameError(`the files come to more than ${this.limits.maxBytes} bytes`, true);
    this.inFile = true;
    this.remaining = record.n;
    if (record.n === 0) this.closeFile();
  }

  private closeFile(): void {
    this.inFile = false;
    this.handlers.fileEnd();
  }

  /** The end record; throws when the stream stopped short of it. */
  finish(): EndRecord {
    if (!this.ended) throw new FrameError('the stream stopped before its end record (cut short)');
    return this.ended;
  }
}
