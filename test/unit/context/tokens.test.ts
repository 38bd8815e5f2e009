import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { chars4, scaleTokens, tokenCounter } from '../../../src/context/tokens.js';

describe('token estimators', () => {
  it('o200k counts with the real o200k_base BPE', async () => {
    const text = 'pod/api-7d9f8b-x2k4l CrashLoopBackOff: back-off 5m0s restarting failed container';
    expect(await tokenCounter('o200k').raw(text)).toBe(countTokens(text));
  });

  it('chars4 is ceil(chars / 4)', async () => {
    expect(chars4('abcde')).toBe(2);
    expect(chars4('abcd')).toBe(1);
    expect(await tokenCounter('chars4').rawMany(['abcde', 'abcd', ''])).toEqual([2, 1, 0]);
  });

  it('treats special-token text in content as ordinary text instead of throwing', async () => {
    expect(await tokenCounter('o200k').raw('log says <|endoftext|> here')).toBeGreaterThan(5);
  });

  it('applies the safety factor rounding up without float noise', async () => {
    expect(scaleTokens(100, 1.1)).toBe(110);
    expect(scaleTokens(101, 1.1)).toBe(112);
    expect(scaleTokens(7, 1.3)).toBe(10);
    const counter = tokenCounter('chars4', 1.3);
    expect(await counter.count('x'.repeat(40))).toBe(13);
    expect(await counter.raw('x'.repeat(40))).toBe(10);
  });

  it('rejects a safety factor below 1', () => {
    expect(() => tokenCounter('o200k', 0.5)).toThrow(/safety factor must be >= 1, got 0.5/);
  });

  it('counts pod logs at fewer characters per token than chars/4 assumes', async () => {
    const logs = Array.from(
      { length: 200 },
      (_, i) =>
        `2026-11-22T02:${String(i % 60).padStart(2, '0')}:40Z pod/api-${i} level=error msg="dial tcp 10.0.0.${i % 255}:5432: connection refused"\n`,
    ).join('');
    expect(await tokenCounter('o200k').raw(logs)).toBeGreaterThan(chars4(logs));
  });

  it('answers many texts in order in one request', async () => {
    const texts = ['alpha beta', '', 'gamma', 'x y '.repeat(1000)];
    expect(await tokenCounter('o200k').rawMany(texts)).toEqual(texts.map((t) => countTokens(t)));
  });
});
