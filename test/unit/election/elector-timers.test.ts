// The election on Node's own timers, faked (vi.useFakeTimers), with an in-memory Lease store at the
// edge: start() tries at once and then every retry period until stop(); a leader steps down exactly
// at the renew deadline counted from its last good renew, not later; a Lease call that hangs counts as
// failed at the renew deadline instead of holding the loop. (elector.test.ts covers the races and
// takeovers against the API server with a hand-moved clock.)
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LeaderElector } from '../../../src/election/elector.js';
import { LeaseConflictError, type LeaseRecord, type LeaseStore } from '../../../src/election/types.js';

const DURATION = 15_000;
const DEADLINE = 10_000;
const RETRY = 2_000;

/** One Lease in memory, guarded by resourceVersion; `mode` makes its calls fail or hang. */
function memoryLease() {
  let record: LeaseRecord | undefined;
  let version = 0;
  const calls = { get: 0 };
  const lease = {
    mode: 'ok' as 'ok' | 'fail' | 'hang',
    calls,
    store: {
      where: 'memory/lease',
      get: () => {
        calls.get++;
        if (lease.mode === 'hang') return new Promise<never>(() => undefined);
        if (lease.mode === 'fail') return Promise.reject(new Error('503 from the API server'));
        return Promise.resolve(record && { ...record });
      },
      create: (r: LeaseRecord) => {
        if (record) return Promise.reject(new LeaseConflictError('exists'));
        record = { ...r, resourceVersion: String(++version) };
        return Promise.resolve({ ...record });
      },
      update: (r: LeaseRecord) => {
        if (r.resourceVersion !== record?.resourceVersion)
          return Promise.reject(new LeaseConflictError('409'));
        record = { ...r, resourceVersion: String(++version) };
        return Promise.resolve({ ...record });
      },
    } satisfies LeaseStore,
  };
  return lease;
}

let lease: ReturnType<typeof memoryLease>;
let lost: string[];
let warnings: string[];

function elector(): LeaderElector {
  return new LeaderElector({
    store: lease.store,
    identity: 'pod-a',
    leaseDurationMs: DURATION,
    renewDeadlineMs: DEADLINE,
    retryPeriodMs: RETRY,
    onLost: (why) => lost.push(why),
    log: { info: () => undefined, warn: (o) => void warnings.push(String((o as { err?: unknown }).err)) },
  });
}

beforeEach(() => {
  vi.useFakeTimers();
  lease = memoryLease();
  lost = [];
  warnings = [];
});
afterEach(() => {
  vi.useRealTimers();
});

describe('leader election on Node timers', () => {
  it('start() tries at once, then every retry period, and stop() ends the loop', async () => {
    const a = elector();
    a.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(a.state).toBe('leader');
    expect(lease.calls.get).toBe(1);
    await vi.advanceTimersByTimeAsync(RETRY - 1);
    expect(lease.calls.get).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(lease.calls.get).toBe(2);
    await vi.advanceTimersByTimeAsync(5 * RETRY);
    expect(lease.calls.get).toBe(7);
    expect(a.state).toBe('leader');
    await a.stop();
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(10 * RETRY);
    expect(lease.calls.get).toBe(7);
  });

  it('a leader whose renewals fail steps down exactly at the renew deadline after its last good renew', async () => {
    const a = elector();
    a.start();
    await vi.advanceTimersByTimeAsync(3 * RETRY); // renewed at 0, 2, 4 and 6 s
    expect(a.state).toBe('leader');
    lease.mode = 'fail';
    await vi.advanceTimersByTimeAsync(DEADLINE - 1); // 7 s to 6 + 10 s - 1 ms: four failed renewals
    expect(a.state).toBe('leader');
    expect(warnings.length).toBeGreaterThanOrEqual(4);
    expect(lost).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(a.state).toBe('stopped');
    expect(lost).toEqual([`the Lease was not renewed within ${DEADLINE} ms (renew_deadline)`]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a Lease call that hangs counts as failed at the renew deadline, and the loop tries again a retry period later', async () => {
    lease.mode = 'hang';
    const a = elector();
    a.start();
    await vi.advanceTimersByTimeAsync(DEADLINE - 1);
    expect(lease.calls.get).toBe(1);
    expect(warnings).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(warnings).toEqual([`the API server did not answer within ${DEADLINE} ms (renew_deadline)`]);
    lease.mode = 'ok';
    await vi.advanceTimersByTimeAsync(RETRY - 1);
    expect(lease.calls.get).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(lease.calls.get).toBe(2);
    expect(a.state).toBe('leader');
    await a.stop();
  });
});
