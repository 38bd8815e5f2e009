import { constants } from 'node:fs';
import { link, lstat, open, unlink } from 'node:fs/promises';
import path from 'node:path';
import { randomHex } from '../util/random.js';
import { fsyncDir, writeFileAtomic, writeNewFileSynced } from '../util/fs.js';
import { UnsafePathError, assertNoSymlinkBelow, ensureOwnDir, isUnsafePath } from '../util/safe-path.js';
import { WORKSPACE_OWN_PATHS } from './layout.js';

// File access under a workspace that never follows a symbolic link: the agent writes output/ and could
// plant a link to a host file there, and a hostile workspace could make .triage/outbox point elsewhere.

/**
 * Why a workspace cannot be written into safely (a daemon-owned path is a symlink or not a folder), or
 * undefined. Checked when an incident is taken in, and again before each write.
 */
export async function unsafeWorkspace(dir: string): Promise<string | undefined> {
  for (const rel of WORKSPACE_OWN_PATHS) {
    try {
      await assertNoSymlinkBelow(dir, path.join(dir, rel));
    } catch (err) {
      if (isUnsafePath(err)) return err.message;
      throw err;
    }
  }
  return undefined;
}

const refused = (file: string, problem: string) =>
  new UnsafePathError(
    file,
    `${file} ${problem}; refusing to follow it (remove it, the daemon recreates what it owns)`,
  );

/** Each folder from `base` down to `dir` exists as a real folder (created when `create`); false when one is missing. */
export async function realDirs(base: string, dir: string, create: boolean): Promise<boolean> {
  if (create) {
    await ensureOwnDir(dir, base);
    return true;
  }
  await assertNoSymlinkBelow(base, dir);
  return lstat(dir).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    },
  );
}

export interface ReadResult {
  text: string;
  /** Size of the file on disk. */
  bytes: number;
  /** The file was longer than the limit: `text` holds its first bytes (whole characters). */
  truncated: boolean;
}

/**
 * Reads `base/rel` without following a link anywhere below `base`, up to `maxBytes`; undefined when the
 * file (or a folder on the way) does not exist.
 */
export async function readNoFollow(
  base: string,
  rel: string,
  maxBytes: number,
): Promise<ReadResult | undefined> {
  const file = path.join(base, rel);
  if (!(await realDirs(base, path.dirname(file), false))) return undefined;
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw refused(file, 'is a symbolic link');
    throw err;
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) throw refused(file, 'is not a regular file');
    const length = Math.min(st.size, maxBytes);
    const buffer = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const { bytesRead } = await handle.read(buffer, done, length - done, done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    const truncated = st.size > maxBytes;
    return { text: wholeChars(buffer.subarray(0, done), truncated), bytes: st.size, truncated };
  } finally {
    await handle.close();
  }
}

/** Decodes UTF-8, dropping a character cut in half at the end of a truncated read. */
function wholeChars(bytes: Buffer, truncated: boolean): string {
  const text = bytes.toString('utf8');
  return truncated && text.endsWith('\uFFFD') ? text.slice(0, -1) : text;
}

/** Writes `dir/name` only if it does not exist yet (temp file, fsync, hard link); false when it exists. */
export async function createExclusive(dir: string, name: string, data: string): Promise<boolean> {
  const file = path.join(dir, name);
  const tmp = path.join(dir, `.${name}.${process.pid}.${randomHex(4)}.new`);
  await writeFileAtomic(tmp, data);
  try {
    await link(tmp, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    // Filesystems without hard links: an exclusive create, written in place.
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
    return writeInPlaceExclusive(dir, file, data);
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  await fsyncDir(dir);
  return true;
}

async function writeInPlaceExclusive(dir: string, file: string, data: string): Promise<boolean> {
  try {
    await writeNewFileSynced(file, data);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  await fsyncDir(dir);
  return true;
}
