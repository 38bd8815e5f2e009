import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';

// Token estimators. `o200k` is a real BPE (gpt-tokenizer's o200k_base); `chars4` is the seed's
// chars/4 rule. Both are multiplied by the agent's safety factor for models whose tokenizers count more.

export type EstimatorName = 'o200k' | 'chars4';

/** Special-token text such as `<|endoftext|>` in content is ordinary text, never a control token. */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** Raw token count of `text`, before the safety factor. */
export function rawTokens(text: string, estimator: EstimatorName): number {
  if (text.length === 0) return 0;
  if (estimator === 'chars4') return Math.ceil(text.length / 4);
  return countTokens(text, PLAIN_TEXT);
}

/** Applies the safety factor, rounding up (with a tolerance so 100 × 1.1 is 110, not 111). */
export function scaleTokens(raw: number, factor: number): number {
  return Math.max(0, Math.ceil(raw * factor - 1e-9));
}

/** A counter bound to one estimator and safety factor: what the budget is measured in. */
export interface TokenCounter {
  estimator: EstimatorName;
  factor: number;
  /** Tokens of `text` after the safety factor. */
  count(text: string): number;
  /** Tokens before the safety factor (for summing line by line). */
  raw(text: string): number;
}

export function tokenCounter(estimator: EstimatorName, factor = 1): TokenCounter {
  if (!(factor >= 1)) throw new RangeError(`safety factor must be >= 1, got ${factor}`);
  return {
    estimator,
    factor,
    raw: (text) => rawTokens(text, estimator),
    count: (text) => scaleTokens(rawTokens(text, estimator), factor),
  };
}
