import type { GatewaySummary } from './run.js';

// The seed's measures of one run, from what the gateway saw of its model calls: the same for every CLI.
// "Preload vs no-preload" compares these (the design promised the first investigation turn in 5-10 s
// instead of 30-45 s, and about 30% fewer input tokens), and they say what a run cost in tokens: its
// first call (the prompt the agent starts from, sent again with every turn) and how much of its input
// a provider's prompt cache served.

export interface RunMeasures {
  /** From the run's start to its first model call. */
  firstModelCallMs?: number;
  /** From the run's start to the first byte (the first token) of the first model call's answer. */
  firstTokenMs?: number;
  /**
   * From the run's start to the end of the first answer that asks the agent to call a tool: the first
   * investigation turn after the preloaded context.
   */
  firstToolCallMs?: number;
  /** From the run's start to the end of its last model call. */
  investigationMs?: number;
  /** Input tokens of the first model call. */
  firstCallInputTokens?: number;
  /** Input tokens over every model call (cached input included). */
  inputTokens: number;
  outputTokens: number;
  /** Of the input, what the provider's prompt cache served, and what it wrote to it. */
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** cacheReadTokens / inputTokens, to three decimals (0 without input). */
  cacheReadShare: number;
  modelCalls: number;
  /** The model that did the run's work (the one that took the most input tokens). */
  model?: string;
}

type Summary = Pick<
  GatewaySummary,
  | 'calls'
  | 'tokens'
  | 'firstCallAt'
  | 'firstTokenAt'
  | 'firstToolCallAt'
  | 'lastCallEndAt'
  | 'firstCallInputTokens'
  | 'model'
>;

/** The measures of a run that started at `startedAt`; undefined when no model call went through the gateway. */
export function runMeasures(summary: Summary, startedAt: Date): RunMeasures | undefined {
  if (summary.calls === 0) return undefined;
  const since = (at: string | undefined) =>
    at === undefined ? undefined : Math.max(0, Math.round(Date.parse(at) - startedAt.getTime()));
  const times = {
    firstModelCallMs: since(summary.firstCallAt),
    firstTokenMs: since(summary.firstTokenAt),
    firstToolCallMs: since(summary.firstToolCallAt),
    investigationMs: since(summary.lastCallEndAt),
  };
  const { input, output, cacheRead, cacheWrite } = summary.tokens;
  return {
    ...Object.fromEntries(Object.entries(times).filter(([, v]) => v !== undefined)),
    ...(summary.firstCallInputTokens !== undefined
      ? { firstCallInputTokens: summary.firstCallInputTokens }
      : {}),
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    cacheReadShare: input > 0 ? Math.round((cacheRead / input) * 1000) / 1000 : 0,
    modelCalls: summary.calls,
    ...(summary.model !== undefined ? { model: summary.model } : {}),
  };
}
