import { describe, expect, it } from 'vitest';
import { capMessage, DailyLedger, RunSession } from '../../../src/gateway/session.js';
import type { Caps } from '../../../src/gateway/types.js';
import { modelCall } from '../../support/gateway/calls.js';

const call = modelCall;

function session(caps: Caps, ledger = new DailyLedger(() => new Date('2026-11-26T10:00:00Z'))) {
  const caught: string[] = [];
  const s = new RunSession('run-1', 'trg-x', caps, ledger, {
    onCall: () => Promise.resolve(),
    onCap: (c) => void caught.push(c.cap),
  });
  return { s, caught };
}

describe('a run session at the gateway', () => {
  it('lets calls go under every cap and stops the next one once a call took the run over, reporting the cap once', async () => {
    const { s, caught } = session({ maxTokens: 100, maxModelCalls: 10 });
    expect(s.refusal()).toBeUndefined();
    await s.record(call(60, 10), new Date());
    expect(s.refusal()).toBeUndefined();
    await s.record(call(40, 5), new Date());
    expect(s.capReached).toEqual({ cap: 'budget.max_tokens', limit: 100, used: 115 });
    expect(s.refusal()?.cap).toBe('budget.max_tokens');
    expect(caught).toEqual(['budget.max_tokens']);
    expect(capMessage(s.capReached!)).toBe(
      'budget.max_tokens (100) reached: the run used 115; the model gateway refused further model calls',
    );
  });

  it('does not count refused calls as spend', async () => {
    const { s } = session({ maxModelCalls: 1 });
    await s.record({ ...call(0, 0), status: 400, refused: 'budget.max_model_calls' }, new Date());
    expect(s.totals.calls).toBe(0);
    expect(s.refusal()).toBeUndefined();
  });

  it('stops at budget.max_usd and names it in dollars', async () => {
    const { s } = session({ maxUsd: 0.01 });
    await s.record(call(1, 1, 0.012), new Date());
    expect(capMessage(s.capReached!)).toContain('budget.max_usd ($0.0100) reached: the run used $0.0120');
  });

  it('budget.daily_usd counts every run of the day and starts again the next UTC day', async () => {
    let now = new Date('2026-11-26T23:59:00Z');
    const ledger = new DailyLedger(() => now);
    const a = session({ dailyUsd: 1 }, ledger).s;
    await a.record(call(1, 1, 1.5), now);
    const b = session({ dailyUsd: 1 }, ledger).s;
    expect(b.refusal()?.cap).toBe('budget.daily_usd');
    now = new Date('2026-11-27T00:00:01Z');
    const c = session({ dailyUsd: 1 }, ledger).s;
    expect(c.refusal()).toBeUndefined();
  });
});
