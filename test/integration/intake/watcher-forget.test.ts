import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { watchIncidents, type IncidentWatcher } from '../../../src/intake/watcher.js';
import { tempRoot } from '../../support/incidents.js';

// The intake watcher on a real root (chokidar, inotify): a finished incident's folder can be forgotten
// (its watch released, so a long-running daemon does not hold one per incident ever seen) and watched
// again when its incident.json changes.

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
});
