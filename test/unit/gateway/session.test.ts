import { describe, expect, it } from 'vitest';
import {
  capMessage,
  DailyLedger,
  RunSession,
  type Admission,
  type Refusal,
} from '../../../src/gateway/session.js';
import type { Caps, Estimate } from '../../../src/gateway/types.js';
import { modelCall } from '../../support/gateway/calls.js';

const call = modelCall;

function session(
  caps: Caps,
  ledger = new DailyLedger(() => new Date('2026-11-26T10:00:00Z')),
  maxCallsInFlight?: number,
) {
  const caught: string[] = [];
  const s = new RunSession({
    runId: 'run-1',
    token: 'trg-x',
    provider: 'anthropic',
    caps,
    ledger,
    hooks: { onCall: () => Promise.resolve(), onCap: (c) => void caught.push(c.cap) },
    ...(maxCallsInFlight !== undefined ? { maxCallsInFlight } : {}),
  });
  return { s, caught };
}

const NOTHING: Estimate = { tokens: 0, usd: 0 };

/** The admission, or fails the test with the refusal. */
function admitted(s: RunSession, estimate: Estimate = NOTHING): Admission {
  const result = s.admit(estimate);
  if ('refused' in result) throw new Error(`refused: ${result.refused.message}`);
  return result.admitted;
}

function refused(s: RunSession, estimate: Estimate = NOTHING): Refusal {
  const result = s.admit(estimate);
  if ('admitted' in result) throw new Error('admitted');
  return result.refused;
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

  it('counts each call under way against budget.max_model_calls: the next is refused for now (429) while they run, and for good (400) once they were counted', async () => {
    const { s, caught } = session({ maxModelCalls: 3 });
    const under = [admitted(s), admitted(s), admitted(s)];
    expect(refused(s)).toMatchObject({ reason: 'budget.max_model_calls', status: 429 });
    expect(refused(s).message).toContain('the run used 0 and its 3 model calls under way may use 3 more');
    // Refused for now, not reached: the run is not failed by calls that may still end under the cap.
    expect(s.capReached).toBeUndefined();
    for (const a of under) await s.record(call(1, 1), new Date(), a);
    expect(s.callsInFlight).toBe(0);
    expect(refused(s)).toMatchObject({ reason: 'budget.max_model_calls', status: 400 });
    expect(s.capReached).toEqual({ cap: 'budget.max_model_calls', limit: 3, used: 3 });
    expect(caught).toEqual(['budget.max_model_calls']);
  });

  it("holds a call's estimate against budget.max_tokens while it runs, then counts its usage instead", async () => {
    const { s } = session({ maxTokens: 1000 });
    const first = admitted(s, { tokens: 600, usd: 0 });
    first.update({ tokens: 900, usd: 0 });
    const second = admitted(s, { tokens: 50, usd: 0 });
    // 0 used + 950 held: a third still fits, a fourth does not.
    const third = admitted(s, { tokens: 50, usd: 0 });
    expect(refused(s)).toMatchObject({ reason: 'budget.max_tokens', status: 429 });
    // The first ends far under its estimate: what it held is given back, its usage counted.
    await s.record(call(100, 10), new Date(), first);
    expect(s.totals.tokens).toMatchObject({ input: 100, output: 10 });
    third.release();
    third.release();
    expect(s.callsInFlight).toBe(1);
    admitted(s).release();
    second.release();
    expect(s.callsInFlight).toBe(0);
  });

  it('holds estimated dollars against budget.max_usd and, across runs, budget.daily_usd', () => {
    const ledger = new DailyLedger(() => new Date('2026-11-26T10:00:00Z'));
    const a = session({ maxUsd: 1, dailyUsd: 2 }, ledger).s;
    const b = session({ dailyUsd: 2 }, ledger).s;
    const big = admitted(a, { tokens: 10, usd: 1.5 });
    expect(refused(a)).toMatchObject({ reason: 'budget.max_usd', status: 429 });
    // b spent nothing, but a's call under way holds $1.50 of the day's $2: b's $0.60 call goes, the next waits.
    const small = admitted(b, { tokens: 10, usd: 0.6 });
    const waits = refused(b);
    expect(waits).toMatchObject({ reason: 'budget.daily_usd', status: 429 });
    expect(waits.message).toContain("today's runs used $0.0000 and calls under way may use $2.1000 more");
    big.release();
    small.release();
    expect(ledger.held()).toBe(0);
    admitted(b).release();
  });

  it('takes at most gateway.max_calls_in_flight calls at once, and the next once one ends', async () => {
    const { s } = session({}, undefined, 2);
    const a = admitted(s);
    admitted(s);
    expect(refused(s)).toMatchObject({ reason: 'gateway.max_calls_in_flight', status: 429 });
    await s.record(call(1, 1), new Date(), a);
    admitted(s);
  });
});
