// The seed's measures of a run, derived from the gateway's record of its model calls: the same for
// every CLI, since only the provider's answer (a tool_use block, a function call) decides a tool call.
import { describe, expect, it } from 'vitest';
import { DailyLedger } from '../../../src/gateway/ledger.js';
import { runMeasures } from '../../../src/gateway/measures.js';
import { callFigures } from '../../../src/gateway/run.js';
import { RunSession } from '../../../src/gateway/session.js';
import type { ModelCallRecord } from '../../../src/gateway/types.js';

const START = new Date('2026-11-26T10:00:00.000Z');
const call = (atMs: number, latencyMs: number, over: Partial<ModelCallRecord> = {}): ModelCallRecord => ({
  at: new Date(START.getTime() + atMs).toISOString(),
  provider: 'anthropic',
  method: 'POST',
  path: '/v1/messages',
  status: 200,
  stream: true,
  latencyMs,
  tokens: { input: 1000, output: 50, cacheRead: 0, cacheWrite: 0 },
  retries: 0,
  ...over,
});

async function measured(calls: ModelCallRecord[]) {
  const session = new RunSession({
    runId: 'run',
    token: 'trg-x',
    provider: 'anthropic',
    caps: {},
    ledger: new DailyLedger(() => START),
    hooks: { onCall: () => Promise.resolve() },
  });
  for (const c of calls) await session.record(c, new Date(c.at));
  return runMeasures(callFigures(session.totals), START);
}

describe('the measures of a run, from its model calls', () => {
  it('first model call and its first token, first investigation turn (the end of the first answer asking for a tool), last call, tokens', async () => {
    expect(
      await measured([
        // A refused call is no model call; a failed answer asking for a tool is no turn.
        call(500, 0, { status: 400, refused: 'budget.max_model_calls' }),
        call(1200, 800, { ttfbMs: 450, model: 'claude-sonnet-5-5' }),
        call(2500, 300, { status: 529, toolUse: true }),
        call(3000, 4000, { toolUse: true }),
        call(9000, 1500, { toolUse: true }),
        call(11_000, 2000),
      ]),
    ).toEqual({
      firstModelCallMs: 1200,
      firstTokenMs: 1650,
      firstToolCallMs: 7000,
      investigationMs: 13_000,
      firstCallInputTokens: 1000,
      inputTokens: 5000,
      outputTokens: 250,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      cacheReadShare: 0,
      modelCalls: 5,
      model: 'claude-sonnet-5-5',
    });
  });

  it('a run whose model never asked for a tool has no first turn; one without calls has no measures', async () => {
    expect(await measured([call(100, 50)])).toEqual({
      firstModelCallMs: 100,
      investigationMs: 150,
      firstCallInputTokens: 1000,
      inputTokens: 1000,
      outputTokens: 50,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      cacheReadShare: 0,
      modelCalls: 1,
    });
    expect(await measured([])).toBeUndefined();
  });

  it('takes the first call as the one that started first, whatever order parallel calls end in', async () => {
    const late = call(2000, 100, { tokens: { input: 300, output: 5, cacheRead: 0, cacheWrite: 0 } });
    const early = call(1000, 5000, {
      ttfbMs: 900,
      tokens: { input: 9000, output: 40, cacheRead: 6000, cacheWrite: 3000 },
    });
    expect(await measured([late, early])).toMatchObject({
      firstModelCallMs: 1000,
      firstTokenMs: 1900,
      firstCallInputTokens: 9000,
    });
  });

  it('says how much of the input the prompt cache served, and the model that took the most input', async () => {
    const m = await measured([
      call(0, 100, {
        model: 'claude-haiku-5',
        tokens: { input: 400, output: 10, cacheRead: 0, cacheWrite: 0 },
      }),
      call(200, 900, {
        model: 'claude-sonnet-5-5',
        tokens: { input: 9000, output: 100, cacheRead: 0, cacheWrite: 9000 },
      }),
      call(1500, 900, {
        model: 'claude-sonnet-5-5',
        tokens: { input: 9600, output: 100, cacheRead: 9000, cacheWrite: 600 },
      }),
    ]);
    expect(m).toMatchObject({
      inputTokens: 19_000,
      cacheReadTokens: 9000,
      cacheWriteTokens: 9600,
      cacheReadShare: 0.474,
      model: 'claude-sonnet-5-5',
      firstCallInputTokens: 400,
    });
  });
});
