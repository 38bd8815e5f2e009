import { readFile, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { IncidentStore } from '../../../src/incident/store.js';
import { silentLogger } from '../../../src/log/logger.js';
import { IncidentIndex } from '../../../src/status/incident-index.js';
import { MAX_LIMIT } from '../../../src/status/pages.js';
import type { IndexEvent } from '../../../src/status/types.js';
import { tempRoot, waitFor } from '../../support/incidents.js';
import { incidentIn, POLICY, rootWithEveryState, storeFor, writeRun } from '../../support/status-root.js';

// The status index on real workspaces: loaded once, then kept current from the store's changes and a
// sweep, without reading the disk to list, and kept in listing order as incidents change instead of
// sorted again at the next listing.

let root: string;
let cleanup: () => Promise<void>;
let index: IncidentIndex;

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-index-'));
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

describe('status index', () => {
  it('loads every incident folder under the root, with totals by state', async () => {
    await rootWithEveryState(root);
    await writeFile(path.join(root, 'no-state-yet.txt'), 'x');
    const loaded = await index.load();
    expect(loaded.count).toBe(9);
    expect(Object.values(index.totals())).toEqual(Array(9).fill(1));
  });

  it('follows the store: a run that ends shows its result (agent, answer, report) once read', async () => {
    const events: IndexEvent[] = [];
    index.subscribe((e) => void events.push(e));
    await index.load();
    const store = new IncidentStore({
      audit: new AuditLog(),
      log: silentLogger(),
      policy: POLICY,
      onChange: (change) => index.apply(change),
    });
    const dir = await incidentIn(
      root,
      'followed',
      (sha256, incidentId) => [
        { type: 'Validated', incidentId, sha256 },
        { type: 'Claimed', runId: 'r1', holder: 'test' },
      ],
      store,
    );
    await waitFor('preparing in the index', () =>
      index.get('followed')?.state === 'preparing' ? true : undefined,
    );
    await writeRun(dir, 'r1', { answer: 'it was DNS', agent: 'goose' }, '# report\n');
    await store.apply(dir, { type: 'Finished', runId: 'r1', outcome: { status: 'succeeded', exitCode: 0 } });
    const view = await waitFor('the result in the index', () => {
      const v = index.get('followed');
      return v?.state === 'succeeded' ? v : undefined;
    });
    expect(view).toMatchObject({
      agent: 'goose',
      answer: 'it was DNS',
      reportPath: path.join(dir, 'output', 'investigation.md'),
    });
    expect(index.totals()).toMatchObject({ preparing: 0, succeeded: 1 });
    expect(events.filter((e) => e.type === 'upsert').at(-1)).toMatchObject({ view: { state: 'succeeded' } });
  });

  it('a sweep drops a deleted folder and adds one whose state another process wrote', async () => {
    const gone = await incidentIn(root, 'gone', (sha256, incidentId) => [
      { type: 'Validated', incidentId, sha256 },
    ]);
    await index.load();
    const events: IndexEvent[] = [];
    index.subscribe((e) => void events.push(e));
    await rm(gone, { recursive: true });
    await incidentIn(
      root,
      'elsewhere',
      (sha256, incidentId) => [{ type: 'Validated', incidentId, sha256 }],
      storeFor(),
    );
    await index.sweep();
    expect(index.get('gone')).toBeUndefined();
    expect(index.get('elsewhere')?.state).toBe('queued');
    expect(events.map((e) => (e.type === 'remove' ? `-${e.folder}` : `+${e.view.folder}`))).toEqual([
      '-gone',
      '+elsewhere',
    ]);
  });

  it('lists as JSON text exactly what list() gives, whatever the strings hold', async () => {
    const dirs = await rootWithEveryState(root);
    await writeRun(dirs.failed, 'run-failed', { answer: 'tricky "age":0, "age":1 } \u2028 {' });
    index.close();
    // A fixed clock: both listings compute the same ages.
    index = new IncidentIndex({ root, now: () => Date.parse('2027-01-01T00:00:00Z') });
    await index.load();
    for (const request of [{ limit: 20 }, { limit: 3 }, { state: 'failed' as const }]) {
      const parsed = JSON.parse(index.listJson(request, { root })) as Record<string, unknown>;
      expect(parsed).toEqual({ ...index.list(request), root });
    }
    expect((index.list().incidents.find((v) => v.folder === 'failed') ?? {}).answer).toContain('"age":0,');
  });

  it("gives an incident's age from when its incident.json was written", async () => {
    const dir = await incidentIn(root, 'old', (sha256, incidentId) => [
      { type: 'Validated', incidentId, sha256 },
    ]);
    const written = new Date(Date.now() - 3 * 3600_000);
    await utimes(path.join(dir, 'incident.json'), written, written);
    await index.load();
    const age = index.get('old')?.age ?? 0;
    expect(age).toBeGreaterThanOrEqual(3 * 3600_000);
    expect(age).toBeLessThan(3 * 3600_000 + 60_000);
  });

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
