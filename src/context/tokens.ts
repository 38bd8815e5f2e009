import { sharedTokenWorker } from './token-pool.js';

// Token estimators. `o200k` is a real BPE (gpt-tokenizer's o200k_base), counted off the event loop in
// a worker thread with a cost linear in the text (see token-count.ts); `chars4` is the
// characters / 4 rule. Both are multiplied by the agent's safety factor for models whose tokenizers count more.

export type EstimatorName = 'o200k' | 'chars4';

/** Raw counts of many texts, in order (one round trip to the worker for o200k). */
export type RawCounter = (texts: readonly string[]) => Promise<number[]>;

/** chars/4, rounded up. */
export const chars4 = (text: string): number => Math.ceil(text.length / 4);

/** Applies the safety factor, rounding up (with a tolerance so 100 × 1.1 is 110, not 111). */
export function scaleTokens(raw: number, factor: number): number {
  return Math.max(0, Math.ceil(raw * factor - 1e-9));
}

/** A counter bound to one estimator and safety factor: what the budget is measured in. */
export interface TokenCounter {
  estimator: EstimatorName;
  factor: number;
  /** Tokens of `text` after the safety factor. */
  count(text: string): Promise<number>;
  /** Tokens before the safety factor (for summing line by line). */
  raw(text: string): Promise<number>;
  /** Tokens before the safety factor of each text, in one request. */
  rawMany(texts: readonly string[]): Promise<number[]>;
  /** Applies this counter's safety factor to a raw count. */
  scale(raw: number): number;
}

/** `rawCounter` replaces the o200k worker (tests, benchmarks); chars4 never uses it. */
export function tokenCounter(estimator: EstimatorName, factor = 1, rawCounter?: RawCounter): TokenCounter {
  if (!(factor >= 1)) throw new RangeError(`safety factor must be >= 1, got ${factor}`);
  const many: RawCounter =
    estimator === 'chars4'
      ? (texts) => Promise.resolve(texts.map(chars4))
      : (rawCounter ?? ((texts) => sharedTokenWorker().count(texts)));
  const raw = async (text: string) => (text.length === 0 ? 0 : ((await many([text]))[0] ?? 0));
  return {
    estimator,
    factor,
    raw,
    rawMany: (texts) => many(texts),
    count: async (text) => scaleTokens(await raw(text), factor),
    scale: (n) => scaleTokens(n, factor),
  };
}
