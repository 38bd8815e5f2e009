import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IncidentIndex } from '../../../src/status/incident-index.js';
import { MAX_LIMIT } from '../../../src/status/pages.js';
import { tempRoot } from '../../support/incidents.js';
import { incidentIn } from '../../support/status-root.js';

// The index keeps its listing in order as incidents change instead of sorting the whole root again at
// the next listing: after every change, arrival and removal, its pages are what a full sort gives.

let root: string;
let cleanup: () => Promise<void>;
let index: IncidentIndex;

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-index-order-'));
  index = new IncidentIndex({ root });
});
afterEach(async () => {
  index.close();
  await cleanup();
});

const queued = (name: string) =>
  incidentIn(root, name, (sha256, incidentId) => [{ type: 'Validated', incidentId, sha256 }]);

/** Sets a folder's `updatedAt` in its state file (times may go back, and tie with others). */
async function touch(folder: string, at: number): Promise<void> {
  const file = path.join(root, folder, '.triage', 'state.json');
  const state = JSON.parse(await readFile(file, 'utf8')) as { updatedAt: string };
  state.updatedAt = new Date(at).toISOString();
  await writeFile(file, JSON.stringify(state));
}

/** The listing order a full sort of the index gives: newest first, then folder name. */
function sortedFolders(): string[] {
  return [...index.views()]
    .map((v) => ({ folder: v.folder, at: Date.parse(v.updatedAt) }))
    .sort((a, b) => b.at - a.at || (a.folder < b.folder ? -1 : a.folder > b.folder ? 1 : 0))
    .map((v) => v.folder);
}

const listed = () => index.list({ limit: MAX_LIMIT }).incidents.map((v) => v.folder);

describe('status index order', () => {
  it('keeps the listing in order as incidents change, arrive and go: every page is what a full sort gives', async () => {
    const folders = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    for (const f of folders) await queued(f);
    await index.load();
    expect(listed()).toEqual(sortedFolders());

    let seed = 7;
    const random = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n;
    const base = Date.parse('2026-11-26T10:00:00.000Z');
    let added = 0;
    for (let round = 0; round < 40; round++) {
      const live = [...index.views()].map((v) => v.folder);
      const action = random(10);
      if (action < 7 && live.length > 0) {
        // A change; five distinct times, so ties (ordered by folder) are common.
        const folder = live[random(live.length)] as string;
        await touch(folder, base + random(5) * 1000);
        await index.refresh(folder);
      } else if (action < 9) {
        const folder = `new-${added++}`;
        await queued(folder);
        await index.refresh(folder);
      } else if (live.length > 1) {
        await rm(path.join(root, live[random(live.length)] as string), { recursive: true });
        await index.sweep();
      }
      expect(listed(), `round ${round}`).toEqual(sortedFolders());
      // Pages follow the same order: two at a time through the cursor.
      const paged: string[] = [];
      let cursor: string | undefined;
      do {
        const page = index.list({ limit: 2, ...(cursor ? { cursor } : {}) });
        paged.push(...page.incidents.map((v) => v.folder));
        cursor = page.nextCursor;
      } while (cursor);
      expect(paged, `round ${round}`).toEqual(sortedFolders());
    }
    expect(index.size).toBe(sortedFolders().length);
    expect(added).toBeGreaterThan(0);
  });
});
