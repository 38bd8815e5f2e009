import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { OutboxEntry } from '../../../src/notify/types.js';
import {
  buildNotifier,
  entriesBySink,
  finishedInput,
  finishedWorkspace,
  notifyConfig,
  type TestNotifier,
} from '../../support/notify.js';

// The notifier's retry schedule on fake timers and a fake clock: a failed delivery is attempted again
// when the outbox says (`nextAttemptAt`), not a millisecond before. The outbox and audit files are real;
// their I/O is let through by turning the event loop, never by waiting on time.

let root: string;
let built: TestNotifier | undefined;
/** The (fake) time of each request the webhook sink made. */
let requests: number[];

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'tr-notify-timers-'));
  requests = [];
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'Date'],
    now: Date.parse('2026-11-26T10:00:00Z'),
  });
});
afterEach(async () => {
  vi.useRealTimers();
  await built?.notifier.close();
  built = undefined;
  await rm(root, { recursive: true, force: true });
});

/**
 * Turns the event loop (real setImmediate) until `check` gives a value: lets real file I/O (fsync'd
 * outbox writes) complete. Bounded by the real clock (performance.now is not faked), not by a pause.
 */
async function settled<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = performance.now() + 20_000;
  while (performance.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`never happened: ${what}`);
}

/** Delivers a finished incident to one webhook sink whose receiver answers `answers` in turn, then 200. */
async function start(answers: Response[]): Promise<string> {
  const dir = await finishedWorkspace(root, 'ws');
  const { config, env } = notifyConfig({
    sinks: [{ name: 'hook', type: 'webhook', url: 'http://receiver.invalid/triage', secret: 'SIGNING' }],
    secrets: { SIGNING: 'signing-secret-1234567890' },
    retry: { base_delay: '10s', max_delay: '1m' },
  });
  const fetchFake = ((): Promise<Response> => {
    requests.push(Date.now());
    return Promise.resolve(answers.shift() ?? new Response('ok', { status: 200 }));
  }) as typeof fetch;
  // The audit trail is not what this tests (its lock waits on real time): a recording stand-in.
  const audited: string[] = [];
  const audit = {
    append: (_dir: string, event: { type: string }) => Promise.resolve(void audited.push(event.type)),
  };
  built = buildNotifier(config, env, { fetch: fetchFake, random: () => 0.5, audit });
  await built.notifier.incidentFinished(await finishedInput(dir, config));
  await vi.advanceTimersByTimeAsync(0);
  return dir;
}

const hookEntry = async (dir: string): Promise<OutboxEntry | undefined> => (await entriesBySink(dir)).hook;

/** No attempt holds the entry's lock: the last one has finished. */
const idle = async (dir: string): Promise<boolean> =>
  (await readdir(path.join(dir, '.triage', 'outbox'))).every((f) => !f.endsWith('.lock'));

/** The failed first attempt recorded with its next attempt time; ms from now until then. */
async function recordedRetry(dir: string): Promise<number> {
  const entry = await settled('the failed attempt to be recorded with its retry', async () => {
    const e = await hookEntry(dir);
    return e?.nextAttemptAt && requests.length === 1 && (await idle(dir)) ? e : undefined;
  });
  expect(entry.status).toBe('pending');
  return Date.parse(entry.nextAttemptAt!) - Date.now();
}

/** Advances the fake clock to just before the retry: its timer is still the one armed, no attempt ran. */
async function justBefore(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms - 1);
  expect(vi.getTimerCount()).toBe(1);
  expect(requests).toHaveLength(1);
}

describe('notifier retry schedule (fake timers)', () => {
  it('attempts a 503 again at the recorded time, not before, and records it delivered', async () => {
    const dir = await start([new Response('down', { status: 503 })]);
    const wait = await recordedRetry(dir);
    // Base 10 s, jitter between half and all of it.
    expect(wait).toBeGreaterThanOrEqual(5_000);
    expect(wait).toBeLessThanOrEqual(10_000);
    await justBefore(wait);
    await vi.advanceTimersByTimeAsync(1);
    const entry = await settled('the second attempt to be delivered', async () => {
      const e = await hookEntry(dir);
      return e?.status === 'delivered' ? e : undefined;
    });
    expect(entry.status).toBe('delivered');
    expect(requests).toHaveLength(2);
    expect(requests[1]! - requests[0]!).toBe(wait);
  });

  it("waits out a 429's Retry-After in full, past the retry cap", async () => {
    const dir = await start([new Response('slow down', { status: 429, headers: { 'retry-after': '120' } })]);
    expect(await recordedRetry(dir)).toBe(120_000);
    await justBefore(120_000);
    await vi.advanceTimersByTimeAsync(1);
    await settled('the attempt after Retry-After', async () =>
      (await hookEntry(dir))?.status === 'delivered' ? true : undefined,
    );
    expect(requests).toHaveLength(2);
  });

  it('never attempts a permanent failure again, however long the clock runs', async () => {
    const dir = await start([new Response('bad', { status: 422 })]);
    const entry = await settled('the permanent failure to be recorded', async () => {
      const e = await hookEntry(dir);
      return e?.status === 'failed' && (await idle(dir)) ? e : undefined;
    });
    expect(entry.lastError).toMatchObject({ kind: 'permanent', status: 422 });
    // Nothing is armed, so nothing can fire however long the clock runs.
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(24 * 3600_000);
    expect(requests).toHaveLength(1);
  });
});
