import { listAgentTree, openListedFile, type TreeEntry } from '../../../workspace/agent-tree.js';
import { STDIN_PATH, headerOf, isWithin, pathProblem, type DirRecord, type FileRecord } from './protocol.js';
import type { FilesMount } from './types.js';

// What an agent pod is sent: each of its mounts' files at the agent path the Job mounts them on (a
// folder's entries below its target), what lies below another mount's target left to that mount, and
// its stdin as a file. Listed first, so that the whole is counted against the bound before a byte goes
// out; then streamed file by file.

export interface InputItem {
  record: DirRecord | FileRecord;
  /** Where the file's bytes come from: a listed file, or data (stdin). */
  from?: TreeEntry | Buffer;
}

export interface InputListing {
  items: InputItem[];
  files: number;
  bytes: number;
  /** Links left out, and paths no record may name, by agent path. */
  left: string[];
}

/** Over kubernetes.run_files.max_input_bytes: the daemon's answer says so. */
export class InputsTooLarge extends Error {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(
      `the run's files come to ${bytes} bytes, over kubernetes.run_files.max_input_bytes (${limit}): raise it, or keep large files out of the workspace and the skills`,
    );
    this.name = 'InputsTooLarge';
  }
}

/** Whether `rel` of the mount is left out: by its filters, or because another mount covers it. */
function skipperOf(mount: FilesMount, mounts: readonly FilesMount[]): (rel: string) => boolean {
  const nested = mounts
    .filter((o) => o !== mount && o.target !== mount.target && isWithin(o.target, mount.target))
    .map((o) => o.target);
  return (rel) => {
    const top = rel.split('/')[0] ?? rel;
    if (mount.only && !mount.only.includes(top)) return true;
    if (mount.except?.includes(top)) return true;
    const at = `${mount.target}/${rel}`;
    return nested.some((t) => isWithin(at, t));
  };
}

async function mountItems(
  mount: FilesMount,
  mounts: readonly FilesMount[],
  workspaceDir: string,
  maxEntries: number,
): Promise<{ items: InputItem[]; left: string[] }> {
  const listing = await listAgentTree(mount.source, {
    workspaceDir,
    skip: skipperOf(mount, mounts),
    maxEntries,
  });
  const left = listing.links.map((rel) => `${mount.target}/${rel}`);
  if (listing.kind === 'file') {
    const entry = listing.entries[0] as TreeEntry;
    const record: FileRecord = {
      k: 'f',
      p: mount.target,
      n: entry.size,
      ...(entry.executable ? { x: true } : {}),
    };
    return { items: [{ record, from: entry }], left };
  }
  // A folder, or a source that is not there: the mount's folder exists in the pod either way.
  const items: InputItem[] = [{ record: { k: 'd', p: mount.target } }];
  for (const entry of listing.entries) {
    const p = `${mount.target}/${entry.rel}`;
    if (pathProblem(p)) {
      left.push(p);
      continue;
    }
    items.push(
      entry.kind === 'dir'
        ? { record: { k: 'd', p } }
        : { record: { k: 'f', p, n: entry.size, ...(entry.executable ? { x: true } : {}) }, from: entry },
    );
  }
  return { items, left };
}

/** Everything the pod is sent, counted; throws InputsTooLarge over `maxBytes`. */
export async function listInputs(
  grant: { mounts: readonly FilesMount[]; stdin?: string; workspaceDir: string },
  limits: { maxBytes: number; maxEntries: number },
): Promise<InputListing> {
  const items: InputItem[] = [];
  const left: string[] = [];
  for (const mount of grant.mounts) {
    const found = await mountItems(mount, grant.mounts, grant.workspaceDir, limits.maxEntries);
    items.push(...found.items);
    left.push(...found.left);
  }
  if (grant.stdin) {
    const data = Buffer.from(grant.stdin, 'utf8');
    items.push({ record: { k: 'f', p: STDIN_PATH, n: data.length }, from: data });
  }
  let files = 0;
  let bytes = 0;
  for (const item of items)
    if (item.record.k === 'f') {
      files += 1;
      bytes += item.record.n;
    }
  if (bytes > limits.maxBytes) throw new InputsTooLarge(bytes, limits.maxBytes);
  return { items, files, bytes, left };
}

const CHUNK_BYTES = 256 * 1024;

/** The listing as the record stream (before gzip): each header, each file's bytes, the end record. */
export async function* inputStream(listing: InputListing): AsyncGenerator<Buffer> {
  for (const { record, from } of listing.items) {
    yield headerOf(record);
    if (record.k !== 'f' || from === undefined) continue;
    if (Buffer.isBuffer(from)) {
      yield from;
      continue;
    }
    const handle = await openListedFile(from);
    try {
      let left = record.n;
      while (left > 0) {
        const { bytesRead, buffer } = await handle.read(Buffer.alloc(Math.min(CHUNK_BYTES, left)), 0);
        if (bytesRead === 0) throw new Error(`${from.path} got shorter while it was being sent`);
        left -= bytesRead;
        yield buffer.subarray(0, bytesRead);
      }
    } finally {
      await handle.close();
    }
  }
  yield headerOf({ k: 'end', files: listing.files, bytes: listing.bytes });
}
