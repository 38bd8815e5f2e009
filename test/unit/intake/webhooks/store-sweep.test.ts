// The HTTP intake store's housekeeping: the periodic sweep on fake timers (only setInterval is faked;
// the store writes a real folder), and what a sweep expires by the store's injected clock: a delivery
// key seen again lives another idempotency_ttl, a storm record goes once untouched for twice the
// window plus a minute.
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { configSchema } from '../../../../src/config/schema.js';
import { mapAlertmanager } from '../../../../src/intake/webhooks/alertmanager.js';
import { readOnlyHooks } from '../../../../src/intake/webhooks/hooks.js';
import { IntakeStore } from '../../../../src/intake/webhooks/store.js';
import { silentLogger, type Logger } from '../../../../src/log/logger.js';
import { groupingOptions } from '../../../../src/server/routes/intake.js';
import { tempRoot } from '../../../support/incidents.js';
import { amAlert, amPayload } from '../../../support/webhooks/alerts.js';

const WINDOW = 600_000;
const grouping = groupingOptions(configSchema.parse({}));
const alerts = (list: ReturnType<typeof amAlert>[]) => mapAlertmanager(amPayload(list), grouping);

let root: string;
let cleanup: () => Promise<void>;
let stores: IntakeStore[];

function makeStore(options: { ttl: number; now?: () => number; sweepIntervalMs?: number; log?: Logger }) {
  const store = new IntakeStore({
    root,
    windowMs: WINDOW,
    idempotencyTtlMs: options.ttl,
    stormLimit: 3,
    maxAlertsPerIncident: 500,
    hooks: readOnlyHooks(),
    identity: { daemonId: 'store-a' },
    ...(options.now ? { now: options.now } : {}),
    ...(options.sweepIntervalMs !== undefined ? { sweepIntervalMs: options.sweepIntervalMs } : {}),
    ...(options.log ? { log: options.log } : {}),
  });
  stores.push(store);
  return store;
}

beforeEach(async () => {
  ({ root, cleanup } = await tempRoot('triage-intake-sweep-'));
  stores = [];
});
afterEach(async () => {
  for (const s of stores) s.close();
  vi.useRealTimers();
  await cleanup();
});

describe('intake store: the periodic sweep', () => {
  beforeEach(() => void vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] }));

  it('sweeps every quarter of idempotency_ttl, at most every 10 minutes and at least every second', () => {
    for (const [ttl, every] of [
      [86_400_000, 600_000],
      [400_000, 100_000],
      [2_000, 1_000],
    ] as const) {
      const store = makeStore({ ttl });
      const sweeps = vi.spyOn(store, 'sweep').mockResolvedValue({ keys: 0, storms: 0, tmp: 0 });
      vi.advanceTimersByTime(every - 1);
      expect(sweeps, `ttl ${ttl}`).not.toHaveBeenCalled();
      vi.advanceTimersByTime(1);
      expect(sweeps, `ttl ${ttl}`).toHaveBeenCalledTimes(1);
      store.close();
    }
  });

  it('sweeps only on demand with sweepIntervalMs 0, and not after close()', () => {
    makeStore({ ttl: 86_400_000, sweepIntervalMs: 0 });
    expect(vi.getTimerCount()).toBe(0);
    const store = makeStore({ ttl: 86_400_000, sweepIntervalMs: 5_000 });
    const sweeps = vi.spyOn(store, 'sweep').mockResolvedValue({ keys: 0, storms: 0, tmp: 0 });
    vi.advanceTimersByTime(5_000);
    expect(sweeps).toHaveBeenCalledTimes(1);
    store.close();
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(50_000);
    expect(sweeps).toHaveBeenCalledTimes(1);
  });

  it('logs a sweep that fails and keeps sweeping', async () => {
    const log = silentLogger();
    const warn = vi.spyOn(log, 'warn');
    const store = makeStore({ ttl: 86_400_000, sweepIntervalMs: 5_000, log });
    const sweeps = vi.spyOn(store, 'sweep').mockRejectedValue(new Error('EIO: the disk went away'));
    vi.advanceTimersByTime(5_000);
    await vi.waitFor(() =>
      expect(warn).toHaveBeenCalledWith({ err: 'EIO: the disk went away' }, 'intake sweep failed'),
    );
    vi.advanceTimersByTime(5_000);
    expect(sweeps).toHaveBeenCalledTimes(2);
  });
});

describe('intake store: what a sweep expires (injected clock)', () => {
  // Files are written at real time; the clock starts there, so only the store's clock moves after.
  let now: number;
  beforeEach(() => void (now = Date.now()));

  it('a delivery key seen again lives another idempotency_ttl from then', async () => {
    const store = makeStore({ ttl: 10_000, now: () => now, sweepIntervalMs: 0 });
    const alert = amAlert({ pod: 'again' });
    expect((await store.submitAlerts(alerts([alert])))[0]?.status).toBe('created');
    now += 8_000;
    expect((await store.submitAlerts(alerts([alert])))[0]?.status).toBe('duplicate');
    now += 9_000; // 17 s after the first delivery, 9 s after the second
    expect((await store.sweep()).keys).toBe(0);
    now += 1_001; // 10.001 s after the second
    expect((await store.sweep()).keys).toBe(1);
    expect(await readdir(store.paths.keys)).toEqual([]);
  });

  it('a storm record is kept for twice the window plus a minute after its last alert, then removed', async () => {
    const store = makeStore({ ttl: 86_400_000, now: () => now, sweepIntervalMs: 0 });
    await store.submitAlerts(alerts([amAlert({ pod: 'storm' })]));
    const [record] = await readdir(store.paths.storms);
    expect(record).toBeDefined();
    // The record's age counts from its modification time, which the kernel's coarse clock may put a
    // few milliseconds before the Date.now() the store's clock started at: count from it exactly.
    now = (await stat(path.join(store.paths.storms, record!))).mtimeMs;
    now += 2 * WINDOW + 60_000;
    expect((await store.sweep()).storms).toBe(0);
    now += 1_000;
    expect((await store.sweep()).storms).toBe(1);
    expect(await readdir(store.paths.storms)).toEqual([]);
  });
});
