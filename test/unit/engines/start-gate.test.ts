import { describe, expect, it } from 'vitest';
import { StartGate } from '../../../src/engines/start-gate.js';

// The gate engines hold a run's beforeStart in: begun with start, awaited before the process starts.

/** A promise the test settles. */
function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void } {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Whether `p` has settled once the queued callbacks have run. */
async function isSettled(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((r) => setImmediate(r));
  return settled;
}

describe('StartGate', () => {
  it('begins beforeStart at once and passes only once it has resolved', async () => {
    const d = deferred();
    let calls = 0;
    const gate = new StartGate(() => {
      calls += 1;
      return d.promise;
    });
    const passed = gate.passed();
    await new Promise((r) => setImmediate(r));
    expect(calls).toBe(1);
    expect(await isSettled(passed)).toBe(false);
    d.resolve();
    await expect(passed).resolves.toBeUndefined();
    expect(calls).toBe(1);
  });

  it('passes at once without a beforeStart', async () => {
    await expect(new StartGate(undefined).passed()).resolves.toBeUndefined();
  });

  it("rejects passed() with beforeStart's own error, also when it throws before returning a promise", async () => {
    const err = new Error('broker could not listen');
    await expect(new StartGate(() => Promise.reject(err)).passed()).rejects.toBe(err);
    await expect(
      new StartGate(() => {
        throw err;
      }).passed(),
    ).rejects.toBe(err);
  });

  it('settles only once beforeStart has ended, and never rejects', async () => {
    const d = deferred();
    const gate = new StartGate(() => d.promise);
    const settled = gate.settled();
    expect(await isSettled(settled)).toBe(false);
    d.reject(new Error('late failure'));
    await expect(settled).resolves.toBeUndefined();
  });

  it('holds a failure nobody awaits instead of reporting it unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      new StartGate(() => Promise.reject(new Error('never awaited')));
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });
});
