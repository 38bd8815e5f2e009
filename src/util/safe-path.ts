import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  type Stats,
} from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { dirModeFor } from './fs.js';

// Writes under a workspace never go through a symbolic link: a link planted by a producer (or an
// agent) in place of `.triage`, `runs/` or `output/` would otherwise redirect the daemon's writes, or
// its chown, anywhere on the host. Every folder below the workspace is checked component by component
// before it is written into, and folders whose permissions change are changed through a handle opened
// with O_NOFOLLOW. The checks are synchronous calls (microseconds on a local disk, where the same
// call through `fs/promises` costs tens of microseconds of CPU; see util/fs.ts).

export class UnsafePathError extends Error {
  readonly code = 'EUNSAFEPATH';
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = 'UnsafePathError';
  }
}

export const isUnsafePath = (err: unknown): err is UnsafePathError =>
  err instanceof Error && (err as { code?: string }).code === 'EUNSAFEPATH';

/** `base` and `target` as the components from base (exclusive) to target (inclusive); throws when target escapes. */
function componentsBelow(base: string, target: string): string[] {
  const rel = path.relative(base, target);
  if (rel === '') return [];
  if (rel.startsWith('..') || path.isAbsolute(rel))
    throw new UnsafePathError(
      target,
      `${target} is not inside ${base}; the daemon writes only inside the workspace`,
    );
  const parts = rel.split(path.sep);
  return parts.map((_, i) => path.join(base, ...parts.slice(0, i + 1)));
}

const linkMessage = (p: string) =>
  `${p} is a symbolic link; the daemon never writes through links in a workspace: replace it with a real folder (or remove it) and save incident.json again`;

/** lstat of `p`; undefined when it does not exist. */
const lstatOrAbsent = (p: string): Stats | undefined => lstatSync(p, { throwIfNoEntry: false });

/**
 * Throws UnsafePathError when any existing component of `target` below `base` is a symlink or not a
 * folder (missing components are fine: they will be created as folders).
 */
export async function assertNoSymlinkBelow(base: string, target: string): Promise<void> {
  for (const p of componentsBelow(base, target)) {
    const info = lstatOrAbsent(p);
    if (!info) return;
    if (info.isSymbolicLink()) throw new UnsafePathError(p, linkMessage(p));
    if (!info.isDirectory())
      throw new UnsafePathError(p, `${p} is not a folder; remove it and save incident.json again`);
  }
}

/**
 * Creates `dir` (and missing folders between `base` and it) without following a symlink at any step;
 * an existing symlink or non-folder on the way throws UnsafePathError. `base` must exist.
 */
export async function ensureOwnDir(dir: string, base: string = path.dirname(dir)): Promise<void> {
  for (const p of componentsBelow(base, dir)) {
    for (let attempt = 0; ; attempt++) {
      const info = lstatOrAbsent(p);
      if (info?.isSymbolicLink()) throw new UnsafePathError(p, linkMessage(p));
      if (info?.isDirectory()) break;
      if (info) throw new UnsafePathError(p, `${p} is not a folder; remove it and save incident.json again`);
      try {
        mkdirSync(p, dirModeFor(p));
        break;
      } catch (err) {
        // Created meanwhile (by us or another process): look again, once.
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      }
    }
  }
}

/** Opens a folder for fchown/fchmod; a symlink in its place fails (ELOOP) instead of being followed. */
export async function openDirNoFollow(dir: string): Promise<FileHandle> {
  try {
    return await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new UnsafePathError(dir, linkMessage(dir));
    throw err;
  }
}

export type BoundedRead =
  { kind: 'ok'; text: string; bytes: number } | { kind: 'missing' } | { kind: 'refused'; reason: string };

/**
 * Reads a file someone else wrote (the agent's report) without following a symlink at its place, only
 * when it is a regular file of at most `maxBytes`: a link to a host file, a FIFO or a huge file is
 * refused with the reason.
 */
export async function readOwnFile(file: string, maxBytes: number): Promise<BoundedRead> {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
    if (code === 'ELOOP')
      return { kind: 'refused', reason: `${file} is a symbolic link, which is never followed` };
    throw err;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return { kind: 'refused', reason: `${file} is not a regular file` };
    if (info.size > maxBytes)
      return { kind: 'refused', reason: `${file} is ${info.size} bytes, over the ${maxBytes}-byte limit` };
    const data = readUpTo(fd, maxBytes + 1, info.size);
    if (data.length > maxBytes)
      return { kind: 'refused', reason: `${file} grew over the ${maxBytes}-byte limit while being read` };
    return { kind: 'ok', text: data.toString('utf8'), bytes: data.length };
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads a regular file's `fd` until end of file or `limit` bytes, whichever comes first. `sizeHint` is
 * the size fstat gave: the first read asks for one byte more, and a read that comes back short is the
 * end of the file (a regular file's reads are short only there), so a file that did not grow is read
 * in one call, with no second buffer and read to find the end.
 */
export function readUpTo(fd: number, limit: number, sizeHint?: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  while (total < limit) {
    // The expected size (plus one byte, to see the end) first; 64 KiB at a time past it.
    const want = total === 0 && sizeHint !== undefined ? sizeHint + 1 : 64 * 1024;
    const chunk = Buffer.allocUnsafe(Math.min(limit - total, want));
    const n = readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) break;
    chunks.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    total += n;
    if (n < chunk.length) break;
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
}

/**
 * readOwnFile, after checking that no folder between `base` and the file is a symbolic link: a file of
 * a workspace is read only through real folders (a link there is refused with the reason).
 */
export async function readOwnFileBelow(base: string, file: string, maxBytes: number): Promise<BoundedRead> {
  try {
    await assertNoSymlinkBelow(base, path.dirname(file));
  } catch (err) {
    if (isUnsafePath(err)) return { kind: 'refused', reason: err.message };
    throw err;
  }
  return readOwnFile(file, maxBytes);
}
