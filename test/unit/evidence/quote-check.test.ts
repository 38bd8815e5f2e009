import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CallIndex } from '../../../src/evidence/calls.js';
import { QuoteChecker } from '../../../src/evidence/quote-check.js';
import { recorded } from '../../support/evidence.js';

// A line copied whole from some output, citing no call, is found through the anchor words it shares
// with the outputs (words of 6 characters or more with a digit): the call it is attributed to must be
// the first that printed it, whatever the words, digits and spacing, and however many outputs share them.
const word = fc.constantFrom(
  'level=error',
  'pod=api-7d9f-x2k9q',
  'pod=api-7d9f-x2k9r',
  'msg="reset"',
  '10.0.0.12',
  'a1',
  'upstream',
  '2026-11-26T09:07:00Z',
  'registry.example/shop/api:2.3.1',
  'x9',
  'exit=137',
  'OOMKilled',
);
const line = fc.array(word, { minLength: 1, maxLength: 6 }).map((w) => w.join(' '));
const outputs = fc.array(fc.array(line, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 12 });

/** Every line of every output, checked against the first call that printed it. */
function checkEveryLine(printed: string[][]): number {
  const record = recorded(
    printed.map((lines, i) => ({ argv: ['logs', `api-${i}`, '-n', 'shop'], stdout: lines.join('\n') })),
  );
  const index = new CallIndex(record.calls, record.outputs);
  const checker = new QuoteChecker(index, '', false);
  let found = 0;
  for (const lines of printed)
    for (const text of lines) {
      const first = printed.findIndex((ls) => ls.includes(text));
      const verdict = checker.check(text, []);
      if (verdict?.kind === 'found') {
        found++;
        expect(verdict.call).toBe(index.calls[first]);
      } else expect(verdict?.kind).toBe('weak');
    }
  return found;
}

/** How many lines were found, over `numRuns` sets of outputs. */
function foundOver(sets: fc.Arbitrary<string[][]>, numRuns: number): number {
  let found = 0;
  fc.assert(
    fc.property(sets, (printed) => {
      found += checkEveryLine(printed);
    }),
    { numRuns, seed: 41 },
  );
  return found;
}

describe('a line copied whole, citing no call', () => {
  it('is attributed to the first call that printed it', () => {
    // Most lines identify something: the property is not met by calling everything weak.
    expect(foundOver(outputs, 300)).toBeGreaterThan(1000);
  });

  it('is attributed the same way in outputs of hundreds of lines (looked up, not scanned)', () => {
    const long = fc.array(fc.array(line, { minLength: 257, maxLength: 400 }), { minLength: 1, maxLength: 3 });
    expect(foundOver(long, 10)).toBeGreaterThan(0);
    // How often a long output printed the line decides whether it says which line: counted exactly.
    const lines = Array.from({ length: 300 }, (_, i) =>
      i % 3 === 0 ? 'pod=api-7d9f-x2k9q level=error msg="reset"' : `request=${1000 + i} served`,
    );
    const record = recorded([{ argv: ['logs', 'api-1', '-n', 'shop'], stdout: lines.join('\n') }]);
    const checker = new QuoteChecker(new CallIndex(record.calls, record.outputs), '', false);
    expect(checker.check('pod=api-7d9f-x2k9q level=error msg="reset"', [])).toEqual({
      kind: 'weak',
      why: 'it is on 100 of 300 lines of `kubectl logs api-1 -n shop`',
    });
    expect(checker.check('request=1001 served', [])?.kind).toBe('found');
  });
});
