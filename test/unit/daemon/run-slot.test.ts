// RunSlot directly: it claims only what the machine says may run, records each stage and the outcome
// under the workspace lease, adopts a run that may still be running, and writes progress at most once
// per window (fake timers drive the window).
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { RunSlot, type SlotDeps } from '../../../src/daemon/run-slot.js';
import type { RunExecutor, RunOutcome, RunRequest } from '../../../src/run/types.js';
import { IncidentStore, type StateChange } from '../../../src/incident/store.js';
import { readState, type RunProgress } from '../../../src/workspace/state.js';
import type { Workspace } from '../../../src/workspace/incident.js';
import { silentLogger } from '../../../src/log/logger.js';
import { incidentJson, tempRoot } from '../../support/incidents.js';

const policy = { max_attempts: 3, retry_base_delay: 1000, retry_max_delay: 60_000 };
const SHA = 'a'.repeat(64);

let root: { root: string; cleanup: () => Promise<void> };
let dir: string;
let changes: StateChange[];
let store: IncidentStore;

beforeEach(async () => {
  root = await tempRoot('triage-slot-');
  dir = path.join(root.root, 'inc-1');
  await mkdir(dir);
  changes = [];
  store = new IncidentStore({
    audit: new AuditLog(),
    log: silentLogger(),
    policy,
    onChange: (c) => changes.push(c),
  });
});
afterEach(async () => {
  vi.useRealTimers();
  await root.cleanup();
});

const workspace = (): Workspace =>
  ({ dir, name: 'inc-1', incident: { incidentId: 'inc-1' }, incidentText: '{}' }) as unknown as Workspace;

function deps(executor: Partial<RunExecutor>): SlotDeps {
  return {
    store,
    executor: {
      run: () => Promise.resolve({ status: 'succeeded', exitCode: 0 }),
      adopt: () => Promise.resolve('gone'),
      readiness: () => Promise.resolve({ ok: true, checks: [] }),
      ...executor,
    },
    log: silentLogger(),
    identity: { daemonId: 'd1' },
    lease: { ttlMs: 30_000 },
    now: () => Date.now(),
    maxIncidentBytes: 1024 * 1024,
  };
}

const queued = () => ({ workspace: workspace(), sha256: SHA, arrivedAt: 0 });
const progress = (turns: number): RunProgress => ({
  turns,
  tokens: { input: turns, output: 0 },
  elapsedMs: turns,
  updatedAt: 'x',
});

describe('RunSlot', () => {
  it('claims a queued incident, records the launch and the outcome, and releases the lease', async () => {
    await store.apply(dir, { type: 'Validated', incidentId: 'inc-1', sha256: SHA });
    const run = vi.fn(async (request: RunRequest): Promise<RunOutcome> => {
      await request.onStage?.({ type: 'launched', engine: 'process', id: 'pid-1' });
      return { status: 'succeeded', exitCode: 0 };
    });
    const end = await RunSlot.run(deps({ run }), queued()).done;
    expect(end).toEqual({ reconsider: false });
    expect(run).toHaveBeenCalledWith(expect.objectContaining({ attempt: 1 }));
    expect(changes.map((c) => c.record.state)).toEqual(['queued', 'preparing', 'running', 'succeeded']);
    const state = await readState(dir);
    expect(state?.runs).toEqual([{ id: expect.any(String), status: 'succeeded' }]);
  });

  it('does not claim an interrupted run that did not stop at shutdown: the machine refuses it', async () => {
    await store.apply(dir, { type: 'Validated', incidentId: 'inc-1', sha256: SHA });
    await store.apply(dir, { type: 'Claimed', runId: 'r1', holder: 'd0:1' });
    await store.apply(dir, { type: 'Interrupted', runId: 'r1', reason: 'x', unstopped: true });
    const run = vi.fn();
    const end = await RunSlot.run(deps({ run }), queued()).done;
    expect(run).not.toHaveBeenCalled();
    expect(end).toEqual({ reconsider: false });
    expect((await readState(dir))?.state).toBe('interrupted');
  });

  it('asks to look again when incident.json was saved with other bytes since it was queued', async () => {
    await store.apply(dir, { type: 'Validated', incidentId: 'inc-1', sha256: 'b'.repeat(64) });
    const run = vi.fn();
    expect(await RunSlot.run(deps({ run }), queued()).done).toEqual({ reconsider: true });
    expect(run).not.toHaveBeenCalled();
  });

  it('adopts a run that may still be running and records how it ended', async () => {
    await store.apply(dir, { type: 'Validated', incidentId: 'inc-1', sha256: SHA });
    await store.apply(dir, { type: 'Claimed', runId: 'r1', holder: 'd0:1' });
    await store.apply(dir, { type: 'Interrupted', runId: 'r1', reason: 'x', unstopped: true });
    // adopt() reads incident.json itself: give it a valid one.
    await writeFile(path.join(dir, 'incident.json'), JSON.stringify(incidentJson({ incidentId: 'inc-1' })));
    const adopt = vi.fn(async () => ({ status: 'failed' as const, exitCode: 1, reason: 'agent failed' }));
    const end = await RunSlot.adopt(deps({ adopt }), dir).done;
    expect(adopt).toHaveBeenCalledWith(expect.objectContaining({ runId: 'r1' }));
    expect(end.reconsider).toBe(false);
    expect(changes.slice(-2).map((c) => c.record.state)).toEqual(['running', 'failed']);
  });

  it('writes progress at once, then at most once per 2 s window, the latest of the window', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    await store.apply(dir, { type: 'Validated', incidentId: 'inc-1', sha256: SHA });
    let report: ((p: RunProgress) => Promise<void>) | undefined;
    let finish: (() => void) | undefined;
    const run = async (request: RunRequest): Promise<RunOutcome> => {
      report = (p) => request.onStage?.({ type: 'progress', progress: p }) ?? Promise.resolve();
      await new Promise<void>((resolve) => (finish = resolve));
      return { status: 'succeeded', exitCode: 0 };
    };
    const slot = RunSlot.run(deps({ run }), queued());
    await vi.waitFor(() => expect(report).toBeDefined());
    const written = () =>
      changes.filter((c) => c.event.type === 'Progress').map((c) => c.record.progress?.turns);
    await report?.(progress(1));
    await vi.advanceTimersByTimeAsync(0);
    await vi.waitFor(() => expect(written()).toEqual([1]));
    await report?.(progress(2));
    await report?.(progress(3));
    await vi.advanceTimersByTimeAsync(1999);
    expect(written()).toEqual([1]);
    await vi.advanceTimersByTimeAsync(1);
    await vi.waitFor(() => expect(written()).toEqual([1, 3]));
    finish?.();
    await expect(slot.done).resolves.toEqual({ reconsider: false });
  });
});
