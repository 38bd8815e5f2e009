// budget.daily_usd across a restart: the day's spend is kept in a file, read back by the next daemon,
// and counts as nothing once the UTC day has turned. The clock is faked (Date only: the file I/O is real).
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DailyLedger } from '../../../src/gateway/ledger.js';
import { RunSession } from '../../../src/gateway/session.js';
import type { ModelCallRecord } from '../../../src/gateway/types.js';
import { tempDir } from '../../support/runs.js';

let dir: { dir: string; cleanup: () => Promise<void> };
let file: string;
beforeEach(async () => {
  vi.useFakeTimers({ toFake: ['Date'] });
  dir = await tempDir('triage-ledger-');
  file = path.join(dir.dir, '.triage', 'model-spend.json');
});
afterEach(async () => {
  vi.useRealTimers();
  await dir.cleanup();
});

const now = () => new Date();
const paid = (costUsd: number): ModelCallRecord => ({
  at: new Date().toISOString(),
  provider: 'anthropic',
  method: 'POST',
  path: '/v1/messages',
  status: 200,
  stream: false,
  latencyMs: 1,
  tokens: { input: 10, output: 1, cacheRead: 0, cacheWrite: 0 },
  costUsd,
  retries: 0,
});
const sessionOn = (ledger: DailyLedger, dailyUsd: number) =>
  new RunSession({
    runId: 'run',
    token: 'trg-x',
    provider: 'anthropic',
    caps: { dailyUsd },
    ledger,
    hooks: { onCall: () => Promise.resolve() },
  });

describe("the day's model spend (budget.daily_usd)", () => {
  it('is read back by a restarted daemon mid-day, so the cap still holds', async () => {
    vi.setSystemTime(new Date('2026-11-26T10:00:00Z'));
    const before = new DailyLedger(now, { file });
    await before.ready();
    const run = sessionOn(before, 1);
    await run.record(paid(0.25), now());
    await run.record(paid(0.5), now());
    await before.flush();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ day: '2026-11-26', usd: 0.75 });

    vi.setSystemTime(new Date('2026-11-26T18:00:00Z'));
    const after = new DailyLedger(now, { file });
    await after.ready();
    expect(after.spent()).toBe(0.75);
    const next = sessionOn(after, 0.75);
    expect(next.refusal()).toEqual({ cap: 'budget.daily_usd', limit: 0.75, used: 0.75 });
    // Without the file (the old behaviour) a restart started the day at 0 and let the call go.
    expect(sessionOn(new DailyLedger(now), 0.75).refusal()).toBeUndefined();
  });

  it('starts again at 0 when the UTC day turns, in a running daemon and in one started the next day', async () => {
    vi.setSystemTime(new Date('2026-11-26T23:59:59Z'));
    const ledger = new DailyLedger(now, { file });
    await ledger.ready();
    ledger.add(2);
    await ledger.flush();
    expect(ledger.spent()).toBe(2);
    // 19:00 in New York is already the next day in UTC: the boundary is UTC midnight.
    vi.setSystemTime(new Date('2026-11-26T19:00:01-05:00'));
    expect(ledger.spent()).toBe(0);
    const restarted = new DailyLedger(now, { file });
    await restarted.ready();
    expect(restarted.spent()).toBe(0);
    restarted.add(0.5);
    await restarted.flush();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ day: '2026-11-27', usd: 0.5 });
  });

  it("does not count an adopted run's earlier calls twice: they are in the file already", async () => {
    vi.setSystemTime(new Date('2026-11-26T10:00:00Z'));
    const first = new DailyLedger(now, { file });
    await first.ready();
    const call = paid(0.4);
    await sessionOn(first, 10).record(call, now());
    await first.flush();
    const second = new DailyLedger(now, { file });
    await second.ready();
    sessionOn(second, 10).restore(call);
    expect(second.spent()).toBeCloseTo(0.4);
    // In memory only, the restored call is all the new daemon knows of the day.
    const memory = new DailyLedger(now);
    sessionOn(memory, 10).restore(call);
    expect(memory.spent()).toBeCloseTo(0.4);
  });

  it('names a spend file it cannot read, starts the day at 0 and writes a good one with the next call', async () => {
    vi.setSystemTime(new Date('2026-11-26T10:00:00Z'));
    const { mkdir } = await import('node:fs/promises');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '{"day":"2026-11-26","usd":"lots"}');
    const problems: string[] = [];
    const ledger = new DailyLedger(now, { file, onProblem: (m) => void problems.push(m) });
    await ledger.ready();
    expect(problems).toEqual([`${file} is not a day's spend ({"day","usd"}); the day's spend starts at 0`]);
    expect(ledger.spent()).toBe(0);
    ledger.add(0.1);
    await ledger.flush();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ day: '2026-11-26', usd: 0.1 });
  });
});
