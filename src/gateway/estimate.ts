import type { Price } from './prices.js';
import type { Estimate } from './types.js';

// What a call may spend before its answer says: held against the run's caps (and the day's) while the
// call is under way, so that calls made in parallel cannot all pass a cap that only finished calls
// count against. It is replaced by the provider's usage once the answer ends.
//
// - Input: the request body's bytes / 4 (the chars4 rule the context budget also offers). A model
//   request is JSON text; its token count is close to that, a little over for prose, under for dense
//   logs. The provider's usage settles the difference.
// - Output: what the request itself allows (`max_tokens` and its kin), at most
//   `budget.reserve_output_tokens`: Claude Code asks for up to 128,000 on every call and answers a few
//   hundred, so the declared figure alone would make two calls in flight look like a spent budget.
// - USD: those tokens at the model's list price (input at the uncached rate); a model without a price
//   costs nothing, as in the record. Before the body is read the model is not known (except from
//   Gemini's path): the dearest price in the table stands in until it is.

export interface EstimateInput {
  /** The request body's size (its content-length before it is read). */
  bodyBytes: number;
  /** The request's own output limit, if it names one. */
  maxOutput?: number;
  /** The most output tokens a call is assumed to produce. */
  reserveOutput: number;
  price: Price | undefined;
}

export function estimateCall(input: EstimateInput): Estimate {
  const inputTokens = Math.ceil(Math.max(0, input.bodyBytes) / 4);
  const output = Math.min(input.maxOutput ?? input.reserveOutput, input.reserveOutput);
  const tokens = inputTokens + output;
  const { price } = input;
  const usd = price ? (inputTokens * price.input + output * price.output) / 1e6 : 0;
  return { tokens, usd };
}

/** The table's dearest price (input and output each at their highest): the stand-in for a model not yet known. */
export function dearestPrice(table: Readonly<Record<string, Price>>): Price | undefined {
  const prices = Object.values(table);
  if (prices.length === 0) return undefined;
  return {
    input: Math.max(...prices.map((p) => p.input)),
    output: Math.max(...prices.map((p) => p.output)),
  };
}
