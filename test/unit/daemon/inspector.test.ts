// The Inspector directly: it looks at one folder at a time, asks the judge, and applies the answer under
// the workspace lease. A valid drop is queued once however many events announce it; a duplicate, a full
// queue, an unknown cluster and a folder that escapes the root each end where the machine says; a final
// folder is not read again until one of its files changes; a change during a run is only noted.
import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { Inspector, type InspectorDeps } from '../../../src/daemon/inspector.js';
import type { QueuedIncident } from '../../../src/daemon/run-slot.js';
import { IncidentStore } from '../../../src/incident/store.js';
import { readState } from '../../../src/workspace/state.js';
import { DedupStore } from '../../../src/intake/dedup.js';
import { silentLogger } from '../../../src/log/logger.js';
import { unsafeStatePath } from '../../../src/workspace/layout.js';
import { incidentJson, tempRoot } from '../../support/incidents.js';

const policy = { max_attempts: 3, retry_base_delay: 1000, retry_max_delay: 60_000 };

let root: { root: string; cleanup: () => Promise<void> };
let store: IncidentStore;
let queued: QueuedIncident[];
let busy: Set<string>;
let changed: string[];
let reads: number;

beforeEach(async () => {
  root = await tempRoot('triage-inspector-');
  store = new IncidentStore({ audit: new AuditLog(), log: silentLogger(), policy });
  queued = [];
  busy = new Set();
  changed = [];
  reads = 0;
  const read = store.read.bind(store);
  store.read = (dir: string) => {
    reads += 1;
    return read(dir);
  };
  const readChecked = store.readChecked.bind(store);
  store.readChecked = (dir: string) => {
    reads += 1;
    return readChecked(dir);
  };
});
afterEach(async () => root.cleanup());

function inspector(over: Partial<InspectorDeps> = {}): Inspector {
  return new Inspector({
    root: root.root,
    store,
    dedup: new DedupStore(root.root, 60_000, () => Date.now()),
    log: silentLogger(),
    identity: { daemonId: 'd1' },
    lease: { ttlMs: 30_000 },
    now: () => Date.now(),
    // A settled file: no write-settle wait.
    intake: { maxBytes: 1 << 20, writeSettleMs: 0, incompleteGraceMs: 0, dedupWindowMs: 60_000 },
    isBusy: (dir) => busy.has(dir),
    markChanged: (dir) => (changed.push(dir), true),
    adopt: () => undefined,
    reserve: () => () => undefined,
    // As in the daemon: a queued folder is busy (the scheduler holds it).
    enqueue: (q) => {
      queued.push(q);
      busy.add(q.workspace.dir);
    },
    queueLimit: 10,
    ...over,
  });
}

/** The state the inspector keeps under the root for an unsafe folder. */
async function unsafeState(name: string): Promise<{ state: string; reason: string }> {
  return JSON.parse(await readFile(unsafeStatePath(root.root, name), 'utf8')) as {
    state: string;
    reason: string;
  };
}

async function drop(name: string, overrides: Record<string, unknown> = {}): Promise<string> {
  const dir = path.join(root.root, name);
  await mkdir(dir, { recursive: true });
  await writeFile(
    path.join(dir, 'incident.json'),
    JSON.stringify(incidentJson({ incidentId: name, ...overrides })),
  );
  return dir;
}

describe('Inspector', () => {
  it('queues a valid drop once when several events announce it at the same time', async () => {
    const dir = await drop('inc-1');
    const i = inspector();
    await Promise.all([i.consider(dir, 'add'), i.consider(dir, 'change'), i.consider(dir, 'add')]);
    expect(queued.map((q) => q.workspace.name)).toEqual(['inc-1']);
    expect((await readState(dir))?.state).toBe('queued');
  });

  it('rejects a second incident for the same cluster, resource and fault inside the dedup window', async () => {
    const resource = { apiVersion: 'v1', kind: 'Pod', name: 'web-0', namespace: 'shop', uid: 'u0' };
    const first = await drop('inc-1', { resource });
    const second = await drop('inc-2', { resource });
    const i = inspector();
    await i.consider(first, 'add');
    await i.consider(second, 'add');
    expect(queued.map((q) => q.workspace.name)).toEqual(['inc-1']);
    const state = await readState(second);
    expect(state?.state).toBe('rejected');
    expect(state?.reason).toMatch(/^duplicate of inc-1 /);
  });

  it('defers an incident when the queue has no room, and queues nothing', async () => {
    const dir = await drop('inc-1');
    await inspector({ reserve: () => undefined }).consider(dir, 'add');
    expect(queued).toEqual([]);
    const state = await readState(dir);
    expect(state?.state).toBe('deferred');
    expect(state?.reason).toContain('scheduling.queue_limit 10');
  });

  it('rejects an incident for a cluster the registry cannot route, naming the problem', async () => {
    const dir = await drop('inc-1', { cluster: 'nowhere' });
    await inspector({ clusterProblem: (c) => `no cluster named ${c}; known: prod` }).consider(dir, 'add');
    expect(queued).toEqual([]);
    const state = await readState(dir);
    expect(state?.state).toBe('rejected');
    expect(state?.reason).toContain('no cluster named nowhere; known: prod');
  });

  it('does not read a final folder again on rescan until its incident.json changes', async () => {
    const dir = path.join(root.root, 'inc-1');
    await mkdir(dir);
    await writeFile(path.join(dir, 'incident.json'), '{"incidentId": "inc-1", "cluster": ');
    const i = inspector();
    await i.scan('rescan');
    expect((await readState(dir))?.state).toBe('rejected');
    const before = reads;
    await i.scan('rescan');
    await i.scan('rescan');
    expect(reads).toBe(before);
    await writeFile(path.join(dir, 'incident.json'), JSON.stringify(incidentJson({ incidentId: 'inc-1' })));
    await i.scan('rescan');
    expect(reads).toBeGreaterThan(before);
    expect(queued.map((q) => q.workspace.name)).toEqual(['inc-1']);
  });

  it('stops watching a folder once its incident is finished (not a rejected one), and watches it again when its incident.json changes', async () => {
    const forgotten: string[] = [];
    const again: string[] = [];
    const i = inspector({
      watch: { forget: (d) => void forgotten.push(d), watchAgain: (d) => void again.push(d) },
    });
    const dir = await drop('inc-done');
    await i.consider(dir, 'add');
    for (const event of [
      { type: 'Claimed', runId: 'r1', holder: 'd1' },
      { type: 'Launched', runId: 'r1', engine: 'process', id: '1' },
      { type: 'Finished', runId: 'r1', outcome: { status: 'succeeded', exitCode: 0 } },
    ] as const)
      await store.apply(dir, event);
    busy.delete(dir);
    await i.consider(dir, 'change');
    expect(forgotten).toEqual([dir]);
    const bad = path.join(root.root, 'inc-bad');
    await mkdir(bad);
    await writeFile(path.join(bad, 'incident.json'), '{"incidentId": "inc-bad", "cluster": ');
    await i.consider(bad, 'add');
    expect((await readState(bad))?.state).toBe('rejected');
    expect(forgotten).toEqual([dir]);
    await writeFile(
      path.join(dir, 'incident.json'),
      JSON.stringify(incidentJson({ incidentId: 'inc-done', faultType: 'OOMKilled' })),
    );
    await i.scan('rescan');
    expect(again).toEqual([dir]);
  });

  it("stops watching a duplicate (an alert storm's many folders), judged at once or found on a rescan, and watches it again when re-saved", async () => {
    const forgotten: string[] = [];
    const again: string[] = [];
    const watch = {
      forget: (d: string) => void forgotten.push(d),
      watchAgain: (d: string) => void again.push(d),
    };
    const resource = { apiVersion: 'v1', kind: 'Pod', name: 'web-0', namespace: 'shop', uid: 'u0' };
    const first = await drop('inc-1', { resource });
    const second = await drop('inc-2', { resource });
    const i = inspector({ watch });
    await i.consider(first, 'add');
    await i.consider(second, 'add');
    expect((await readState(second))?.duplicateOf).toBe('inc-1');
    expect(forgotten).toEqual([second]);
    // A daemon started later finds the duplicate already judged: it lets go of it on its first look.
    const later: string[] = [];
    await inspector({ watch: { forget: (d) => void later.push(d), watchAgain: () => undefined } }).scan(
      'rescan',
    );
    expect(later).toEqual([second]);
    await writeFile(
      path.join(second, 'incident.json'),
      JSON.stringify(incidentJson({ incidentId: 'inc-2', resource, severity: 'low' })),
    );
    await i.scan('rescan');
    expect(again).toEqual([second]);
  });

  it('only notes a change to a folder whose run is in progress, and ignores the same bytes', async () => {
    const dir = await drop('inc-1');
    const i = inspector();
    await i.consider(dir, 'add');
    await i.consider(dir, 'change');
    expect(changed).toEqual([]);
    await writeFile(
      path.join(dir, 'incident.json'),
      JSON.stringify(incidentJson({ incidentId: 'inc-1', severity: 'low' })),
    );
    await i.consider(dir, 'change');
    expect(changed).toEqual([dir]);
    expect(queued).toHaveLength(1);
  });

  it('never writes into a folder whose .triage is a symlink: its state goes under the root', async () => {
    const dir = await drop('inc-1');
    const elsewhere = path.join(root.root, '..', `elsewhere-${path.basename(root.root)}`);
    await mkdir(elsewhere, { recursive: true });
    onTestFinished(() => rm(elsewhere, { recursive: true, force: true }));
    await symlink(elsewhere, path.join(dir, '.triage'));
    await inspector().consider(dir, 'add');
    expect(queued).toEqual([]);
    const unsafe = await unsafeState('inc-1');
    expect(unsafe.state).toBe('rejected');
    expect(unsafe.reason).toContain('.triage is a symbolic link; the daemon never writes through links');
  });

  it('does not take a state.json written whole between its read and its check (another daemon taking the folder in) for a damaged one', async () => {
    const dir = await drop('inc-1');
    // The other daemon's claim lands right after this daemon found no state.
    const other = new IncidentStore({ audit: new AuditLog(), log: silentLogger(), policy });
    const read = store.readChecked.bind(store);
    let first = true;
    store.readChecked = async (d: string) => {
      const state = await read(d);
      if (first) {
        first = false;
        await other.apply(d, { type: 'Validated', incidentId: 'inc-1', sha256: 'claimed-elsewhere' });
      }
      return state;
    };
    await inspector().consider(dir, 'add');
    expect(await readFile(unsafeStatePath(root.root, 'inc-1'), 'utf8').catch(() => 'none')).toBe('none');
    expect((await readState(dir))?.state).not.toBe('rejected');
  });

  const damagedStates: [string, (file: string) => Promise<void>][] = [
    ['text that is not JSON', (f) => writeFile(f, '{"incidentId": "inc-1", "state": "succ')],
    ['JSON that is not a state', (f) => writeFile(f, '{"state": "succeeded"}')],
    ['an empty file', (f) => writeFile(f, '')],
    ['a folder', (f) => mkdir(f)],
  ];
  for (const [what, damage] of damagedStates) {
    it(`never runs an incident again whose state.json is ${what}: rejected, kept under the root, until the file is removed`, async () => {
      const dir = await drop('inc-1');
      const i = inspector();
      await i.consider(dir, 'add');
      expect(queued).toHaveLength(1);
      // The run ended; then its state.json is damaged.
      queued.length = 0;
      busy.clear();
      const file = path.join(dir, '.triage', 'state.json');
      await rm(file);
      await damage(file);

      await i.consider(dir, 'rescan');
      expect(queued).toEqual([]);
      const unsafe = await unsafeState('inc-1');
      expect(unsafe.state).toBe('rejected');
      expect(unsafe.reason).toContain('.triage/state.json is not a state record the daemon wrote');
      expect(unsafe.reason).toContain('remove it to run the incident as new');

      await rm(file, { recursive: true });
      await i.consider(dir, 'rescan');
      expect(queued.map((q) => q.workspace.name)).toEqual(['inc-1']);
    });
  }
});
