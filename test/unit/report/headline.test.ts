import { describe, expect, it } from 'vitest';
import { readHeadline } from '../../../src/report/headline.js';

describe('the headline', () => {
  it('takes the statement after a bold label alone on its line, and a bold confidence on its own line', () => {
    const report = [
      '# Report',
      '## 0. Executive Triage Card',
      '**Primary hypothesis:**',
      'The api container exits because HTTP_PORT is "8O80", not a number [FACT-2].',
      '**Confidence:** Very High',
      '## 2. Assessment',
    ].join('\n\n');
    expect(readHeadline(report)).toEqual({
      statement: 'The api container exits because HTTP_PORT is "8O80", not a number [FACT-2].',
      confidence: 'Very High',
      source: 'triage-card',
      cites: ['FACT-2'],
    });
  });

  it('is never "See below.", "TL;DR", a label or a status line: it goes on to the hypothesis stated elsewhere', () => {
    const seeBelow = [
      '## Executive Summary',
      '**Root cause:** See below.',
      '## 3. Root Cause Analysis',
      '### H1: The image tag 2.3.2 does not exist — Confidence: High',
      '- Evidence for: FACT-1, INF-1',
      '- Evidence against: FACT-4',
    ].join('\n\n');
    expect(readHeadline(seeBelow)).toEqual({
      statement: 'The image tag 2.3.2 does not exist',
      confidence: 'High',
      source: 'root-cause',
      cites: ['FACT-1', 'INF-1'],
    });
    expect(readHeadline('## TL;DR\n\nTL;DR\n\n## Notes\n\nnothing')).toBeUndefined();
    expect(readHeadline('## Executive Triage Card\n\n**Status:** 🔴 Active Incident\n')).toBeUndefined();
    expect(
      readHeadline('## Executive Triage Card\n\n### Primary Hypothesis\n\nSee below.\n'),
    ).toBeUndefined();
  });

  it('reads "we have high confidence that …" as the statement and its confidence', () => {
    const report =
      '## Executive Summary\n\nWe have high confidence that worker-5c8d9 was OOMKilled at its 512Mi limit (INF-1).\n';
    expect(readHeadline(report)).toEqual({
      statement: 'worker-5c8d9 was OOMKilled at its 512Mi limit (INF-1).',
      confidence: 'high',
      source: 'executive-summary',
      cites: ['INF-1'],
    });
  });

  it('collects the facts and inferences the hypothesis rests on from the lines under it', () => {
    const report = [
      '## 0. Executive Triage Card',
      '### Primary Hypothesis',
      'Bad HTTP_PORT value — Confidence: High',
      '- Based on: [INF-1], FACT-3',
      '### Top 3 Recommended Actions',
      '- FACT-9 is not a citation of the hypothesis',
    ].join('\n\n');
    expect(readHeadline(report)?.cites).toEqual(['INF-1', 'FACT-3']);
  });
});
