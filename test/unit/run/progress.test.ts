// The run's progress heartbeat on fake timers: a report every 5 s and a log line every minute while
// the agent runs, nothing after stop().
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { jsonLineReader } from '../../../src/agents/shared/progress.js';
import { ProgressTracker } from '../../../src/run/progress.js';
import type { Logger } from '../../../src/log/logger.js';

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

const now = () => new Date('2026-11-26T10:00:05Z');
const start = new Date('2026-11-26T10:00:00Z');

describe('ProgressTracker with the model gateway', () => {
  it("takes tokens from the model gateway once it has seen a call, keeping the CLI's turns", () => {
    const reader = jsonLineReader((event, update) => {
      if (event.type === 'turn') Object.assign(update, { turns: event.n, tokens: { input: 1, output: 1 } });
    });
    const p = new ProgressTracker(reader, start, now);
    p.push(Buffer.from('{"type":"turn","n":1}\n'));
    expect(p.snapshot()).toMatchObject({ turns: 1, tokens: { input: 1, output: 1 } });
    p.gateway({ calls: 3, tokens: { input: 5000, output: 70 } });
    p.push(Buffer.from('{"type":"turn","n":2}\n'));
    expect(p.snapshot()).toMatchObject({ turns: 2, tokens: { input: 5000, output: 70 }, elapsedMs: 5000 });
  });

  it('counts model calls as turns for a CLI that reports no progress of its own', () => {
    const p = new ProgressTracker(undefined, start, now);
    p.gateway({ calls: 4, tokens: { input: 10, output: 2 } });
    expect(p.snapshot()).toMatchObject({ turns: 4, tokens: { input: 10, output: 2 } });
  });
});
