import type { Usage } from './types.js';

// What a model call cost, from list prices per million tokens. The built-in table covers the default
// models of each CLI; `gateway.prices` adds or overrides entries. A model matches the longest entry
// its id starts with (`claude-sonnet-4-5-20250929` → `claude-sonnet-4`).

export interface Price {
  /** USD per million input tokens (not cached). */
  input: number;
  output: number;
  cache_read?: number;
  cache_write?: number;
}

export const DEFAULT_PRICES: Readonly<Record<string, Price>> = {
  'claude-opus-4-5': { input: 5, output: 25, cache_read: 0.5, cache_write: 6.25 },
  'claude-opus-4': { input: 15, output: 75, cache_read: 1.5, cache_write: 18.75 },
  'claude-sonnet-4': { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
  'claude-haiku-4': { input: 1, output: 5, cache_read: 0.1, cache_write: 1.25 },
  'claude-3-5-haiku': { input: 0.8, output: 4, cache_read: 0.08, cache_write: 1 },
  'gpt-5-mini': { input: 0.25, output: 2, cache_read: 0.025 },
  'gpt-5': { input: 1.25, output: 10, cache_read: 0.125 },
  'gemini-2.5-pro': { input: 1.25, output: 10, cache_read: 0.31 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5, cache_read: 0.075 },
};

export function priceOf(
  model: string | undefined,
  table: Readonly<Record<string, Price>>,
): Price | undefined {
  if (!model) return undefined;
  const id = model.toLowerCase().replace(/^models\//, '');
  let best: string | undefined;
  for (const key of Object.keys(table))
    if (id.startsWith(key.toLowerCase()) && (!best || key.length > best.length)) best = key;
  return best === undefined ? undefined : table[best];
}

/** USD for one call's usage, or undefined for a model without a price. */
export function costOf(usage: Usage, price: Price | undefined): number | undefined {
  if (!price) return undefined;
  const plain = Math.max(0, usage.input - usage.cacheRead - usage.cacheWrite);
  const usd =
    plain * price.input +
    usage.cacheRead * (price.cache_read ?? price.input) +
    usage.cacheWrite * (price.cache_write ?? price.input) +
    usage.output * price.output;
  return Math.round((usd / 1e6) * 1e8) / 1e8;
}
