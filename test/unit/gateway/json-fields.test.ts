import { describe, expect, it } from 'vitest';
import { topLevelFields } from '../../../src/gateway/json-fields.js';
import { requestFacts } from '../../../src/gateway/providers.js';
import { seededRandom } from '../../support/random.js';

const WANTED = new Set(['model', 'max_tokens', 'generationConfig']);

/** What JSON.parse makes of the same members: the reference. */
function reference(text: string): Record<string, unknown> {
  const value = JSON.parse(text) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(value).filter(([k]) => WANTED.has(k)));
}

const TRICKY = ['"', '\\', '\\"', '"\\\\"', '{', '}', '[', ']', ',', ':', 'é', '🚨', '\n', '\u0000', 'model'];

function value(rnd: () => number, depth: number): unknown {
  const pick = Math.floor(rnd() * (depth > 3 ? 4 : 6));
  if (pick === 0) return Math.floor(rnd() * 1e6) / (rnd() < 0.5 ? 1 : 7);
  if (pick === 1) return [true, false, null][Math.floor(rnd() * 3)];
  if (pick === 2 || pick === 3)
    return Array.from(
      { length: Math.floor(rnd() * 5) },
      () => TRICKY[Math.floor(rnd() * TRICKY.length)],
    ).join('');
  if (pick === 4) return Array.from({ length: Math.floor(rnd() * 4) }, () => value(rnd, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(rnd() * 4); i > 0; i--) out[String(value(rnd, 9))] = value(rnd, depth + 1);
  return out;
}

describe('top-level members of a JSON body, read without parsing the rest', () => {
  it('reads the same members as JSON.parse from 2,000 generated bodies with nested values and escapes', () => {
    const rnd = seededRandom(42);
    for (let n = 0; n < 2000; n++) {
      const body: Record<string, unknown> = {};
      for (let i = Math.floor(rnd() * 6); i > 0; i--) body[String(value(rnd, 9))] = value(rnd, 1);
      if (rnd() < 0.7) body.model = value(rnd, 1);
      if (rnd() < 0.7) body.max_tokens = value(rnd, 1);
      if (rnd() < 0.3) body.generationConfig = { maxOutputTokens: value(rnd, 3), x: value(rnd, 1) };
      const text = JSON.stringify(body, null, rnd() < 0.5 ? 2 : undefined);
      expect(topLevelFields(Buffer.from(text), WANTED), text).toEqual(reference(text));
    }
  });

  it('takes the last of a repeated member, as JSON.parse does, and reads members after a large one', () => {
    const text = `{"model":"a","messages":[{"content":"${'x\\"'.repeat(100_000)}"}],"model":"b","max_tokens":64}`;
    expect(topLevelFields(Buffer.from(text), WANTED)).toEqual({ model: 'b', max_tokens: 64 });
  });

  it('gives undefined for a body that is not a JSON object, or is cut short', () => {
    for (const text of [
      '',
      'not json',
      '[1,2]',
      '"s"',
      '{"model":"a"',
      '{"model":',
      '{"a":"b',
      '{"a" 1}',
      '{"a":1 "b":2}',
    ])
      expect(topLevelFields(Buffer.from(text), WANTED), text).toBeUndefined();
    expect(topLevelFields(Buffer.from(' { } '), WANTED)).toEqual({});
  });

  it("finds each provider's model and output limit in a request", () => {
    const facts = (path: string, body: unknown) => requestFacts(path, Buffer.from(JSON.stringify(body)));
    expect(facts('/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 128_000, messages: [] })).toEqual({
      model: 'claude-sonnet-4-5',
      maxOutput: 128_000,
    });
    expect(facts('/responses', { model: 'gpt-5-codex', max_output_tokens: 4096, input: [] })).toEqual({
      model: 'gpt-5-codex',
      maxOutput: 4096,
    });
    expect(facts('/chat/completions', { model: 'gpt-5', max_completion_tokens: 10 })).toEqual({
      model: 'gpt-5',
      maxOutput: 10,
    });
    expect(
      facts('/v1beta/models/gemini-2.5-pro:streamGenerateContent', {
        generationConfig: { maxOutputTokens: 8192 },
      }),
    ).toEqual({ model: 'gemini-2.5-pro', maxOutput: 8192 });
    expect(facts('/v1/messages', { model: 'x', max_tokens: -1 })).toEqual({ model: 'x' });
  });
});
