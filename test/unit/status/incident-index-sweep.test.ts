// The status index's periodic sweep on fake timers (only setInterval is faked: the sweep reads a real
// root): it runs every interval and not before, startSweeping again replaces the timer rather than
// adding one, close() stops it, and a folder deleted behind the index's back is gone after the next one.
import { rm } from 'node:fs/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IncidentIndex } from '../../../src/status/incident-index.js';
import { tempRoot } from '../../support/incidents.js';
import { incidentIn } from '../../support/status-root.js';

const EVERY = 30_000;

let root: string;
let cleanup: () => Promise<void>;
let index: IncidentIndex;

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-index-sweep-'));
  index = new IncidentIndex({ root });
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
});
afterEach(async () => {
  index.close();
  vi.useRealTimers();
  await cleanup();
});

describe('status index: the periodic sweep', () => {
  it('sweeps every interval and not before: a folder deleted behind its back is gone after the next sweep', async () => {
    const gone = await incidentIn(root, 'gone', (sha256, incidentId) => [
      { type: 'Validated', incidentId, sha256 },
    ]);
    await index.load();
    const sweeps = vi.spyOn(index, 'sweep');
    index.startSweeping(EVERY);
    await rm(gone, { recursive: true });

    vi.advanceTimersByTime(EVERY - 1);
    expect(sweeps).not.toHaveBeenCalled();
    expect(index.get('gone')?.state).toBe('queued');
    vi.advanceTimersByTime(1);
    expect(sweeps).toHaveBeenCalledTimes(1);
    await sweeps.mock.results[0]?.value;
    expect(index.get('gone')).toBeUndefined();
    vi.advanceTimersByTime(EVERY);
    expect(sweeps).toHaveBeenCalledTimes(2);
  });

  it('starting again replaces the timer (one sweep per interval), and close() stops sweeping', () => {
    const sweeps = vi.spyOn(index, 'sweep').mockResolvedValue();
    index.startSweeping(EVERY);
    index.startSweeping(EVERY);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(EVERY);
    expect(sweeps).toHaveBeenCalledTimes(1);
    index.close();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(10 * EVERY);
    expect(sweeps).toHaveBeenCalledTimes(1);
  });
});
