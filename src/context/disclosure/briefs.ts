import { lstat, readdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../log/logger.js';
import { compare } from './markup.js';

/** A markdown brief under `briefs_dir`; its id is its `/`-separated path relative to that folder. */
export interface BriefFile {
  id: string;
  file: string;
}

const MAX_DEPTH = 8;

/**
 * Lists `*.md` briefs (sorted); dot folders and symlinks leaving the folder are skipped; absent folder =
 * none. Every folder whose listing it read is added to `deps` (what a cache checks).
 */
export async function listBriefs(briefsDir: string, log: Logger, deps?: string[]): Promise<BriefFile[]> {
  deps?.push(briefsDir);
  const root = await realpath(briefsDir).catch(() => undefined);
  if (!root) {
    log.debug({ briefsDir }, 'briefs folder absent: no briefs');
    return [];
  }
  const out: BriefFile[] = [];
  const walk = async (dir: string, rel: string, depth: number): Promise<void> => {
    deps?.push(dir);
    for (const name of (await readdir(dir).catch(() => [] as string[])).sort(compare)) {
      if (name.startsWith('.')) continue;
      const abs = path.join(dir, name);
      const childRel = rel ? `${rel}/${name}` : name;
      const info = await lstat(abs).catch(() => undefined);
      if (!info) continue;
      let isDir = info.isDirectory();
      let isFile = info.isFile();
      if (info.isSymbolicLink()) {
        const target = await realpath(abs).catch(() => undefined);
        const rel2 = target ? path.relative(root, target) : '..';
        if (rel2 === '..' || rel2.startsWith(`..${path.sep}`) || path.isAbsolute(rel2)) {
          log.warn(
            { briefsDir, brief: childRel, target },
            'brief symlink points outside briefs_dir; skipped',
          );
          continue;
        }
        const t = await lstat(target as string).catch(() => undefined);
        if (!t) continue; // removed while we looked
        isDir = t.isDirectory();
        isFile = t.isFile();
      }
      if (isDir && depth < MAX_DEPTH) await walk(abs, childRel, depth + 1);
      else if (isFile && name.endsWith('.md')) out.push({ id: childRel, file: abs });
    }
  };
  await walk(root, '', 0);
  return out.sort((a, b) => compare(a.id, b.id));
}
