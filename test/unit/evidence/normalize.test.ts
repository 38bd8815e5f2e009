import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collapseSpaces, collapsedLines } from '../../../src/evidence/normalize.js';

// The output lines and quotes the evidence check compares are collapsed without a pattern run line by
// line: each must still read exactly as collapsing every line on its own does.
// Every character \s matches, and some it does not (NEL, the Mongolian vowel separator, a zero-width space).
const spaces = ['\t', '\n', '\v', '\f', '\r', ' ', '\u00a0', '\u1680', '\u2000', '\u2005', '\u200a'];
const moreSpaces = ['\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\ufeff'];
const notSpaces = ['\u0085', '\u180e', '\u200b', '\u001b', '\u00ff'];
const pieces = ['a', 'pod', '09:07', '  ', ...spaces, ...moreSpaces, ...notSpaces];
const text = fc.array(fc.constantFrom(...pieces), { maxLength: 40 }).map((p) => p.join(''));

describe('collapsing whitespace', () => {
  it('is tested with every character \\s matches and some it does not', () => {
    expect([...spaces, ...moreSpaces].filter((c) => !/^\s$/.test(c))).toEqual([]);
    expect(notSpaces.filter((c) => /\s/.test(c))).toEqual([]);
  });

  it('reads an output as each line collapsed and trimmed, the empty ones dropped', () => {
    const lineByLine = (t: string) =>
      t
        .split('\n')
        .map((l) => l.replace(/\s+/g, ' ').trim())
        .filter((l) => l !== '');
    fc.assert(
      fc.property(text, (t) => {
        expect(collapsedLines(t)).toEqual(lineByLine(t));
      }),
      { numRuns: 3000, seed: 41 },
    );
    expect(collapsedLines('Name:   api\n  Ready:\tTrue  \n\n \u2003x')).toEqual([
      'Name: api',
      'Ready: True',
      'x',
    ]);
  });

  it('collapses a quote as one line and hands back the same string when there is nothing to collapse', () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(collapseSpaces(t)).toBe(t.replace(/\s+/g, ' ').trim());
      }),
      { numRuns: 3000, seed: 41 },
    );
    // Every character, alone between two letters: collapsed exactly when \s matches it.
    for (let code = 0; code <= 0xffff; code++) {
      const t = `a${String.fromCharCode(code)}b`;
      if (collapseSpaces(t) !== t.replace(/\s+/g, ' ')) throw new Error(`U+${code.toString(16)} read wrong`);
      expect(collapsedLines(t).join('\n')).toBe(
        t
          .split('\n')
          .map((l) => l.replace(/\s+/g, ' ').trim())
          .filter(Boolean)
          .join('\n'),
      );
    }
    const plain = 'level=error pod=api-1 msg="reset"';
    expect(collapseSpaces(plain)).toBe(plain);
  });
});
