import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { watchIncidents, type IncidentWatcher } from '../../../src/intake/watcher.js';
import { tempRoot } from '../../support/incidents.js';

// The intake watcher on a real root (chokidar, inotify): a finished incident's folder can be forgotten
// (not reported at once; its watch released with the next batch, so a long-running daemon does not
// hold one per incident ever seen) and watched again when its incident.json changes.

let watcher: IncidentWatcher | undefined;
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await watcher?.close();
  await cleanup?.();
  watcher = cleanup = undefined;
});

describe('intake watcher', () => {
  it('reports nothing from a forgotten folder, while other folders are reported, and reports it again once watched again', async () => {
    const t = await tempRoot('triage-watch-forget-');
    cleanup = t.cleanup;
    const done = path.join(t.root, 'done');
    await mkdir(done);
    await writeFile(path.join(done, 'incident.json'), '{}');
    const seen: string[] = [];
    const w = watchIncidents({
      root: t.root,
      onFolder: (dir) => seen.push(path.basename(dir)),
      onError: () => undefined,
    });
    watcher = w;
    await w.ready;
    w.forget(done);
    await writeFile(path.join(done, 'incident.json'), '{"changed": 1}');
    // A folder dropped after the change is reported: the change before it had its chance.
    const fresh = path.join(t.root, 'fresh');
    await mkdir(fresh);
    await writeFile(path.join(fresh, 'incident.json'), '{}');
    await vi.waitFor(() => expect(seen).toContain('fresh'), { timeout: 10_000 });
    expect(seen).not.toContain('done');
    w.watchAgain(done);
    // The watch is set up asynchronously: the file is rewritten until a change is seen.
    await vi.waitFor(
      async () => {
        await writeFile(path.join(done, 'incident.json'), `{"changed": ${Date.now()}}`);
        expect(seen).toContain('done');
      },
      { timeout: 10_000, interval: 100 },
    );
  });

  it('releases forgotten folders in batches (a fresh watcher without them), keeps reporting the others, and watches a released folder again', async () => {
    const t = await tempRoot('triage-watch-release-');
    cleanup = t.cleanup;
    const names = ['a', 'b', 'c', 'd'];
    for (const n of names) {
      await mkdir(path.join(t.root, n));
      await writeFile(path.join(t.root, n, 'incident.json'), '{}');
    }
    const seen: string[] = [];
    const w = watchIncidents({
      root: t.root,
      onFolder: (dir) => seen.push(path.basename(dir)),
      onError: () => undefined,
      releaseEvery: 2,
    });
    watcher = w;
    await w.ready;
    const dir = (n: string) => path.join(t.root, n);
    expect(names.every((n) => w.watching(dir(n)))).toBe(true);
    // One forgotten folder is not reported, but still held: below the batch.
    w.forget(dir('a'));
    expect(w.watching(dir('a'))).toBe(true);
    // The second completes the batch: both are released together, the others stay watched.
    w.forget(dir('b'));
    await vi.waitFor(() => expect(w.watching(dir('a')) || w.watching(dir('b'))).toBe(false), {
      timeout: 10_000,
    });
    expect(w.watching(dir('c')) && w.watching(dir('d'))).toBe(true);
    // The fresh watcher reports changes and new folders.
    await writeFile(path.join(dir('c'), 'incident.json'), '{"changed": 1}');
    await mkdir(dir('e'));
    await writeFile(path.join(dir('e'), 'incident.json'), '{}');
    await vi.waitFor(() => expect(seen).toEqual(expect.arrayContaining(['c', 'e'])), { timeout: 10_000 });
    expect(seen).not.toContain('a');
    // A released folder watched again is reported when its incident.json changes.
    w.watchAgain(dir('a'));
    await vi.waitFor(
      async () => {
        await writeFile(path.join(dir('a'), 'incident.json'), `{"changed": ${Date.now()}}`);
        expect(seen).toContain('a');
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(w.watching(dir('a'))).toBe(true);
    expect(seen).not.toContain('b');
  });

  it('watches a folder watched again while its release is under way, once the fresh watcher takes over', async () => {
    const t = await tempRoot('triage-watch-release-again-');
    cleanup = t.cleanup;
    const a = path.join(t.root, 'a');
    await mkdir(a);
    await writeFile(path.join(a, 'incident.json'), '{}');
    const seen: string[] = [];
    const w = watchIncidents({
      root: t.root,
      onFolder: (dir) => seen.push(path.basename(dir)),
      onError: () => undefined,
      releaseEvery: 1,
    });
    watcher = w;
    await w.ready;
    // Forgetting starts a release at once (a batch of one); the folder is wanted again before it ends.
    w.forget(a);
    w.watchAgain(a);
    await vi.waitFor(
      async () => {
        await writeFile(path.join(a, 'incident.json'), `{"changed": ${Date.now()}}`);
        expect(seen).toContain('a');
        expect(w.watching(a)).toBe(true);
      },
      { timeout: 10_000, interval: 100 },
    );
  });
});
