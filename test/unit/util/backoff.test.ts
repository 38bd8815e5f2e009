// The one backoff and the one wait: the delay curve as a pure function, the wait on fake timers.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { backoffDelay, waitFor } from '../../../src/util/backoff.js';

describe('backoffDelay', () => {
  const policy = { baseMs: 1000, maxMs: 60_000 };

  it('doubles per attempt with jitter between half and the full delay, capped', () => {
    expect(backoffDelay(1, policy, () => 0)).toBe(500);
    expect(backoffDelay(1, policy, () => 1)).toBe(1000);
    expect(backoffDelay(3, policy, () => 1)).toBe(4000);
    expect(backoffDelay(20, policy, () => 1)).toBe(60_000);
    expect(backoffDelay(20, policy, () => 0)).toBe(30_000);
  });
});

describe('waitFor', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('tries again with a doubling pause until the answer is done', async () => {
    const tries: number[] = [];
    let answer = false;
    const waited = waitFor(
      async () => {
        tries.push(Date.now());
        return answer;
      },
      (a) => a,
      { waitMs: 10_000, delayMs: 10, maxDelayMs: 40 },
    );
    await vi.advanceTimersByTimeAsync(10 + 20 + 40 + 40);
    answer = true;
    await vi.advanceTimersByTimeAsync(40);
    await expect(waited).resolves.toBe(true);
    const start = tries[0] ?? 0;
    expect(tries.map((t) => t - start)).toEqual([0, 10, 30, 70, 110, 150]);
  });

  it('returns the last answer once the wait is over, without sleeping past it', async () => {
    let calls = 0;
    const waited = waitFor(
      async () => {
        calls += 1;
        return { acquired: false as const, holder: 'other' };
      },
      (a) => a.acquired,
      { waitMs: 250, delayMs: 100, maxDelayMs: 100 },
    );
    await vi.advanceTimersByTimeAsync(250);
    await expect(waited).resolves.toEqual({ acquired: false, holder: 'other' });
    // At 0, 100, 200 and at the deadline (250), not at 300.
    expect(calls).toBe(4);
  });

  it('a wait of 0 tries exactly once', async () => {
    const attempt = vi.fn(async () => false);
    await expect(waitFor(attempt, (a) => a, { waitMs: 0 })).resolves.toBe(false);
    expect(attempt).toHaveBeenCalledOnce();
  });
});
