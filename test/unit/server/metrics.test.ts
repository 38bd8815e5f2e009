// /metrics says what runs' model calls cost: tokens by kind and model, calls, and each run's first
// call (its input tokens, the time to it and to its first token).
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/server/metrics.js';

describe("/metrics: runs' model calls", () => {
  it('counts tokens by kind and model and calls, and observes each first call', async () => {
    const metrics = createMetrics();
    const run = {
      model: 'claude-sonnet-5-5',
      calls: 5,
      input: 51_000,
      output: 800,
      cacheRead: 39_100,
      cacheWrite: 11_900,
      firstCallInputTokens: 9637,
      firstModelCallMs: 4200,
      firstTokenMs: 4950,
    };
    metrics.modelUsage?.(run);
    metrics.modelUsage?.({
      ...run,
      firstCallInputTokens: 10_363,
      firstModelCallMs: 3800,
      firstTokenMs: 4100,
    });
    const text = await metrics.render();
    for (const [kind, n] of [
      ['input', 102_000],
      ['output', 1600],
      ['cache_read', 78_200],
      ['cache_write', 23_800],
    ] as const) {
      expect(text).toContain(
        `triage_runner_model_tokens_total{kind="${kind}",model="claude-sonnet-5-5"} ${n}\n`,
      );
    }
    expect(text).toContain('triage_runner_model_calls_total{model="claude-sonnet-5-5"} 10\n');
    expect(text).toContain('triage_runner_first_call_input_tokens_sum{model="claude-sonnet-5-5"} 20000\n');
    expect(text).toContain(
      'triage_runner_first_call_input_tokens_bucket{le="10000",model="claude-sonnet-5-5"} 1\n',
    );
    expect(text).toContain('triage_runner_time_to_first_model_call_seconds_sum 8\n');
    expect(text).toContain('triage_runner_time_to_first_token_seconds_count 2\n');
  });
});
