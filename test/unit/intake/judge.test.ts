// The intake judge and admission, directly: what a folder's recorded state and its incident.json decide.
import { describe, expect, it } from 'vitest';
import type { StateFile } from '../../../src/workspace/state.js';
import { admit, judge, type JudgeInput } from '../../../src/intake/judge.js';
import type { ReadResult, Workspace } from '../../../src/workspace/incident.js';

const NOW = 1_000_000;
const state = (s: StateFile['state'], extra: Partial<StateFile> = {}): StateFile => ({
  incidentId: 'inc-1',
  state: s,
  attempts: 1,
  updatedAt: '2026-11-23T09:00:00.000Z',
  runs: [],
  incidentSha256: 'aaa',
  ...extra,
});
const ok = (sha256: string): ReadResult => ({
  kind: 'ok',
  sha256,
  mtimeMs: NOW - 10_000,
  workspace: { dir: '/w/inc-1', incident: { incidentId: 'inc-1' } } as unknown as Workspace,
});
const input = (over: Partial<JudgeInput>): JudgeInput => ({
  cause: 'change',
  state: undefined,
  read: ok('aaa'),
  now: NOW,
  writeSettleMs: 100,
  incompleteGraceMs: 2000,
  ...over,
});

describe('judge', () => {
  it('adopts a run on the engine at a scan and leaves it alone on a file event', () => {
    expect(judge(input({ state: state('running'), cause: 'startup' }))).toEqual({ kind: 'adopt' });
    expect(judge(input({ state: state('preparing'), cause: 'rescan' }))).toEqual({ kind: 'adopt' });
    expect(judge(input({ state: state('running'), cause: 'change' }))).toEqual({ kind: 'busy' });
  });

  it('adopts an interrupted run that did not stop, but re-queues one that did', () => {
    const unstopped = state('interrupted', { unstopped: true });
    expect(judge(input({ state: unstopped, cause: 'startup' }))).toEqual({ kind: 'adopt' });
    expect(judge(input({ state: state('interrupted'), cause: 'startup' }))).toMatchObject({
      kind: 'accept',
    });
  });

  it('a finished incident with the same bytes is final; with other valid bytes it changed', () => {
    expect(judge(input({ state: state('succeeded') }))).toEqual({ kind: 'final' });
    expect(judge(input({ state: state('failed'), read: ok('bbb') }))).toEqual({
      kind: 'changed',
      sha256: 'bbb',
      incidentId: 'inc-1',
    });
  });

  it('a rejected incident with fixed bytes is accepted (not "changed"), and the same rejection is final', () => {
    expect(judge(input({ state: state('rejected'), read: ok('bbb') }))).toMatchObject({ kind: 'accept' });
    const rejected = state('rejected', { reason: 'bad' });
    const invalid: ReadResult = { kind: 'invalid', reason: 'bad', sha256: 'ccc' };
    expect(judge(input({ state: { ...rejected, incidentSha256: 'ccc' }, read: invalid }))).toEqual({
      kind: 'final',
    });
    expect(judge(input({ state: rejected, read: invalid }))).toEqual({
      kind: 'reject',
      reason: 'bad',
      sha256: 'ccc',
    });
  });

  it('waits for an incomplete file while it settles and within the grace, then rejects it', () => {
    const incomplete = (ageMs: number): ReadResult => ({
      kind: 'incomplete',
      reason: 'cut off',
      sha256: 'ddd',
      mtimeMs: NOW - ageMs,
    });
    expect(judge(input({ read: incomplete(10) }))).toEqual({ kind: 'wait', delayMs: 25 });
    expect(judge(input({ read: incomplete(1000) }))).toEqual({ kind: 'wait', delayMs: 1005 });
    expect(judge(input({ read: incomplete(5000) }))).toEqual({
      kind: 'reject',
      reason: 'cut off',
      sha256: 'ddd',
    });
  });

  it('a missing file is looked at again only for a new folder', () => {
    expect(judge(input({ read: { kind: 'missing' }, cause: 'newdir' }))).toEqual({
      kind: 'missing',
      recheck: true,
    });
    expect(judge(input({ read: { kind: 'missing' }, cause: 'rescan' }))).toEqual({
      kind: 'missing',
      recheck: false,
    });
  });
});

describe('admit', () => {
  const duplicate = { incidentId: 'inc-0', ageMs: 5000 };

  it('a duplicate counts only at the first judgement (new or after a rejection)', () => {
    expect(admit({ state: undefined, duplicate, queueFull: false })).toEqual({
      kind: 'duplicate',
      duplicateOf: 'inc-0',
      ageMs: 5000,
    });
    expect(admit({ state: state('rejected'), duplicate, queueFull: false }).kind).toBe('duplicate');
    expect(admit({ state: state('interrupted'), duplicate, queueFull: false }).kind).toBe('enqueue');
  });

  it('defers when the queue is full, else enqueues', () => {
    expect(admit({ state: undefined, duplicate: undefined, queueFull: true })).toEqual({ kind: 'defer' });
    expect(admit({ state: undefined, duplicate: undefined, queueFull: false })).toEqual({ kind: 'enqueue' });
  });
});
