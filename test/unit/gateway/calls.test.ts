import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModelCallLog, readModelCalls } from '../../../src/gateway/calls.js';
import { RunSession, DailyLedger } from '../../../src/gateway/session.js';
import type { ModelCallRecord } from '../../../src/gateway/types.js';
import { modelCall } from '../../support/gateway/calls.js';

// model-calls.jsonl read back (a daemon adopting a run after a restart): it sits in the run bundle,
// where a damaged or edited line must be skipped, never fail the restored totals or the result.

const call: ModelCallRecord = { ...modelCall(100, 20, 0.01), latencyMs: 12.5 };

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'triage-model-calls-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

describe('readModelCalls', () => {
  it('reads back what the log wrote, and skips lines the totals could not count', async () => {
    const file = path.join(dir, 'model-calls.jsonl');
    const log = await ModelCallLog.open(file);
    await log.append(call);
    await log.append({ ...call, status: 400, refused: 'budget.max_tokens', costUsd: undefined });
    await log.close();
    const written = await readModelCalls(file);
    expect(written).toHaveLength(2);
    const damaged = [
      { ...call, tokens: undefined },
      { ...call, tokens: { ...call.tokens, output: '20' } },
      { ...call, at: 'yesterday' },
      { ...call, latencyMs: -1 },
      { ...call, costUsd: Number.MAX_VALUE * 10 },
      { ...call, status: '200' },
      { ...call, refused: 1 },
      null,
      [call],
    ];
    await writeFile(file, [...written, ...damaged].map((v) => JSON.stringify(v)).join('\n') + '\n{"torn": ');
    const read = await readModelCalls(file);
    expect(read).toEqual(written);
    // What an adopting daemon does with them: restored into a session's totals without a throw.
    const session = new RunSession({
      runId: 'run-1',
      token: 'trg-x',
      provider: 'anthropic',
      caps: {},
      ledger: new DailyLedger(() => new Date(call.at)),
      hooks: { onCall: () => Promise.resolve() },
    });
    for (const r of read) session.restore(r);
    expect(session.totals).toMatchObject({ calls: 1, tokens: { input: 100, output: 20 } });
  });
});
