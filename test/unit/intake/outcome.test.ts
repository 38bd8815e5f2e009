import { describe, expect, it } from 'vitest';
import { decideOutcome } from '../../../src/daemon/outcome.js';

const policy = { max_attempts: 3, retry_base_delay: 1000, retry_max_delay: 60_000 };

describe('decideOutcome', () => {
  it('records success as final', () => {
    expect(decideOutcome({ status: 'succeeded', exitCode: 0 }, 1, policy)).toMatchObject({
      state: 'succeeded',
      runStatus: 'succeeded',
    });
  });

  it('retries a transient failure with a growing delay until max_attempts', () => {
    const first = decideOutcome(
      { status: 'failed', transient: true, reason: 'engine unreachable' },
      1,
      policy,
      () => 1,
    );
    expect(first).toMatchObject({
      state: 'queued',
      runStatus: 'failed',
      retryDelayMs: 1000,
      audit: 'retry_scheduled',
    });
    expect(first.reason).toMatch(
      /attempt 1 of 3 failed transiently \(engine unreachable\); retrying in 1000 ms/,
    );
    expect(decideOutcome({ status: 'failed', transient: true }, 2, policy, () => 1).retryDelayMs).toBe(2000);
    const last = decideOutcome(
      { status: 'failed', transient: true, reason: 'engine unreachable' },
      3,
      policy,
    );
    expect(last).toMatchObject({
      state: 'failed',
      reason: 'gave up after 3 attempts (scheduling.max_attempts): engine unreachable',
    });
  });

  it('never retries a permanent failure or a timeout', () => {
    expect(decideOutcome({ status: 'failed', exitCode: 2 }, 1, policy)).toMatchObject({
      state: 'failed',
      reason: 'the run failed (exit code 2)',
    });
    expect(decideOutcome({ status: 'timed_out' }, 1, policy)).toMatchObject({
      state: 'failed',
      runStatus: 'timed_out',
    });
  });

  it('re-queues a run that was gone after a restart and marks an interrupted one interrupted', () => {
    expect(decideOutcome('gone', 1, policy)).toMatchObject({
      state: 'queued',
      runStatus: 'interrupted',
      audit: 'requeued',
    });
    expect(decideOutcome({ status: 'interrupted' }, 1, policy)).toMatchObject({
      state: 'interrupted',
      audit: 'interrupted',
    });
  });
});
