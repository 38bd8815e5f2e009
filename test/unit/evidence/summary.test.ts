import { describe, expect, it } from 'vitest';
import type { Evidence } from '../../../src/workspace/run-record.js';
import type { ClusterCallRecord } from '../../../src/kubectl/broker/calls.js';
import { callGaps } from '../../../src/evidence/gaps.js';
import {
  claimsCount,
  evidenceItems,
  evidenceLine,
  evidenceMark,
  splitGaps,
} from '../../../src/evidence/summary.js';

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
      /^Evidence: partial — 4 of 6 claims supported, 1 citation unverified; 1 gap$/,
    );
    expect(evidenceMark(PARTIAL)).toBe('[partial: 4/6 claims, 1 gap]');
  });

  it('keeps the older wording for results written before claims were checked', () => {
    const { claimsSupported: _s, claimsTotal: _t, claims: _c, headline: _h, ...old } = PARTIAL;
    expect(claimsCount(old)).toBeUndefined();
    expect(evidenceMark(old)).toBe('[partial: 1 unverified, 1 gap]');
  });
});

const call = (
  normalized: string,
  exitCode: number,
  extra: Partial<ClusterCallRecord> = {},
): ClusterCallRecord =>
  ({
    at: '2026-03-01T10:00:00Z',
    tool: 'kubectl',
    by: 'guard',
    argv: normalized.split(' '),
    normalized,
    category: 'read',
    decision: 'allowed',
    rule: 'include "kubectl @read"',
    exitCode,
    durationMs: 5,
    stdoutBytes: 0,
    stderrBytes: 10,
    ...extra,
  }) as ClusterCallRecord;

describe('the gaps next to the verdict', () => {
  it('says "failed (exit 1)" for a failure nothing more is known of, never "failed (failed, exit 1)"', () => {
    const gaps = callGaps(
      [call('get pods -n shop', 1, { call: 1 }), call('get nodes', 1, { call: 2 })],
      new Map([
        [
          1,
          { call: 1, by: 'guard', normalized: 'get pods -n shop', exitCode: 1, stdout: '', stderr: 'boom' },
        ],
        [
          2,
          {
            call: 2,
            by: 'guard',
            normalized: 'get nodes',
            exitCode: 1,
            stdout: '',
            stderr: 'nodes is forbidden',
          },
        ],
      ]),
    );
    expect(gaps).toEqual([
      'failed (exit 1): kubectl get pods -n shop',
      'failed (RBAC denial, exit 1): kubectl get nodes',
    ]);
  });

  it('lists the gaps the report relies on first and counts the rest', () => {
    const evidence = {
      ...PARTIAL,
      unverified: ['`kubectl describe pod api -n shop` (FACT-2): ran and failed'],
      gaps: [
        'failed (RBAC denial, exit 1): kubectl get nodes',
        'refused (exclude "kubectl @secrets"): kubectl get secrets -n shop',
        'failed (exit 1): kubectl describe pod api -n shop',
        'the recorded output of 1 call was cut at its size bound',
        'failed (not found, exit 1): kubectl get events -n other',
      ],
    };
    expect(splitGaps(evidence)).toEqual({
      reliedOn: [
        'failed (exit 1): kubectl describe pod api -n shop',
        'the recorded output of 1 call was cut at its size bound',
      ],
      rest: [
        'failed (RBAC denial, exit 1): kubectl get nodes',
        'refused (exclude "kubectl @secrets"): kubectl get secrets -n shop',
        'failed (not found, exit 1): kubectl get events -n other',
      ],
    });
    expect(evidenceLine(evidence)).toBe(
      'Evidence: partial — 4 of 6 claims supported, 1 citation unverified; gaps the report relies on: failed (exit 1): kubectl describe pod api -n shop; the recorded output of 1 call was cut at its size bound; 3 other gaps',
    );
    const items = evidenceItems(evidence);
    expect(items[0]).toBe('gap the report relies on: failed (exit 1): kubectl describe pod api -n shop');
    expect(items.at(-1)).toBe(
      'gap in a call the report does not cite: failed (not found, exit 1): kubectl get events -n other',
    );
  });

  it('says a cited command was not run as written, never "cited but never run", and names the call that ran', () => {
    const items = evidenceItems({
      ...PARTIAL,
      gaps: [],
      unverified: [],
      citedNotRun: ['kubectl logs api -n shop (FACT-1); `kubectl logs api -n shop --previous` ran'],
    });
    expect(items).toEqual([
      'cited, but no recorded call ran it as written: kubectl logs api -n shop (FACT-1); `kubectl logs api -n shop --previous` ran',
    ]);
    expect(items.join('\n')).not.toContain('never run');
  });
});
