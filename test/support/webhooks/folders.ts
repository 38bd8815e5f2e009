import { readdir } from 'node:fs/promises';

/** Workspace folders under a root (what the daemon would look at), sorted. */
export async function readIncidentFolders(root: string): Promise<string[]> {
  return (await readdir(root, { withFileTypes: true }))
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
}
