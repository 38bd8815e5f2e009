// The seed's measures of a run, derived from the gateway's record of its model calls: the same for
// every CLI, since only the provider's answer (a tool_use block, a function call) decides a tool call.
import { describe, expect, it } from 'vitest';
import { DailyLedger } from '../../../src/gateway/ledger.js';
import { runMeasures } from '../../../src/gateway/measures.js';
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
  const t = session.totals;
  return runMeasures(
    {
      calls: t.calls,
      tokens: t.tokens,
      ...(t.firstCallAt ? { firstCallAt: t.firstCallAt.toISOString() } : {}),
      ...(t.firstToolAt ? { firstToolCallAt: t.firstToolAt.toISOString() } : {}),
      ...(t.lastEndAt ? { lastCallEndAt: t.lastEndAt.toISOString() } : {}),
    },
    START,
  );
}

describe('the measures of a run, from its model calls', () => {
  it('first model call, first investigation turn (the end of the first answer asking for a tool), last call, input tokens', async () => {
    expect(
      await measured([
        // A refused call is no model call; a failed answer asking for a tool is no turn.
        call(500, 0, { status: 400, refused: 'budget.max_model_calls' }),
        call(1200, 800),
        call(2500, 300, { status: 529, toolUse: true }),
        call(3000, 4000, { toolUse: true }),
        call(9000, 1500, { toolUse: true }),
        call(11_000, 2000),
      ]),
    ).toEqual({
      firstModelCallMs: 1200,
      firstToolCallMs: 7000,
      investigationMs: 13_000,
      inputTokens: 5000,
      modelCalls: 5,
    });
  });

  it('a run whose model never asked for a tool has no first turn; one without calls has no measures', async () => {
    expect(await measured([call(100, 50)])).toEqual({
      firstModelCallMs: 100,
      investigationMs: 150,
      inputTokens: 1000,
      modelCalls: 1,
    });
    expect(await measured([])).toBeUndefined();
  });
});
