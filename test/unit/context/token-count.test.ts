import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { describe, expect, it } from 'vitest';
import { countBounded, CUT_SURCHARGE, MAX_PIECE_CHARS } from '../../../src/context/token-count.js';

const PLAIN = { disallowedSpecial: new Set<string>() };
const exact = (text: string) => countTokens(text, PLAIN);

let seed = 7;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const pick = (chars: string) => chars[Math.floor(random() * chars.length)] ?? '';
const randomOf = (chars: string, n: number) => Array.from({ length: n }, () => pick(chars)).join('');

const podLogs = (n: number) =>
  Array.from(
    { length: n },
    (_, i) =>
      `2026-11-22T02:00:${String(i % 60).padStart(2, '0')}Z pod/api-${i % 13} level=error msg="dial tcp 10.0.0.${i % 255}:5432: connection refused" trace=${(i * 2654435761).toString(16)}\n`,
  ).join('');

describe('countBounded', () => {
  it('counts text without long runs exactly as the tokenizer does', () => {
    const texts = [
      podLogs(300),
      'The pod restarted because the memory limit was exceeded. Kubernetes evicted it.\n'.repeat(50),
      JSON.stringify({
        items: Array.from({ length: 200 }, (_, i) => ({ name: `pod-${i}`, ready: i % 2 === 0 })),
      }),
      'log says <|endoftext|> here and <|im_start|> there',
      '日本語のログ: コンテナが再起動しました。'.repeat(20),
    ];
    for (const text of texts) expect(countBounded(text, exact)).toBe(exact(text));
  });

  it('counts a long run piece by piece, never below the true count and at most 2 tokens per cut above it', () => {
    const kinds: Record<string, (n: number) => string> = {
      '[ run': (n) => '['.repeat(n),
      '= run': (n) => '='.repeat(n),
      'letter run': (n) => 'a'.repeat(n),
      'space run': (n) => ' '.repeat(n),
      'tab run': (n) => '\t'.repeat(n),
      'upper-case run': (n) => 'A'.repeat(n),
      'repeated pattern': (n) => '=-*#'.repeat(n).slice(0, n),
      'random letters': (n) => randomOf('abcdefghijklmnopqrstuvwxyz', n),
      'two letters': (n) => randomOf('ae', n),
      'random punctuation': (n) => randomOf('!"#$%&()*+,-.:;<=>?@[]^_`{|}~', n),
      'random whitespace': (n) => randomOf(' \t', n),
      'CJK ideographs': (n) =>
        Array.from({ length: n }, () => String.fromCharCode(0x4e00 + Math.floor(random() * 2000))).join(''),
      'run inside a log line': (n) => `2026-11-22 pod/api-1 ${'='.repeat(n)} done\n`,
    };
    for (const [kind, make] of Object.entries(kinds)) {
      for (const n of [300, 700, 1500, 3000]) {
        const text = make(n);
        const truth = exact(text);
        const cuts = Math.ceil(n / MAX_PIECE_CHARS);
        const got = countBounded(text, exact);
        expect(got, `${kind} × ${n}`).toBeGreaterThanOrEqual(truth);
        expect(got - truth, `${kind} × ${n}`).toBeLessThanOrEqual(2 * cuts * CUT_SURCHARGE);
      }
    }
  });

  it('counts long runs in a mixed text the same whether or not other text surrounds them', () => {
    const run = '['.repeat(5000);
    const text = `${podLogs(20)}${run}\n${podLogs(20)}`;
    expect(countBounded(text, exact)).toBe(exact(podLogs(20)) * 2 + countBounded(`${run}\n`, exact));
  });

  it('never cuts inside a surrogate pair', () => {
    const emoji = '\u{1F600}'.repeat(2000);
    const calls: string[] = [];
    countBounded(emoji, (t) => {
      calls.push(t);
      return exact(t);
    });
    for (const piece of calls) expect(piece).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
  });
});
