import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../../src/log/logger.js';
import { BUSY_RETRY_MS, DeliveryScheduler } from '../../../src/notify/scheduler.js';

// When deliveries are attempted: one attempt in flight per outbox entry, wake-ups during it folded into
// one more attempt, an attempt that could not run tried again later, and close() waiting for the one in flight.

describe('DeliveryScheduler', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs one attempt per entry at a time, and wake-ups that arrive meanwhile make exactly one more', async () => {
    let running = 0;
    let most = 0;
    const calls: string[] = [];
    const gates: (() => void)[] = [];
    const scheduler = new DeliveryScheduler(
      async (_dir, key) => {
        calls.push(key);
        running++;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => gates.push(resolve));
        running--;
      },
      silentLogger(),
      () => Date.now(),
    );
    scheduler.schedule('/ws', 'run-1.slack', Date.now());
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toEqual(['run-1.slack']);
    // Three wake-ups while it runs (a retry timer, a resend, a catch-up), and another entry's own.
    for (let i = 0; i < 3; i++) {
      scheduler.schedule('/ws', 'run-1.slack', Date.now());
      await vi.advanceTimersByTimeAsync(0);
    }
    scheduler.schedule('/ws', 'run-1.hook', Date.now());
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toEqual(['run-1.slack', 'run-1.hook']);
    gates.shift()?.();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toEqual(['run-1.slack', 'run-1.hook', 'run-1.slack']);
    while (gates.length > 0) {
      gates.shift()?.();
      await vi.advanceTimersByTimeAsync(0);
    }
    expect(calls).toHaveLength(3);
    expect(most).toBe(2);
    await scheduler.close(1000);
  });

  it('tries an attempt that could not run again after BUSY_RETRY_MS, and close() waits for the one in flight', async () => {
    let n = 0;
    let release: (() => void) | undefined;
    const scheduler = new DeliveryScheduler(
      async () => {
        n++;
        if (n === 1) throw new Error('outbox lock held elsewhere');
        await new Promise<void>((resolve) => (release = resolve));
      },
      silentLogger(),
      () => Date.now(),
    );
    scheduler.schedule('/ws', 'k', Date.now());
    await vi.advanceTimersByTimeAsync(0);
    expect(n).toBe(1);
    await vi.advanceTimersByTimeAsync(BUSY_RETRY_MS - 1);
    expect(n).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(n).toBe(2);
    let closed = false;
    const closing = scheduler.close(60_000).then(() => (closed = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(closed).toBe(false);
    release?.();
    await closing;
    expect(closed).toBe(true);
    scheduler.schedule('/ws', 'k', Date.now());
    await vi.advanceTimersByTimeAsync(BUSY_RETRY_MS);
    expect(n).toBe(2);
  });
});
