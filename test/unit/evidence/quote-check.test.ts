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

describe('a line copied whole, citing no call', () => {
  it('is attributed to the first call that printed it', () => {
    let found = 0;
    fc.assert(
      fc.property(outputs, (printed) => {
        const record = recorded(
          printed.map((lines, i) => ({ argv: ['logs', `api-${i}`, '-n', 'shop'], stdout: lines.join('\n') })),
        );
        const index = new CallIndex(record.calls, record.outputs);
        const checker = new QuoteChecker(index, '', false);
        for (const [i, lines] of printed.entries())
          for (const text of lines) {
            const first = printed.findIndex((ls) => ls.includes(text));
            const verdict = checker.check(text, []);
            expect(first).toBeLessThanOrEqual(i);
            if (verdict?.kind === 'found') {
              found++;
              expect(verdict.call).toBe(index.calls[first]);
            } else expect(verdict?.kind).toBe('weak');
          }
      }),
      { numRuns: 300, seed: 41 },
    );
    // Most lines identify something: the property is not met by calling everything weak.
    expect(found).toBeGreaterThan(1000);
  });
});
