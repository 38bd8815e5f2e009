import { readdir, stat } from 'node:fs/promises';
import { Limiter } from '../util/limiter.js';
import { folderNameProblem, readIncidentFacts, type IncidentFacts } from './read.js';

// Reading a whole workspaces root: the status index's start, and `status` without a daemon.

/** Folders read at once: enough to keep the disk busy, few enough not to exhaust file handles. */
const READ_CONCURRENCY = 32;

/** Why `root` cannot be listed as a workspaces root (for a usage error), or undefined. */
export async function rootProblem(root: string): Promise<string | undefined> {
  const info = await stat(root).catch((err: NodeJS.ErrnoException) => err);
  if (info instanceof Error)
    return info.code === 'ENOENT'
      ? `workspaces root ${root} does not exist: give the folder the daemon watches (--root or workspaces_root)`
      : `workspaces root ${root} cannot be read (${info.code ?? info.message}): check its permissions`;
  if (!info.isDirectory())
    return `workspaces root ${root} is not a folder: give the folder the daemon watches`;
  return undefined;
}

/** The names under `root` that may be incident folders (dot-folders such as `.triage` are the daemon's). */
export async function incidentFolders(root: string): Promise<string[]> {
  const entries = await readdir(root, { withFileTypes: true });
  return entries
    .filter((e) => (e.isDirectory() || e.isSymbolicLink()) && folderNameProblem(e.name) === undefined)
    .map((e) => e.name);
}

/** Reads every incident folder under `root`; folders without an incident state are left out. */
export async function readAllFacts(root: string, folders?: readonly string[]): Promise<IncidentFacts[]> {
  const names = folders ?? (await incidentFolders(root));
  const limiter = new Limiter(READ_CONCURRENCY);
  const read = await Promise.all(names.map((name) => limiter.run(() => readIncidentFacts(root, name))));
  return read.filter((f): f is IncidentFacts => f !== undefined);
}
