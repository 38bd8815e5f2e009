import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { splitConfidence, summarize } from '../../../src/notify/summary.js';
import { FIXTURE_REPORT } from '../../support/notify.js';

const TEMPLATE = readFileSync(FIXTURE_REPORT, 'utf8');

describe('summarize', () => {
  it('takes the primary hypothesis, its confidence and the first action from the Executive Triage Card', () => {
    expect(summarize(TEMPLATE, 'one-line answer')).toEqual({
      hypothesis:
        'The payments-api container exits because DATABASE_URL points at a Secret key that was renamed in the last rollout',
      confidence: 'High',
      firstAction: 'kubectl -n payments rollout undo deployment/payments-api',
      answer: 'one-line answer',
      source: 'triage-card',
    });
  });

  it('falls back to the H1 statement and the remediation table when the card has neither', () => {
    const report = [
      '# Report',
      '## 3. Root Cause Analysis',
      '### H1: Node disk pressure — Confidence: Medium',
      '**Statement**: The node evicts pods because /var is 97% full.',
      '## 4. Remediation Plan',
      '### Immediate Mitigation',
      '| Step | Action | Validation |',
      '|---|---|---|',
      '| 1 | Cordon node-7 | No new pods scheduled |',
    ].join('\n');
    expect(summarize(report)).toEqual({
      hypothesis: 'The node evicts pods because /var is 97% full.',
      confidence: 'Medium',
      firstAction: 'Cordon node-7',
      source: 'root-cause',
    });
  });

  it('reads an executive summary section (the older template) and a remediation list', () => {
    const report = [
      '## 0. Executive Summary',
      'Image tag v2.3 does not exist in the registry. Confidence: high.',
      '## 5. Remediation',
      '- Pin the image to v2.2',
      '- Ask the release team to publish v2.3',
    ].join('\n\n');
    expect(summarize(report)).toMatchObject({
      hypothesis: 'Image tag v2.3 does not exist in the registry.',
      confidence: 'high',
      firstAction: 'Pin the image to v2.2',
      source: 'executive-summary',
    });
  });

  it("uses the agent's one-line answer when the report has no summary, and says so", () => {
    expect(summarize('# Notes\n\nnothing structured here', '  The pod  was OOMKilled.  ')).toEqual({
      hypothesis: 'The pod was OOMKilled.',
      answer: 'The pod was OOMKilled.',
      source: 'answer',
    });
    expect(summarize(undefined, undefined)).toEqual({ source: 'none' });
  });

  it('ignores headings inside code fences and survives deeply nested or huge input', () => {
    const fenced = '```\n## 0. Executive Triage Card\n### Primary Hypothesis\nfake\n```\n';
    expect(summarize(fenced).source).toBe('none');
    const nested = `${'> '.repeat(5000)}deep\n${'- '.repeat(3000)}list`;
    expect(() => summarize(nested)).not.toThrow();
    const long = `## Executive Triage Card\n### Primary Hypothesis\n${'word '.repeat(5000)}`;
    expect(summarize(long).hypothesis?.length).toBeLessThanOrEqual(600);
  });
});

describe('splitConfidence', () => {
  it('splits "statement — Confidence: X" and keeps percentages', () => {
    expect(splitConfidence('Disk full — Confidence: High')).toEqual({
      statement: 'Disk full',
      confidence: 'High',
    });
    expect(splitConfidence('OOM (confidence 70%)')).toEqual({ statement: 'OOM', confidence: '70%' });
    expect(splitConfidence('No label here')).toEqual({ statement: 'No label here' });
  });
});
