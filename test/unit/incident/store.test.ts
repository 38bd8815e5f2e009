// The store: the one writer of state.json. Fields in a fixed order, atomic writes, the audit event after
// the state, and a full disk that delays a write instead of losing it.
import { mkdir, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { IllegalTransitionError } from '../../../src/incident/machine.js';
import { IncidentStore } from '../../../src/incident/store.js';
import { parseStateText, readState, writeState, type StateFile } from '../../../src/workspace/state.js';
import { statePath } from '../../../src/workspace/layout.js';
import { silentLogger } from '../../../src/log/logger.js';
import { tempRoot } from '../../support/incidents.js';

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ root, cleanup } = await tempRoot()));
afterEach(async () => cleanup());

const policy = { max_attempts: 3, retry_base_delay: 1000, retry_max_delay: 60_000 };
const auditTypes = async (dir: string) =>
  (await readFile(path.join(dir, '.triage', 'audit.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { type: string }).type);

describe('writeState / readState', () => {
  it('writes the fixed fields in order, atomically, leaving no temp file', async () => {
    const dir = path.join(root, 'ws');
    const record: StateFile = {
      incidentSha256: 'abc',
      runs: [],
      updatedAt: '2026-11-22T00:00:00.000Z',
      attempts: 0,
      state: 'queued',
      incidentId: 'inc-1',
      reason: undefined,
    };
    await writeState(statePath(dir), record);
    const text = await readFile(statePath(dir), 'utf8');
    expect(Object.keys(JSON.parse(text) as object)).toEqual([
      'incidentId',
      'state',
      'attempts',
      'updatedAt',
      'runs',
      'incidentSha256',
    ]);
    expect(await readState(dir)).toMatchObject({ state: 'queued', incidentSha256: 'abc' });
    expect((await readdir(path.join(dir, '.triage'))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('with createDir false, fails with ENOENT on a folder removed meanwhile and makes nothing again', async () => {
    const dir = path.join(root, 'removed-meanwhile');
    const record: StateFile = { incidentId: 'inc-2', state: 'running', attempts: 1, updatedAt: '', runs: [] };
    await expect(writeState(statePath(dir), record, { createDir: false })).rejects.toMatchObject({
      code: 'ENOENT',
    });
    expect(await readdir(root)).toEqual([]);
  });

  it('reads a missing or corrupt state file as no state', async () => {
    expect(await readState(path.join(root, 'nothing'))).toBeUndefined();
  });

  it('reads a state file missing what its readers rely on as damaged, and one as written as it is', () => {
    const written = {
      incidentId: 'inc-1',
      state: 'succeeded',
      attempts: 1,
      updatedAt: '2026-11-27T00:00:00.000Z',
      runs: [{ id: '20261127T000000Z-abcdef', status: 'succeeded' }],
    };
    expect(parseStateText(JSON.stringify(written))).toEqual(written);
    for (const damaged of [
      '{"incidentId": ',
      'null',
      '[]',
      { ...written, state: 'bogus' },
      { ...written, runs: undefined },
      { ...written, runs: 5 },
      { ...written, runs: [null] },
      { ...written, runs: [{ id: 7, status: 'succeeded' }] },
      { ...written, attempts: '2' },
      { ...written, attempts: -1 },
      { ...written, incidentId: undefined },
      { ...written, updatedAt: 0 },
    ])
      expect(
        parseStateText(typeof damaged === 'string' ? damaged : JSON.stringify(damaged)),
        JSON.stringify(damaged),
      ).toBeUndefined();
  });
});

describe('IncidentStore.apply', () => {
  it('never re-creates a workspace folder the producer removed', async () => {
    const store = new IncidentStore({ audit: new AuditLog(), log: silentLogger(), policy });
    const gone = path.join(root, 'removed');
    await expect(
      store.apply(gone, { type: 'Validated', incidentId: 'inc-1', sha256: 'abc' }),
    ).rejects.toThrow(/ENOENT/);
    await expect(readdir(gone)).rejects.toThrow(/ENOENT/);
  });

  it('writes the state, then appends the audit events, and tells the listener', async () => {
    const dir = path.join(root, 'ws');
    await mkdir(dir);
    const changes: string[] = [];
    const store = new IncidentStore({
      audit: new AuditLog(),
      log: silentLogger(),
      policy,
      onChange: (c) => changes.push(`${c.previous?.state ?? 'none'}→${c.record.state}`),
    });
    await store.apply(dir, { type: 'Validated', incidentId: 'inc-1', sha256: 'abc' });
    await store.apply(dir, { type: 'Claimed', runId: 'r1', holder: 'd:1' });
    await store.apply(dir, { type: 'Finished', runId: 'r1', outcome: { status: 'succeeded', exitCode: 0 } });
    expect(await readState(dir)).toMatchObject({
      state: 'succeeded',
      attempts: 1,
      runs: [{ id: 'r1', status: 'succeeded' }],
    });
    expect(await auditTypes(dir)).toEqual(['validated', 'queued', 'claimed', 'outcome']);
    expect(changes).toEqual(['none→queued', 'queued→preparing', 'preparing→succeeded']);
  });

  it("appends a transition's audit events in one write, the last carrying the new state's digest", async () => {
    const dir = path.join(root, 'ws');
    await mkdir(dir);
    const store = new IncidentStore({ audit: new AuditLog(), log: silentLogger(), policy });
    await store.apply(dir, { type: 'Validated', incidentId: 'inc-1', sha256: 'abc' });
    const entries = (await readFile(path.join(dir, '.triage', 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; rest?: number; stateSha256?: string });
    expect(entries.map((e) => [e.type, e.rest])).toEqual([
      ['validated', 1],
      ['queued', undefined],
    ]);
    expect(entries[1]?.stateSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses an illegal transition and leaves the file as it was', async () => {
    const dir = path.join(root, 'ws');
    await mkdir(dir);
    const store = new IncidentStore({ audit: new AuditLog(), log: silentLogger(), policy });
    await store.apply(dir, { type: 'Invalid', incidentId: 'inc-1', reason: 'bad' });
    await expect(store.apply(dir, { type: 'Claimed', runId: 'r', holder: 'h' })).rejects.toBeInstanceOf(
      IllegalTransitionError,
    );
    expect((await readState(dir))?.state).toBe('rejected');
  });

  it('writes nothing for a transition that changes nothing', async () => {
    const dir = path.join(root, 'ws');
    await mkdir(dir);
    const store = new IncidentStore({ audit: new AuditLog(), log: silentLogger(), policy });
    await store.apply(dir, { type: 'Validated', incidentId: 'inc-1', sha256: 'abc' });
    const before = await readFile(statePath(dir), 'utf8');
    const again = await store.apply(dir, { type: 'Validated', incidentId: 'inc-1', sha256: 'abc' });
    expect(again.unchanged).toBe(true);
    expect(await readFile(statePath(dir), 'utf8')).toBe(before);
    expect(await auditTypes(dir)).toEqual(['validated', 'queued']);
  });
});
