// The dedup window on disk: it holds across restarts and between replicas sharing the root.
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DedupStore, dedupKey } from '../../../src/intake/dedup.js';
import { tempRoot } from '../../support/incidents.js';

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ root, cleanup } = await tempRoot()));
afterEach(async () => cleanup());

const incident = (name: string, faultType = 'CrashLoop') => ({
  cluster: 'c1',
  namespace: 'ns',
  faultType,
  resource: { kind: 'Pod', name },
});

describe('DedupStore', () => {
  it('names the first incident for the same cluster + resource + faultType inside the window', async () => {
    let now = 0;
    const d = new DedupStore(root, 600_000, () => now);
    const key = dedupKey(incident('web'));
    expect(await d.claim(key, 'first')).toBeUndefined();
    now = 60_000;
    expect(await d.claim(key, 'second')).toEqual({ incidentId: 'first', ageMs: 60_000 });
    expect(await d.claim(key, 'first')).toBeUndefined();
    expect(await d.claim(dedupKey(incident('web', 'OOMKilled')), 'third')).toBeUndefined();
    now = 700_000;
    expect(await d.claim(key, 'fourth')).toBeUndefined();
    now = 710_000;
    expect(await d.claim(key, 'fifth')).toEqual({ incidentId: 'fourth', ageMs: 10_000 });
  });

  it('holds across a restart and between two replicas on one root (a fresh store sees the key)', async () => {
    let now = 1_000_000;
    const before = new DedupStore(root, 600_000, () => now);
    expect(await before.claim(dedupKey(incident('api')), 'a')).toBeUndefined();
    now += 8 * 60_000;
    const after = new DedupStore(root, 600_000, () => now);
    expect(await after.claim(dedupKey(incident('api')), 'b')).toEqual({ incidentId: 'a', ageMs: 480_000 });
  });

  it('lets exactly one of many concurrent claims be first', async () => {
    const stores = Array.from({ length: 8 }, () => new DedupStore(root, 600_000));
    const results = await Promise.all(stores.map((s, i) => s.claim(dedupKey(incident('db')), `inc-${i}`)));
    expect(results.filter((r) => r === undefined)).toHaveLength(1);
  });

  it('lets exactly one of many concurrent claims replace an expired entry (the others are its duplicates)', async () => {
    let now = 0;
    const seed = new DedupStore(root, 600_000, () => now);
    for (let round = 0; round < 10; round++) {
      const key = dedupKey(incident(`expired-${round}`));
      now = round * 10_000_000;
      expect(await seed.claim(key, `old-${round}`)).toBeUndefined();
      now += 700_000;
      const stores = Array.from({ length: 6 }, () => new DedupStore(root, 600_000, () => now));
      const results = await Promise.all(stores.map((s, i) => s.claim(key, `new-${round}-${i}`)));
      const first = results.findIndex((r) => r === undefined);
      expect(results.filter((r) => r === undefined)).toHaveLength(1);
      for (const r of results) if (r) expect(r.incidentId).toBe(`new-${round}-${first}`);
    }
    expect((await readdir(seed.dir)).filter((n) => !n.endsWith('.json'))).toEqual([]);
  });

  it('a successor left by a claimer that crashed before putting it in place holds the key, and its own claim finishes it', async () => {
    let now = 0;
    const d = new DedupStore(root, 600_000, () => now);
    const key = dedupKey(incident('crashed'));
    expect(await d.claim(key, 'old')).toBeUndefined();
    const [name = ''] = (await readdir(d.dir)).filter((n) => n.endsWith('.json'));
    const seen = await readFile(path.join(d.dir, name), 'utf8');
    now = 700_000;
    const next = `${name}.${createHash('sha256').update(seen).digest('hex').slice(0, 16)}.next`;
    await writeFile(path.join(d.dir, next), JSON.stringify({ incidentId: 'crashed', at: now, key }));
    expect(await d.claim(key, 'other')).toEqual({ incidentId: 'crashed', ageMs: 0 });
    expect(await d.claim(key, 'crashed')).toBeUndefined();
    expect(await readdir(d.dir)).toEqual([name]);
    expect(await d.claim(key, 'later')).toEqual({ incidentId: 'crashed', ageMs: 0 });
  });

  it('takes over a damaged (empty) key file and holds the key, so a later incident is still a duplicate', async () => {
    const d = new DedupStore(root, 600_000);
    const key = dedupKey(incident('cache'));
    expect(await d.claim(key, 'seed')).toBeUndefined();
    const [name] = (await readdir(d.dir)).filter((n) => n.endsWith('.json'));
    await writeFile(path.join(d.dir, name ?? ''), '');
    expect(await d.claim(key, 'first')).toBeUndefined();
    expect(await d.claim(key, 'second')).toMatchObject({ incidentId: 'first' });
    expect((await readdir(d.dir)).filter((n) => !n.endsWith('.json'))).toEqual([]);
  });

  it('an entry dated more than a window ahead is damaged, not held for ever; a replica a little ahead still holds', async () => {
    const now = 5_000_000;
    const d = new DedupStore(root, 600_000, () => now);
    const key = dedupKey(incident('future'));
    expect(await d.claim(key, 'first')).toBeUndefined();
    const [file] = (await readdir(d.dir)).filter((f) => f.endsWith('.json'));
    const entryFile = path.join(d.dir, file!);
    const entry = JSON.parse(await readFile(entryFile, 'utf8')) as Record<string, unknown>;
    await writeFile(entryFile, JSON.stringify({ ...entry, at: now + 1_000 }));
    expect(await d.claim(key, 'second')).toEqual({ incidentId: 'first', ageMs: -1_000 });
    for (const at of [1e300, now + 600_001, 'soon']) {
      await writeFile(entryFile, JSON.stringify({ ...entry, incidentId: 'first', at }));
      expect(await d.claim(key, `after-${String(at)}`), String(at)).toBeUndefined();
      expect(await d.claim(key, 'later'), String(at)).toEqual({
        incidentId: `after-${String(at)}`,
        ageMs: 0,
      });
    }
  });

  it('prunes entries older than the window', async () => {
    let now = 0;
    const d = new DedupStore(root, 1000, () => now);
    await d.claim(dedupKey(incident('x')), 'x');
    now = Date.now() + 10_000;
    expect(await d.prune()).toBe(1);
    expect(await readdir(path.join(root, '.triage', 'dedup'))).toEqual([]);
  });

  it("holds the key up to exactly the window's end, and one ms later the next incident starts a new window", async () => {
    let now = 5_000;
    const d = new DedupStore(root, 600_000, () => now);
    const key = dedupKey(incident('edge'));
    expect(await d.claim(key, 'first')).toBeUndefined();
    now += 600_000;
    expect(await d.claim(key, 'second')).toEqual({ incidentId: 'first', ageMs: 600_000 });
    now += 1;
    expect(await d.claim(key, 'third')).toBeUndefined();
    expect(await d.claim(key, 'fourth')).toEqual({ incidentId: 'third', ageMs: 0 });
  });

  it("prune keeps an entry to its window's end by the entry's own time, and removes it after", async () => {
    // The entry's file is written at real time, which prune also checks: the clock starts there.
    let now = Date.now();
    const d = new DedupStore(root, 60_000, () => now);
    await d.claim(dedupKey(incident('kept')), 'kept');
    now += 60_000;
    expect(await d.prune()).toBe(0);
    expect(await d.claim(dedupKey(incident('kept')), 'other')).toEqual({ incidentId: 'kept', ageMs: 60_000 });
    now += 1_000;
    expect(await d.prune()).toBe(1);
    expect(await d.claim(dedupKey(incident('kept')), 'other')).toBeUndefined();
  });
});
