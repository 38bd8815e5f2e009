import { describe, expect, it } from 'vitest';
import { capDescription, INDEX_DESCRIPTION_CHARS } from '../../../src/context/disclosure/render.js';

describe('an index description', () => {
  it('is kept whole up to the cap', () => {
    const short = 'Kubernetes incident triage: runs a baseline script and writes the report.';
    expect(capDescription(short)).toBe(short);
  });

  it('is cut at a word before the cap and marked, with no dangling punctuation', () => {
    const long = `${'Diagnose pod crash loops, probes and exit codes; '.repeat(8)}end`;
    const cut = capDescription(long);
    expect(cut.length).toBeLessThanOrEqual(INDEX_DESCRIPTION_CHARS);
    expect(cut.endsWith('…')).toBe(true);
    expect(long.startsWith(cut.slice(0, -1))).toBe(true);
    expect(cut).not.toMatch(/[ ,;]…$/);
  });

  it('without spaces is cut at the cap', () => {
    expect(capDescription('x'.repeat(400))).toBe(`${'x'.repeat(INDEX_DESCRIPTION_CHARS - 1)}…`);
  });
});
