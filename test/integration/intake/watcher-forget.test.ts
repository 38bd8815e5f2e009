import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { watchIncidents, type IncidentWatcher } from '../../../src/intake/watcher.js';
import { tempRoot } from '../../support/incidents.js';

// The intake watcher on a real root (fs.watch, inotify): new folders and incident.json writes are
// reported with their cause; a finished incident's folder can be forgotten (not reported, its watch
// released, so a long-running daemon does not hold one per incident ever seen) and watched again.

let watcher: IncidentWatcher | undefined;
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await watcher?.close();
  await cleanup?.();
  watcher = cleanup = undefined;
});

/** A root holding `folders` (each with an incident.json), watched; what it reports, by folder name. */
async function watchedRoot(prefix: string, folders: string[]) {
  const t = await tempRoot(prefix);
  cleanup = t.cleanup;
  for (const name of folders) await drop(t.root, name);
  const seen: string[] = [];
  const w = watchIncidents({
    root: t.root,
    onFolder: (dir) => seen.push(path.basename(dir)),
    onError: () => undefined,
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

  it("releases a forgotten folder's watch at once, keeps reporting the others, and watches it again", async () => {
    const names = ['a', 'b', 'c'];
    const { root, w, seen, dir } = await watchedRoot('triage-watch-release-', names);
    expect(names.every((n) => w.watching(dir(n)))).toBe(true);
    w.forget(dir('a'));
    expect(w.watching(dir('a'))).toBe(false);
    expect(w.watching(dir('b')) && w.watching(dir('c'))).toBe(true);
    await writeFile(path.join(dir('a'), 'incident.json'), '{"changed": 1}');
    await writeFile(path.join(dir('b'), 'incident.json'), '{"changed": 1}');
    await drop(root, 'd');
    await vi.waitFor(() => expect(seen).toEqual(expect.arrayContaining(['b', 'd'])), { timeout: 10_000 });
    expect(w.watching(dir('d'))).toBe(true);
    expect(seen).not.toContain('a');
    w.watchAgain(dir('a'));
    expect(w.watching(dir('a'))).toBe(true);
    await writeFile(path.join(dir('a'), 'incident.json'), '{"changed": 2}');
    await vi.waitFor(() => expect(seen).toContain('a'), { timeout: 10_000 });
  });

  it('reports a folder renamed into the root whole (its incident.json inside) once, as an added file; an empty new folder as a new folder', async () => {
    const t = await tempRoot('triage-watch-rename-');
    cleanup = t.cleanup;
    const seen: string[] = [];
    watcher = watchIncidents({
      root: t.root,
      onFolder: (dir, cause) => seen.push(`${path.basename(dir)}:${cause}`),
      onError: () => undefined,
    });
    await watcher.ready;
    await mkdir(path.join(t.root, '.tmp-inc'));
    await writeFile(path.join(t.root, '.tmp-inc', 'incident.json'), '{}');
    await rename(path.join(t.root, '.tmp-inc'), path.join(t.root, 'inc'));
    await vi.waitFor(() => expect(seen).toEqual(['inc:add']), { timeout: 10_000 });
    await writeFile(path.join(t.root, 'inc', 'incident.json'), '{"changed": 1}');
    await vi.waitFor(() => expect(seen).toContain('inc:change'), { timeout: 10_000 });
    // Nothing else in the folder is reported, and the dot folder was never a workspace.
    await writeFile(path.join(t.root, 'inc', 'notes.txt'), 'x');
    await mkdir(path.join(t.root, 'later'));
    await vi.waitFor(() => expect(seen).toContain('later:addDir'), { timeout: 10_000 });
    await writeFile(path.join(t.root, 'later', 'incident.json'), '{}');
    await vi.waitFor(() => expect(seen).toContain('later:add'), { timeout: 10_000 });
    // (A write may be seen as more than one change: its truncation and its data.)
    expect(new Set(seen.filter((e) => e.startsWith('inc:')))).toEqual(new Set(['inc:add', 'inc:change']));
    expect(seen.some((e) => e.startsWith('.tmp'))).toBe(false);
  });

  it('watches a folder removed and made again under the same name (a new folder, not the old watch)', async () => {
    const { root, w, seen, dir } = await watchedRoot('triage-watch-again-', ['a']);
    await rm(dir('a'), { recursive: true });
    await vi.waitFor(() => expect(w.watching(dir('a'))).toBe(false), { timeout: 10_000 });
    await drop(root, 'a');
    await vi.waitFor(() => expect(seen).toContain('a'), { timeout: 10_000 });
    seen.length = 0;
    await writeFile(path.join(dir('a'), 'incident.json'), '{"changed": 1}');
    await vi.waitFor(() => expect(seen).toContain('a'), { timeout: 10_000 });
  });

  it('says when the root itself is removed, and stops watching', async () => {
    const t = await tempRoot('triage-watch-root-gone-');
    cleanup = t.cleanup;
    const root = path.join(t.root, 'incidents');
    await mkdir(root);
    await drop(root, 'a');
    let gone = 0;
    const w = watchIncidents({
      root,
      onFolder: () => undefined,
      onError: () => undefined,
      onRootGone: () => gone++,
    });
    watcher = w;
    await w.ready;
    await rm(root, { recursive: true });
    await vi.waitFor(() => expect(gone).toBe(1), { timeout: 10_000 });
    expect(w.watching(path.join(root, 'a'))).toBe(false);
  });
});
