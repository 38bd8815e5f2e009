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

/** A root holding `folders` (each with an incident.json), watched; what it reports, by folder name. */
async function watchedRoot(prefix: string, folders: string[], releaseEvery?: number) {
  const t = await tempRoot(prefix);
  cleanup = t.cleanup;
  for (const name of folders) await drop(t.root, name);
  const seen: string[] = [];
  const w = watchIncidents({
    root: t.root,
    onFolder: (dir) => seen.push(path.basename(dir)),
    onError: () => undefined,
    ...(releaseEvery !== undefined ? { releaseEvery } : {}),
  });
  watcher = w;
  await w.ready;
  return { root: t.root, w, seen, dir: (name: string) => path.join(t.root, name) };
}

async function drop(root: string, name: string): Promise<void> {
  await mkdir(path.join(root, name));
  await writeFile(path.join(root, name, 'incident.json'), '{}');
}

describe('intake watcher', () => {
  it('reports nothing from a forgotten folder, while other folders are reported, and reports it again once watched again', async () => {
    const { root, w, seen, dir } = await watchedRoot('triage-watch-forget-', ['done']);
    const done = dir('done');
    w.forget(done);
    await writeFile(path.join(done, 'incident.json'), '{"changed": 1}');
    // A folder dropped after the change is reported: the change before it had its chance.
    await drop(root, 'fresh');
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
    const names = ['a', 'b', 'c', 'd'];
    const { root, w, seen, dir } = await watchedRoot('triage-watch-release-', names, 2);
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
    await drop(root, 'e');
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
    const { w, seen, dir } = await watchedRoot('triage-watch-release-again-', ['a'], 1);
    const a = dir('a');
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
