// One interleaving of concurrent claims on an expired dedup entry, forced through the file reads: a
// claimer that created its successor only after another claimer had already replaced the expired
// content is not the winner, and a third claimer that reads that stale successor must not say so.
import { createHash } from 'node:crypto';
import type * as FsPromises from 'node:fs/promises';
import { readdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DedupStore, dedupKey } from '../../../src/intake/dedup.js';
import { tempRoot } from '../../support/incidents.js';

const reads = vi.hoisted(() => ({ after: undefined as undefined | ((file: string) => Promise<void>) }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof FsPromises>();
  const readFile = (async (file: Parameters<typeof actual.readFile>[0], options?: unknown) => {
    const text = await actual.readFile(file, options as BufferEncoding);
    const hook = reads.after;
    if (hook && typeof file === 'string') await hook(file);
    return text;
  }) as typeof actual.readFile;
  return { ...actual, readFile };
});

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ root, cleanup } = await tempRoot()));
afterEach(async () => {
  reads.after = undefined;
  await cleanup();
});

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('DedupStore under an interleaving of concurrent claims', () => {
  it('does not take a successor created after its content was replaced for the winner', async () => {
    let now = 0;
    const store = new DedupStore(root, 600_000, () => now);
    const key = dedupKey({
      cluster: 'c1',
      namespace: 'ns',
      faultType: 'CrashLoop',
      resource: { kind: 'Pod', name: 'db' },
    });
    expect(await store.claim(key, 'old')).toBeUndefined();
    const [name = ''] = (await readdir(store.dir)).filter((n) => n.endsWith('.json'));
    const file = path.join(store.dir, name);
    now = 700_000;

    // Right after this claimer first reads the expired entry, two others act: the winner puts its
    // successor in place, and a late one creates a successor for the same (now replaced) content.
    let acted = false;
    reads.after = async (read) => {
      if (acted || read !== file) return;
      acted = true;
      const { readFile } = await vi.importActual<typeof FsPromises>('node:fs/promises');
      const seen = await readFile(file, 'utf8');
      const next = `${file}.${sha(seen).slice(0, 16)}.next`;
      await writeFile(`${file}.winner`, JSON.stringify({ incidentId: 'winner', at: now, key }));
      await rename(`${file}.winner`, file);
      await writeFile(next, JSON.stringify({ incidentId: 'late', at: now, key }));
    };

    expect(await store.claim(key, 'third')).toEqual({ incidentId: 'winner', ageMs: 0 });
    expect(acted).toBe(true);
  });
});
