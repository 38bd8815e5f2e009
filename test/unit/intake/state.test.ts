import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  IllegalTransitionError,
  isLegalTransition,
  readState,
  statePath,
  writeState,
} from '../../../src/intake/state.js';
import type { StateFile } from '../../../src/intake/types.js';
import { tempRoot } from '../../support/incidents.js';

let root: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ root, cleanup } = await tempRoot()));
afterEach(async () => cleanup());

const base = (state: StateFile['state']): StateFile => ({
  incidentId: 'inc-1',
  state,
  attempts: 0,
  updatedAt: '2026-11-22T00:00:00.000Z',
  runs: [],
});

describe('state machine', () => {
  it('allows the run path queued → preparing → running → succeeded', () => {
    expect(isLegalTransition(undefined, 'queued')).toBe(true);
    expect(isLegalTransition('queued', 'preparing')).toBe(true);
    expect(isLegalTransition('preparing', 'running')).toBe(true);
    expect(isLegalTransition('running', 'succeeded')).toBe(true);
  });

  it('never leaves succeeded or failed, and never starts running from nothing', () => {
    for (const to of ['queued', 'running', 'rejected', 'failed'] as const) {
      expect(isLegalTransition('succeeded', to)).toBe(false);
      expect(isLegalTransition('failed', to)).toBe(false);
    }
    expect(isLegalTransition(undefined, 'running')).toBe(false);
    expect(isLegalTransition('rejected', 'running')).toBe(false);
  });

  it('re-queues a rejected incident and an interrupted one', () => {
    expect(isLegalTransition('rejected', 'queued')).toBe(true);
    expect(isLegalTransition('interrupted', 'queued')).toBe(true);
    expect(isLegalTransition('deferred', 'queued')).toBe(true);
  });
});

describe('writeState / readState', () => {
  it('writes the brief fields in order, atomically, leaving no temp file', async () => {
    const dir = path.join(root, 'ws');
    const written = await writeState(dir, undefined, {
      ...base('queued'),
      reason: undefined,
      incidentSha256: 'abc',
    });
    expect(await readState(dir)).toEqual(written);
    const text = await readFile(statePath(dir), 'utf8');
    expect(Object.keys(JSON.parse(text) as object)).toEqual([
      'incidentId',
      'state',
      'attempts',
      'updatedAt',
      'runs',
      'incidentSha256',
    ]);
    expect((await readdir(path.join(dir, '.triage'))).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses an illegal transition and leaves the file as it was', async () => {
    const dir = path.join(root, 'ws');
    const done = await writeState(dir, undefined, base('queued'));
    const running = await writeState(dir, done, base('preparing'));
    const finished = await writeState(dir, running, base('failed'));
    await expect(writeState(dir, finished, base('queued'))).rejects.toBeInstanceOf(IllegalTransitionError);
    await expect(writeState(dir, finished, base('queued'))).rejects.toThrow(
      /illegal state transition failed → queued.*nothing \(final\)/,
    );
    expect((await readState(dir))?.state).toBe('failed');
  });

  it('reads a missing or corrupt state file as no state', async () => {
    expect(await readState(path.join(root, 'nothing'))).toBeUndefined();
  });
});
