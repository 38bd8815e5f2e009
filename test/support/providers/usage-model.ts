// Token usage the scripted stand-ins report, so that what the gateway records of a run means
// something: every request counted in o200k tokens (the tokenizer the context budget uses), and a
// provider's prompt cache modelled as a prefix cache shared by every request the stand-in has seen.
// Providers cache the longest prefix of a request (tools, then system text, then messages) that an
// earlier request already sent, from a minimum length on and in fixed steps (OpenAI: 1,024 tokens,
// then steps of 128; Anthropic caches at its cache_control breakpoints, which Claude Code puts at the
// end of the system text and of the last message). The model: the longest common prefix, in
// characters, with any earlier request's prefix text, counted in tokens and rounded down to a step,
// none below the minimum. It is a model of the cache, not the cache: good for "what comes first is
// the same across runs", not for a provider's exact figures.
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { countBounded } from '../../../src/context/token-count.js';

const PLAIN = { disallowedSpecial: new Set<string>() };
const direct = (text: string): number => countTokens(text, PLAIN);

/** o200k tokens of `text` (bounded cost on long runs of one character). */
export const o200k = (text: string): number => countBounded(text, direct);

export interface MeasuredInput {
  /** Tokens of the whole request body. */
  input: number;
  /** Of those, tokens served from the modelled cache. */
  cacheRead: number;
}

export interface UsageModel {
  /** Measures one request: `body` as sent, `prefixText` its content in the provider's cache order. */
  measure(body: string, prefixText: string): MeasuredInput;
  /** Output tokens of an answer's text or tool call. */
  output(text: string): number;
}

const commonPrefix = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i += 1;
  return i;
};

/** A usage model with a prefix cache: `minTokens` before anything is cached, then steps of `step`. */
export function prefixCacheUsage(minTokens = 1024, step = 128): UsageModel {
  const seen: string[] = [];
  return {
    measure(body, prefixText) {
      let longest = 0;
      for (const earlier of seen) longest = Math.max(longest, commonPrefix(earlier, prefixText));
      seen.push(prefixText);
      const input = o200k(body);
      const cached = longest === 0 ? 0 : o200k(prefixText.slice(0, longest));
      const cacheRead = cached < minTokens ? 0 : Math.min(input, Math.floor(cached / step) * step);
      return { input, cacheRead };
    },
    output: (text) => Math.max(1, o200k(text)),
  };
}
