import { constants } from 'node:fs';
import { lstat, open, readdir, realpath, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { UnsafePathError, assertNoSymlinkBelow } from '../util/safe-path.js';

// What an engine that cannot mount the daemon's folders (an agent pod) is sent of one of its mounts: the
// folder's (or file's) entries, listed and read never through a link. A source inside the workspace
// (the workspace, the run folder, output/) must have no link on its way from the workspace down, as
// for every write there; a daemon folder elsewhere (the skills cache, the personas, a kubeconfig in a
// mounted Secret, whose files are links by design) is taken at its real path, then never left. A link
// below a source is not followed: it is listed apart, and the agent does not get it.

export interface TreeEntry {
  /** Relative to the source ('' for a file source itself). */
  rel: string;
  kind: 'dir' | 'file';
  /** Where to read it. */
  path: string;
  size: number;
  executable: boolean;
}

export interface TreeListing {
  kind: 'dir' | 'file' | 'missing';
  entries: TreeEntry[];
  /** Links found below the source and left out (relative paths). */
  links: string[];
}

const inside = (base: string, p: string): boolean => {
  const rel = path.relative(base, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

/** The source as it is read: inside the workspace, itself with no link on the way; else its real path. */
async function rootOf(source: string, workspaceDir: string): Promise<string | undefined> {
  const resolved = path.resolve(source);
  if (inside(workspaceDir, resolved)) {
    // The workspace itself is where the checks start; below it, every folder on the way is checked.
    if (resolved !== workspaceDir) await assertNoSymlinkBelow(workspaceDir, path.dirname(resolved));
    const info = await lstat(resolved).catch(() => undefined);
    if (info?.isSymbolicLink())
      throw new UnsafePathError(resolved, `${resolved} is a symbolic link; it is never followed`);
    return info ? resolved : undefined;
  }
  return realpath(resolved).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
}

/**
 * The entries of `source` an agent is sent, folders before what is in them, in name order; `skip(rel)`
 * leaves an entry (and what is below it) out. At most `maxEntries`: more throws.
 */
export async function listAgentTree(
  source: string,
  options: { workspaceDir: string; skip?: (rel: string) => boolean; maxEntries: number },
): Promise<TreeListing> {
  const root = await rootOf(source, path.resolve(options.workspaceDir));
  if (root === undefined) return { kind: 'missing', entries: [], links: [] };
  const top = await lstat(root);
  const entry = (rel: string, p: string, info: { size: number; mode: number }, kind: 'dir' | 'file') => ({
    rel,
    kind,
    path: p,
    size: kind === 'file' ? info.size : 0,
    executable: (info.mode & 0o100) !== 0,
  });
  if (top.isFile()) return { kind: 'file', entries: [entry('', root, top, 'file')], links: [] };
  if (!top.isDirectory()) return { kind: 'missing', entries: [], links: [] };
  const entries: TreeEntry[] = [];
  const links: string[] = [];
  const walk = async (dir: string, relDir: string): Promise<void> => {
    const names = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const d of names) {
      const rel = relDir ? `${relDir}/${d.name}` : d.name;
      if (options.skip?.(rel)) continue;
      const p = path.join(dir, d.name);
      if (d.isSymbolicLink()) links.push(rel);
      if (!d.isDirectory() && !d.isFile()) continue;
      if (entries.length >= options.maxEntries)
        throw new Error(`${source} holds more than ${options.maxEntries} files and folders`);
      const info = await lstat(p);
      entries.push(entry(rel, p, info, d.isDirectory() ? 'dir' : 'file'));
      if (d.isDirectory()) await walk(p, rel);
    }
  };
  await walk(root, '');
  return { kind: 'dir', entries, links };
}

/**
 * Opens a listed file for reading, never through a link; throws when it is no longer the regular file
 * of `size` bytes that was listed (changed meanwhile: what would be sent is not what was counted).
 */
export async function openListedFile(entry: TreeEntry): Promise<FileHandle> {
  const handle = await open(entry.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  const info = await handle.stat();
  if (!info.isFile() || info.size !== entry.size) {
    await handle.close();
    throw new Error(
      `${entry.path} changed while it was being sent (${entry.size} bytes listed, ${info.size} now)`,
    );
  }
  return handle;
}
