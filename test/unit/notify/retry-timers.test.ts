import { mkdtemp, rm } from 'node:fs/promises';
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

/** Turns the event loop (real setImmediate) until `check` gives a value: lets real file I/O complete. */
async function settled<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 5000; i++) {
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

/** The failed first attempt recorded with its next attempt time; ms from now until then. */
async function recordedRetry(dir: string): Promise<number> {
  const entry = await settled('the failed attempt to be recorded with its retry', async () => {
    const e = await hookEntry(dir);
    return e?.nextAttemptAt && requests.length === 1 ? e : undefined;
  });
  expect(entry.status).toBe('pending');
  return Date.parse(entry.nextAttemptAt!) - Date.now();
}

/** Advances the fake clock by `ms`, then lets whatever that started finish its file I/O. */
async function advance(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  for (let i = 0; i < 200; i++) await new Promise((r) => setImmediate(r));
}

describe('notifier retry schedule (fake timers)', () => {
  it("waits out a 429's Retry-After in full, past the retry cap", async () => {
    const dir = await start([new Response('slow down', { status: 429, headers: { 'retry-after': '120' } })]);
    expect(await recordedRetry(dir)).toBe(120_000);
    await advance(119_999);
    expect(requests).toHaveLength(1);
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
      return e?.status === 'failed' ? e : undefined;
    });
    expect(entry.lastError).toMatchObject({ kind: 'permanent', status: 422 });
    await advance(24 * 3600_000);
    expect(requests).toHaveLength(1);
  });
});
