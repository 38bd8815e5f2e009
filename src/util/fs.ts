import {
  closeSync,
  constants,
  fstatSync,
  fsync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
  writevSync,
} from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { isTriageOrRunsDir, TRIAGE_DIR } from '../shared/triage-dir.js';
import { randomHex } from './random.js';

// The daemon's hot file writes. Opens, writes into the page cache, renames and closes are made
// synchronously: on a local disk each takes a few microseconds, while the same call through
// `fs/promises` costs 20–50 µs of CPU (a FileHandle, a thread-pool hand-off, a promise) and, over the
// ~1,500 file calls of a run, was most of the daemon's CPU per run (docs/performance.md). Only the
// fsync, which waits on the disk, stays off the event loop.

/** What the daemon keeps under a `.triage/` folder (its records of incidents and runs): its user's only. */
export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;
/**
 * `.triage/` and `.triage/runs/` themselves: searchable by others but never listable or readable, so
 * that an agent running as another uid (a container's) reaches its run folder by its path.
 */
export const PASSAGE_DIR_MODE = 0o711;

/** Files of an incident's workspace outside `.triage/` (incident.json, alerts.json): the agent reads them. */
export const PUBLIC_FILE_MODE = 0o644;
export const PUBLIC_DIR_MODE = 0o755;

const underTriage = (p: string) => path.resolve(p).split(path.sep).includes(TRIAGE_DIR);

/** The mode a new file is created with: private under a `.triage/` folder, readable by all elsewhere. */
export function fileModeFor(file: string): number {
  return underTriage(file) ? PRIVATE_FILE_MODE : PUBLIC_FILE_MODE;
}

/** The mode a new folder is created with (see PASSAGE_DIR_MODE); elsewhere the umask decides. */
export function dirModeFor(dir: string): number {
  const resolved = path.resolve(dir);
  if (isTriageOrRunsDir(resolved)) return PASSAGE_DIR_MODE;
  return underTriage(resolved) ? PRIVATE_DIR_MODE : 0o777;
}

/** `mkdir -p`, each folder it creates with its mode from dirModeFor. */
export function makeDirs(dir: string): void {
  const resolved = path.resolve(dir);
  const missing: string[] = [];
  for (let p = resolved; path.dirname(p) !== p; p = path.dirname(p)) {
    // Something already there ends the walk (not a folder: the write below fails on it).
    if (statSync(p, { throwIfNoEntry: false })) break;
    missing.push(p);
  }
  for (const p of missing.reverse()) {
    try {
      mkdirSync(p, dirModeFor(p));
    } catch (err) {
      // Made meanwhile by another writer: fine; anything else in its place fails the write below.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/** fsync of an open descriptor, in the thread pool. */
export const fsyncFd: (fd: number) => Promise<void> = promisify(fsync);

/** Removes `file`, ignoring a failure (already gone). */
export function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/**
 * Reads a whole file with synchronous calls, only when it is a regular file: a FIFO, socket or device
 * planted in its place is refused (EINVAL) instead of blocking the event loop on its open or read.
 * With `noFollow`, a symbolic link at its place fails with ELOOP; with `maxBytes`, a larger file fails
 * with EFBIG (nothing of it is read).
 */
export function readRegularFileSync(
  file: string,
  options: { noFollow?: boolean; maxBytes?: number } = {},
): Buffer {
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | (options.noFollow ? constants.O_NOFOLLOW : 0);
  const fd = openSync(file, flags);
  try {
    const info = fstatSync(fd);
    if (!info.isFile())
      throw Object.assign(new Error(`EINVAL: ${file} is not a regular file`), { code: 'EINVAL', path: file });
    if (options.maxBytes !== undefined && info.size > options.maxBytes)
      throw Object.assign(
        new Error(`EFBIG: ${file} is ${info.size} bytes, over the ${options.maxBytes}-byte limit`),
        { code: 'EFBIG', path: file },
      );
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes a file so that readers see the old or the new content, never a mix: temp file, fsync, rename, fsync dir. */
export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  mode = fileModeFor(file),
  { createDir = true }: { createDir?: boolean } = {},
): Promise<void> {
  const dir = path.dirname(file);
  // Without createDir, a folder removed meanwhile (a deleted workspace) fails the write with ENOENT
  // instead of being made again.
  if (createDir) makeDirs(dir);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomHex(4)}.tmp`);
  await writeNewFileSynced(tmp, data, mode);
  try {
    renameSync(tmp, file);
  } catch (err) {
    unlinkQuietly(tmp);
    throw err;
  }
  await fsyncDir(dir);
}

/**
 * Replaces `dir/name`: a temp file beside it (a dot name the intake watcher ignores), fsync, rename;
 * false when `dir` is gone. Unlike writeFileAtomic it never re-creates a removed folder, and the caller
 * fsyncs the folder (once for a batch of files).
 */
export async function replaceFileIn(
  dir: string,
  name: string,
  data: string | readonly Uint8Array[],
): Promise<boolean> {
  const tmp = path.join(dir, `.${name}.${randomHex(4)}.tmp`);
  try {
    await writeNewFileSynced(tmp, data);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  try {
    renameSync(tmp, path.join(dir, name));
  } catch (err) {
    unlinkQuietly(tmp);
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  return true;
}

/** Buffers per writev call: Linux's IOV_MAX. */
const IOV_MAX = 1024;

/** Writes every chunk, in order, with as few system calls as writev allows; a short write is finished. */
function writeChunksSync(fd: number, chunks: readonly Uint8Array[]): void {
  for (let i = 0; i < chunks.length; i += IOV_MAX) {
    const group = chunks.slice(i, i + IOV_MAX);
    let written = writevSync(fd, group);
    for (const chunk of group) {
      if (written >= chunk.byteLength) {
        written -= chunk.byteLength;
        continue;
      }
      // Cut short (a disk filling up can do that): the rest of this chunk and the next ones one by one.
      let offset = written;
      written = 0;
      while (offset < chunk.byteLength) offset += writeSync(fd, chunk, offset);
    }
  }
}

/**
 * Creates `file` exclusively (EEXIST when it exists), writes `data` and fsyncs it. `data` may be a list
 * of chunks, written in order without joining them first.
 */
export async function writeNewFileSynced(
  file: string,
  data: string | Uint8Array | readonly Uint8Array[],
  mode = fileModeFor(file),
): Promise<void> {
  const fd = openSync(file, 'wx', mode);
  try {
    if (Array.isArray(data)) writeChunksSync(fd, data);
    else writeFileSync(fd, data as string | Uint8Array);
    await fsyncFd(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes a rename or create in `dir` durable. Some filesystems refuse to fsync a directory; that is not
 * fatal. Calls for one folder are committed together: a call made while that folder's fsync runs waits
 * for the next one (which starts after it, so it covers its rename), and every call made meanwhile
 * shares that next one.
 */
export const fsyncDir: (dir: string) => Promise<void> = groupCommit((dir) => syncDirOnce(dir));

/**
 * Group commit per key: `run(key)` is made for the first call; a call made while it runs waits for the
 * next run, which starts only after the current one ended (so it covers whatever the caller did before
 * calling), and every call made in the meantime shares that next run.
 */
export function groupCommit(run: (key: string) => Promise<void>): (key: string) => Promise<void> {
  const state = new Map<string, { running: Promise<void>; next?: Promise<void> }>();
  const settle = (key: string): void => {
    const current = state.get(key);
    if (!current?.next) {
      state.delete(key);
      return;
    }
    // The queued run becomes the running one; calls from now on queue behind it.
    state.set(key, { running: current.next.finally(() => settle(key)) });
  };
  return (key) => {
    const current = state.get(key);
    if (!current) {
      const running = run(key).finally(() => settle(key));
      state.set(key, { running });
      return running;
    }
    current.next ??= current.running.then(
      () => run(key),
      () => run(key),
    );
    return current.next;
  };
}

async function syncDirOnce(dir: string): Promise<void> {
  let fd: number | undefined;
  try {
    // O_DIRECTORY: anything else in its place (a FIFO would block the open) is not synced.
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    await fsyncFd(fd);
  } catch {
    // EISDIR/EINVAL/EPERM on some platforms and network filesystems.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Whether this process can write in `dir` (made when missing; with `parents: false`, only when the
 * folder above it exists): writes and removes a file there. The error code (EACCES, EROFS, ENOSPC,
 * ENOENT…) when it cannot, else undefined.
 */
export async function writeProbe(
  dir: string,
  { parents = true }: { parents?: boolean } = {},
): Promise<string | undefined> {
  const probe = path.join(dir, `.write-probe-${process.pid}-${randomHex(4)}`);
  try {
    if (parents) await mkdir(dir, { recursive: true });
    else
      await mkdir(dir).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EEXIST') throw err;
      });
    await writeFile(probe, '');
    await rm(probe, { force: true });
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
  }
}
