import { describe, expect, it } from 'vitest';
import { triageGaps } from '../../../src/run/evidence.js';

// What the recorded triage output cannot show, as the evidence check's gaps.
describe('triageGaps', () => {
  it('names a timed-out script, a killed one, and a log over the cap; a clean run has none', () => {
    expect(triageGaps({ status: 'ok', bytes: 100 }, 1024)).toEqual([]);
    expect(triageGaps({ status: 'timed_out', bytes: 100 }, 1024)).toEqual([
      'the triage script timed out: its output is partial',
    ]);
    expect(triageGaps({ status: 'failed', exitCode: null, signal: 'SIGKILL', bytes: 2048 }, 1024)).toEqual([
      'the triage script failed (signal SIGKILL): its output may be partial',
      'the triage output was cut at context.triage_log_cap (1024 of 2048 bytes recorded)',
    ]);
    expect(triageGaps({ status: 'disabled' }, 1024)).toEqual([]);
  });
});
