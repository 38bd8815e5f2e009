// The frozen-cluster shim is copied (compiled) into a folder mounted into agent containers, so it
// may import only node builtins and modules inside the two folders that are copied.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/runs.js';

const COPIED = ['src/kubectl', 'src/eval/shim'];

describe('shim code', () => {
  it('imports nothing outside the folders install-shim copies', async () => {
    const outside: string[] = [];
    for (const dir of COPIED) {
      for (const file of (await readdir(path.join(REPO_ROOT, dir))).filter((f) => f.endsWith('.ts'))) {
        const text = await readFile(path.join(REPO_ROOT, dir, file), 'utf8');
        for (const [, spec] of text.matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)) {
          if (spec === undefined || spec.startsWith('node:')) continue;
          const target = path.relative(REPO_ROOT, path.resolve(REPO_ROOT, dir, spec));
          if (!spec.startsWith('.') || !COPIED.some((c) => target.startsWith(`${c}/`)))
            outside.push(`${dir}/${file} → ${spec}`);
        }
      }
    }
    expect(outside).toEqual([]);
  });
});
