// The run's progress heartbeat on fake timers: a report every 5 s and a log line every minute while
// the agent runs, nothing after stop().
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ProgressTracker } from '../../../../src/daemon/run/progress.js';
import type { Logger } from '../../../../src/log/logger.js';

beforeEach(() => vi.useFakeTimers({ now: Date.parse('2026-11-26T10:00:00.000Z') }));
afterEach(() => vi.useRealTimers());

describe('ProgressTracker', () => {
  it('reports every 5 s with the elapsed time, logs every minute, and stops with the run', () => {
    const started = new Date();
    const tracker = new ProgressTracker(undefined, started, () => new Date());
    const reports: number[] = [];
    const info = vi.fn();
    tracker.beat((p) => reports.push(p.elapsedMs), { info } as unknown as Logger);
    vi.advanceTimersByTime(15_000);
    expect(reports).toEqual([5_000, 10_000, 15_000]);
    vi.advanceTimersByTime(45_000);
    expect(info).toHaveBeenCalledOnce();
    expect(info).toHaveBeenCalledWith(
      { progress: expect.objectContaining({ elapsedMs: 60_000 }) },
      'agent still running',
    );
    tracker.stop();
    vi.advanceTimersByTime(120_000);
    expect(reports).toHaveLength(12);
  });

  it('keeps the first refused-credentials sign the reader saw', () => {
    const reader = {
      push: vi
        .fn()
        .mockReturnValueOnce({ turns: 1, authFailure: 'invalid x-api-key' })
        .mockReturnValueOnce({ authFailure: 'later' }),
    };
    const tracker = new ProgressTracker(reader, new Date(), () => new Date());
    tracker.push(Buffer.from('a'));
    tracker.push(Buffer.from('b'));
    expect(tracker.authFailure).toBe('invalid x-api-key');
    expect(tracker.snapshot().turns).toBe(1);
  });
});
