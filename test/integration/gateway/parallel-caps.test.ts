// Spend caps against calls made in parallel, over real HTTP: a provider stand-in holds every answer
// until released, so the calls that got through are all under way at once. A call under way counts
// against every cap (a place against budget.max_model_calls, its estimate against the token and dollar
// caps, the day's across runs); the rest are refused before they reach the provider, and the record
// says how many were made and how many refused.
import { describe, expect, it, vi } from 'vitest';
import type { RunGateway } from '../../../src/gateway/run.js';
import type { Caps } from '../../../src/gateway/types.js';
import { useHeldGateway, type GatewayHarness, type HeldProvider } from '../../support/gateway/harness.js';

const fixture = useHeldGateway('triage-gateway-caps-');
let provider: HeldProvider;
let h: GatewayHarness;

/** Each call asks for 1,000 output tokens; the reserve holds 500 of them. */
const BODY = JSON.stringify({
  model: 'claude-sonnet-4-5',
  max_tokens: 1000,
  messages: [{ role: 'user', content: 'hi' }],
});

async function gatewayWith(caps: Caps): Promise<void> {
  ({ h, provider } = await fixture.start(
    { caps, limits: { reserveOutputTokens: 500, maxCallsInFlight: 100 } },
    true,
  ));
}

const post = (run: RunGateway) =>
  fetch(`${run.providers.anthropicBaseUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': run.session.token, 'content-type': 'application/json' },
    body: BODY,
  }).then(async (res) => ({ status: res.status, body: await res.text() }));

/**
 * Sends `n` calls from each run at once; waits until every call but those that reached the provider
 * was answered, then lets the provider answer. Statuses in sending order, per run.
 */
async function burst(runs: RunGateway[], n: number, through: number): Promise<number[][]> {
  const answered: { status: number; body: string }[] = [];
  const pending = runs.map((run) =>
    Promise.all(
      Array.from({ length: n }, () =>
        post(run).then((a) => {
          answered.push(a);
          return a;
        }),
      ),
    ),
  );
  await vi.waitFor(() => {
    expect(provider.received).toHaveLength(through);
    expect(answered).toHaveLength(n * runs.length - through);
  });
  provider.release();
  const all = await Promise.all(pending);
  return all.map((answers) => answers.map((a) => a.status));
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

describe('spend caps against parallel calls', () => {
  it('budget.max_model_calls 3: of 30 parallel calls 3 reach the provider, 27 are refused and recorded, and result says 3 made', async () => {
    await gatewayWith({ maxModelCalls: 3 });
    const run = await h.open();
    const [statuses = []] = await burst([run], 30, 3);
    expect(count(statuses, 200)).toBe(3);
    // Refused for now while the three were under way: they might have failed and not counted.
    expect(count(statuses, 429)).toBe(27);
    // Once they were counted the cap is spent: refused for good.
    expect((await post(run)).status).toBe(400);
    await run.stop();
    expect(run.summary()).toMatchObject({
      calls: 3,
      refused: 28,
      capReached: { cap: 'budget.max_model_calls', limit: 3, used: 3 },
    });
    const records = await h.calls(run);
    expect(records.filter((r) => r.refused === undefined)).toHaveLength(3);
    expect(records.filter((r) => r.refused === 'budget.max_model_calls')).toHaveLength(28);
  });

  it("budget.max_tokens: calls under way hold their estimate (body/4 in, the reserve out), so only what fits goes; the provider's usage then settles it", async () => {
    // Each call: ~24 tokens of body + 500 held out. Three fit under 1,200; the fourth sees 1,200+ held.
    await gatewayWith({ maxTokens: 1200 });
    const run = await h.open();
    const [statuses = []] = await burst([run], 30, 3);
    expect(count(statuses, 200)).toBe(3);
    expect(count(statuses, 429)).toBe(27);
    await run.stop();
    // 3 calls of 110 tokens each were really used: the cap is not reached, the run may go on.
    expect(run.summary()).toMatchObject({ calls: 3, refused: 27, tokens: { input: 300, output: 30 } });
    expect(run.summary().capReached).toBeUndefined();
  });

  it('budget.max_usd: a call under way holds its estimated cost', async () => {
    // $0.005: a call's estimate is ~$0.0076 at sonnet's prices once its body is read (and the dearest
    // price's ~$0.038 before, the model not known yet): with one under way, the next waits.
    await gatewayWith({ maxUsd: 0.005 });
    const run = await h.open();
    const [statuses = []] = await burst([run], 30, 1);
    expect(count(statuses, 200)).toBe(1);
    const waits = (await h.calls(run)).filter((r) => r.refused);
    expect(waits.every((r) => r.refused === 'budget.max_usd' && r.status === 429)).toBe(true);
  });

  it("budget.daily_usd: one run's calls under way hold the day's budget against another run's", async () => {
    await gatewayWith({ dailyUsd: 0.005 });
    const a = await h.open();
    const b = await h.open();
    const [fromA = [], fromB = []] = await burst([a, b], 15, 1);
    expect(count([...fromA, ...fromB], 200)).toBe(1);
    await Promise.all([a.stop(), b.stop()]);
    const refused = [...(await h.calls(a)), ...(await h.calls(b))].filter((r) => r.refused);
    expect(refused).toHaveLength(29);
    expect(refused.every((r) => r.refused === 'budget.daily_usd' && r.status === 429)).toBe(true);
    expect(a.summary().refused + b.summary().refused).toBe(29);
  });
});
