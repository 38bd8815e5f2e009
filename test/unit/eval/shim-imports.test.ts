// The frozen-cluster shim is copied (compiled) into a folder mounted into agent containers, so it
// may import only node builtins and modules inside the two folders that are copied.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/runs.js';

const COPIED = ['src/kubectl', 'src/eval/shim'];
/** Files copied one by one from other folders. */
const COPIED_FILES = ['src/kubectl/policy/classify.ts'];

describe('shim code', () => {
  it('imports nothing outside the folders install-shim copies', async () => {
    const outside: string[] = [];
    const files = [
      ...(
        await Promise.all(
          COPIED.map(async (dir) =>
            (await readdir(path.join(REPO_ROOT, dir)))
              .filter((f) => f.endsWith('.ts'))
              .map((f) => ({ dir, file: f })),
          ),
        )
      ).flat(),
      ...COPIED_FILES.map((f) => ({ dir: path.dirname(f), file: path.basename(f) })),
    ];
    for (const { dir, file } of files) {
      {
        const text = await readFile(path.join(REPO_ROOT, dir, file), 'utf8');
        for (const [, spec] of text.matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)) {
          if (spec === undefined || spec.startsWith('node:')) continue;
          const target = path.relative(REPO_ROOT, path.resolve(REPO_ROOT, dir, spec));
          const copied =
            COPIED.some((c) => target.startsWith(`${c}/`) && !target.slice(c.length + 1).includes('/')) ||
            COPIED_FILES.includes(target.replace(/\.js$/, '.ts'));
          if (!spec.startsWith('.') || !copied) outside.push(`${dir}/${file} → ${spec}`);
        }
      }
    }
    expect(outside).toEqual([]);
  });
});
