// One confidence for an answer wherever it is counted: the evidence check records the report's headline
// confidence (a bold `**Confidence:** High` line on its own included), and responders' accuracy, the
// confident-wrong metric and the eval scorer read the same value, not only the agent's one-line answer.
import { describe, expect, it } from 'vitest';
import { checkEvidence } from '../../../src/evidence/check.js';
import { answerConfidence, isConfidentWrong } from '../../../src/feedback/accuracy.js';
import { readHeadline } from '../../../src/report/headline.js';
import { countAnswers } from '../../../src/status/answer-metrics.js';
import type { StoredView } from '../../../src/status/view.js';

const REPORT = [
  '## 0. Executive Triage Card',
  '',
  '### Primary Hypothesis',
  '',
  'The node evicted orders-api for memory pressure.',
  '',
  '**Confidence:** High',
  '',
  '## 2. Assessment & Findings',
  '',
  '- [FACT-1] The pod restarted 12 times.',
  '',
].join('\n');

/** The agent's one-line answer: it states no confidence. */
const ANSWER =
  'Hypothesis: the node evicted orders-api for memory pressure. First action: check node memory.';

describe('the confidence of an answer', () => {
  const evidence = checkEvidence({ report: REPORT, calls: [], outputs: [] });

  it('is recorded by the evidence check as the headline states it, the value the scorer reads', () => {
    expect(evidence.confidence).toBe('High');
    expect(readHeadline(REPORT)?.confidence).toBe(evidence.confidence);
  });

  it("counts a wrong answer confident when only the report's own Confidence line says so", () => {
    expect(answerConfidence({ evidence, answer: ANSWER })).toBe('High');
    expect(isConfidentWrong({ folder: 'a', agent: 'claude', confidence: 'High', verdict: 'wrong' })).toBe(
      true,
    );
    const view = {
      answer: ANSWER,
      evidence,
      feedback: { verdict: 'wrong', at: '2026-03-14T03:00:00Z' },
    } as unknown as StoredView;
    expect(countAnswers([view]).confidentWrong).toBe(1);
  });

  it('falls back to the one-line answer for a result written before the check recorded it', () => {
    const { confidence: _c, ...older } = evidence;
    expect(answerConfidence({ evidence: older, answer: `${ANSWER} Confidence: 85%` })).toBe('85%');
    expect(answerConfidence({ evidence: null, answer: ANSWER })).toBeUndefined();
  });
});
