import type { GatewaySummary } from './run.js';

// The seed's measures of one run, from what the gateway saw of its model calls: the same for every CLI.
// "Preload vs no-preload" compares these (the design promised the first investigation turn in 5-10 s
// instead of 30-45 s, and about 30% fewer input tokens).

export interface RunMeasures {
  /** From the run's start to its first model call. */
  firstModelCallMs?: number;
  /**
   * From the run's start to the end of the first answer that asks the agent to call a tool: the first
   * investigation turn after the preloaded context.
   */
  firstToolCallMs?: number;
  /** From the run's start to the end of its last model call. */
  investigationMs?: number;
  /** Input tokens over every model call (cached input included). */
  inputTokens: number;
  modelCalls: number;
}

/** The measures of a run that started at `startedAt`; undefined when no model call went through the gateway. */
export function runMeasures(
  summary: Pick<GatewaySummary, 'calls' | 'tokens' | 'firstCallAt' | 'firstToolCallAt' | 'lastCallEndAt'>,
  startedAt: Date,
): RunMeasures | undefined {
  if (summary.calls === 0) return undefined;
  const since = (at: string | undefined) =>
    at === undefined ? undefined : Math.max(0, Math.round(Date.parse(at) - startedAt.getTime()));
  const first = since(summary.firstCallAt);
  const tool = since(summary.firstToolCallAt);
  const total = since(summary.lastCallEndAt);
  return {
    ...(first !== undefined ? { firstModelCallMs: first } : {}),
    ...(tool !== undefined ? { firstToolCallMs: tool } : {}),
    ...(total !== undefined ? { investigationMs: total } : {}),
    inputTokens: summary.tokens.input,
    modelCalls: summary.calls,
  };
}
