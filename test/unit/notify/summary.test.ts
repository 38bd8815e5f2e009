import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { summarize } from '../../../src/notify/summary.js';
import { FIXTURE_REPORT } from '../../support/notify.js';
import { templateReport } from '../../support/reports.js';

const EXAMPLES = join(import.meta.dirname, '..', '..', '..', 'examples', 'incidents');

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

/** Section and label names: a headline that is one of these was read from a heading, not an answer. */
const HEADING_NAMES =
  /^(?:\d+\.\s*)?(?:root cause(?: analysis)?|primary hypothesis|hypothes[ie]s|executive (?:summary|triage card)|summary|statement)$/i;

describe('the headline is the hypothesis, never a heading', () => {
  const shapes: [string, string, { hypothesis: string; confidence?: string }][] = [
    [
      'a "### Root Cause" heading with the cause in the paragraph under it',
      '# Report\n\n## 3. Root Cause Analysis\n\n### Root Cause\n\nThe liveness probe hits /healthz on port 8081, which the app no longer serves.\n',
      { hypothesis: 'The liveness probe hits /healthz on port 8081, which the app no longer serves.' },
    ],
    [
      'the hypothesis as a table',
      '# Report\n\n## Root Cause Analysis\n\n| # | Hypothesis | Confidence | Evidence |\n|---|---|---|---|\n| 1 | Node pool out of CPU | 80% | FACT-2 |\n| 2 | Quota | 10% | — |\n',
      { hypothesis: 'Node pool out of CPU', confidence: '80%' },
    ],
    [
      'the hypothesis as a bold line in the card',
      '# Report\n\n## 0. Executive Triage Card\n\n**Primary Hypothesis:** The image tag v2.3.1 does not exist in the registry — Confidence: High\n\n## 3. Root Cause Analysis\n\n### Root Cause\n\nsomething else\n',
      { hypothesis: 'The image tag v2.3.1 does not exist in the registry', confidence: 'High' },
    ],
    [
      'the hypothesis under "### H1: …" with no statement line',
      '# Report\n\n## 3. Root Cause Analysis\n\n### H1: PVC bound to a zone the node pool left — Confidence: Medium\n\n- Evidence: FACT-3\n',
      { hypothesis: 'PVC bound to a zone the node pool left', confidence: 'Medium' },
    ],
    [
      'a "### Primary Hypothesis" heading holding a table',
      '# Report\n\n## 0. Executive Triage Card\n\n### Primary Hypothesis\n\n| Hypothesis | Confidence |\n|---|---|\n| Secret key renamed | High |\n',
      { hypothesis: 'Secret key renamed', confidence: 'High' },
    ],
    [
      'a bold "Root Cause:" line in a report without template sections',
      '# Findings\n\nWe looked at the pods.\n\n**Root Cause**: the HPA max replicas is 2 while load doubled.\n',
      { hypothesis: 'the HPA max replicas is 2 while load doubled.' },
    ],
  ];
  for (const [shape, report, expected] of shapes) {
    it(`reads ${shape}`, () => {
      const summary = summarize(report);
      expect(summary.hypothesis).toBe(expected.hypothesis);
      expect(summary.confidence).toBe(expected.confidence);
    });
  }

  it('reads the k8s4agents template (the notify fixture and the seven-section test report)', () => {
    expect(summarize(TEMPLATE).hypothesis).toMatch(/^The payments-api container exits/);
    expect(summarize(templateReport())).toMatchObject({
      hypothesis: 'A bad config value crashes the container at start-up',
      confidence: 'High',
      source: 'triage-card',
    });
  });

  it('gives no heading name as the headline for any shipped example report', () => {
    const reports = readdirSync(EXAMPLES, { withFileTypes: true }).flatMap((entry) =>
      !entry.isDirectory() ? [] : join(EXAMPLES, entry.name, 'saved-triage', 'triage-report.md'),
    );
    expect(reports.length).toBeGreaterThan(0);
    for (const file of reports) {
      const { hypothesis } = summarize(readFileSync(file, 'utf8'));
      if (hypothesis !== undefined) expect(hypothesis, file).not.toMatch(HEADING_NAMES);
    }
  });

  it('reads a bold label alone on its line with a bold confidence line, and never takes "See below." for the hypothesis', () => {
    const ownLine =
      '## 0. Executive Triage Card\n\n**Primary hypothesis:**\n\nworker-5c8d9 was OOMKilled at its 512Mi limit\n\n**Confidence:** Very High\n';
    expect(summarize(ownLine)).toMatchObject({
      hypothesis: 'worker-5c8d9 was OOMKilled at its 512Mi limit',
      confidence: 'Very High',
    });
    const pointer = '## Executive Summary\n\n**Root cause:** See below.\n\n## Notes\n\nnone\n';
    expect(summarize(pointer).hypothesis).toBeUndefined();
  });

  it('never answers with a label when the section under it is empty', () => {
    const report =
      '# R\n\n## 3. Root Cause Analysis\n\n### Root Cause\n\n### H2: other\n\n## 4. Remediation\n';
    expect(summarize(report).hypothesis ?? '').not.toMatch(HEADING_NAMES);
  });
});
