import { describe, expect, it } from 'vitest';
import type { Evidence } from '../../../src/workspace/run-record.js';
import { claimsCount, evidenceLine, evidenceMark } from '../../../src/evidence/summary.js';

const PARTIAL: Evidence = {
  verdict: 'partial',
  facts: 3,
  verified: 4,
  unverified: ['FACT-3 unsupported: it cites `kubectl logs api`, which never ran'],
  citedNotRun: [],
  excerptsNotFound: [],
  gaps: ['failed (cluster unreachable, exit 1): kubectl get nodes'],
  headline: 'api exits on a bad HTTP_PORT',
  claims: [],
  claimsSupported: 4,
  claimsTotal: 6,
  checks: ['deterministic'],
};

describe('the claims count next to the verdict', () => {
  it('says "N of M claims supported" in the one-line summary and the status mark', () => {
    expect(claimsCount(PARTIAL)).toBe('4 of 6 claims supported');
    expect(evidenceLine(PARTIAL)).toMatch(
      /^Evidence: partial — 4 of 6 claims supported, 1 citation\(s\) unverified; gaps: /,
    );
    expect(evidenceMark(PARTIAL)).toBe('[partial: 4/6 claims, 1 gap]');
  });

  it('keeps the older wording for results written before claims were checked', () => {
    const { claimsSupported: _s, claimsTotal: _t, claims: _c, headline: _h, ...old } = PARTIAL;
    expect(claimsCount(old)).toBeUndefined();
    expect(evidenceMark(old)).toBe('[partial: 1 unverified, 1 gap]');
  });
});
