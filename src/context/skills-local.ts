import { createHash } from 'node:crypto';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

// A local skills source (skills.sources[].path) has no commit: its files stand for one.

/** Short hash of a local folder's file listing, sizes and mtimes: changes when a file changes. */
export async function localTreeCommit(dir: string, maxFiles = 20_000): Promise<string> {
  const hash = createHash('sha256');
  let files = 0;
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(path.join(dir, rel), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name === '.git' || files >= maxFiles) continue;
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) {
        await walk(child);
        continue;
      }
      files += 1;
      const info = await lstat(path.join(dir, child)).catch(() => undefined);
      hash.update(`${child}\0${info?.size ?? -1}\0${info?.mtimeMs ?? -1}\n`);
    }
  };
  await walk('');
  return `local:${hash.digest('hex').slice(0, 12)}`;
}
