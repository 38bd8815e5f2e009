import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';

/** sha256 over every entry (folders too) under `dir`: relative path, mode, mtime and bytes. Proves a tree was not touched. */
export async function treeHash(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const walk = async (current: string): Promise<void> => {
    for (const name of (await readdir(current)).sort()) {
      const full = path.join(current, name);
      const info = await lstat(full);
      hash.update(`${path.relative(dir, full)}\0${info.mode}\0${info.mtimeMs}\0${info.size}\0`);
      if (info.isDirectory()) await walk(full);
      else if (info.isSymbolicLink()) hash.update(await readlink(full));
      else hash.update(await readFile(full));
    }
  };
  await walk(dir);
  return hash.digest('hex');
}
