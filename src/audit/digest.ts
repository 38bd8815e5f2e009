import { createHash } from 'node:crypto';
import { closeSync, constants, createReadStream, fstatSync, lstatSync, openSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { Limiter } from '../util/limiter.js';
import { readUpTo } from '../util/safe-path.js';
import { stableStringify } from './log.js';

// Digests of what a run wrote, recorded in the hash chain (the `finished` event) so that `audit verify`
// notices a file edited afterwards, and a digest of each state record (on the last audit event of each
// transition) for state.json.

/** Files a run leaves only while it is in flight (the engine's pid and exit files, raw output). */
const TRANSIENT = /^(agent\.pid|agent\.exit|\..*\.raw|\..*\.tmp)$/;
/** Files up to this size are read in one call; larger ones (agent logs) are streamed. */
const WHOLE_READ_BYTES = 1024 * 1024;
/** Files of one bundle digested at once. */
const DIGESTS_AT_ONCE = 8;

/** sha256 of a file read without following a symlink at its place ('symlink' for a link, never followed). */
export async function fileDigest(file: string): Promise<string> {
  const info = lstatSync(file);
  if (info.isSymbolicLink()) return 'symlink';
  if (!info.isFile()) return 'not-a-file';
  // Opened, checked and (when small) read with synchronous calls: see util/fs.ts.
  // O_NONBLOCK: a FIFO swapped in since the lstat neither blocks the open nor is read.
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  const hash = createHash('sha256');
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return 'not-a-file';
    // A bundle is mostly small files: one read each costs a fraction of a stream's machinery.
    const size = st.size;
    if (size <= WHOLE_READ_BYTES) {
      const data = readUpTo(fd, WHOLE_READ_BYTES + 1, size);
      hash.update(data);
      if (data.length > WHOLE_READ_BYTES) await streamInto(hash, fd, data.length);
    } else await streamInto(hash, fd, 0);
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

/** Hashes the rest of the file from `start` through a stream (large agent logs). */
async function streamInto(hash: ReturnType<typeof createHash>, fd: number, start: number): Promise<void> {
  for await (const chunk of createReadStream('', { fd, start, autoClose: false }))
    hash.update(chunk as Buffer);
}

/** `{relative path: sha256}` of every file under `dir` (sorted; transient engine files left out). */
export async function folderDigests(dir: string): Promise<Record<string, string>> {
  const files: string[] = [];
  const walk = async (sub: string): Promise<void> => {
    const entries = await readdir(path.join(dir, sub), { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const rel = sub ? path.posix.join(sub, entry.name) : entry.name;
      if (entry.isDirectory()) await walk(rel);
      else if (!TRANSIENT.test(entry.name)) files.push(rel);
    }
  };
  await walk('');
  const limiter = new Limiter(DIGESTS_AT_ONCE);
  const digests = await Promise.all(
    files.map((rel) => limiter.run(() => fileDigest(path.join(dir, rel)).catch(() => 'unreadable'))),
  );
  // In walk order (sorted), as before.
  return Object.fromEntries(files.map((rel, i) => [rel, digests[i] as string]));
}

/** The digest of a state record, without the fields that change with no audit event (progress, updatedAt). */
export function stateDigest(record: object): string {
  const { progress: _p, updatedAt: _u, ...rest } = record as Record<string, unknown>;
  return createHash('sha256').update(stableStringify(rest)).digest('hex');
}
