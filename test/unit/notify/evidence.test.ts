import { describe, expect, it } from 'vitest';
import type { Evidence } from '../../../src/workspace/run-record.js';
import { pagerduty } from '../../../src/notify/sinks/pagerduty.js';
import { webhookDocument } from '../../../src/notify/sinks/webhook.js';
import { evidenceMark } from '../../../src/evidence/summary.js';
import { parentMessage, threadMessages } from '../../../src/notify/slack-blocks.js';
import { summaryText } from '../../../src/notify/text.js';
import { renderInput } from './render.js';

const UNREACHABLE: Evidence = {
  verdict: 'ungrounded',
  facts: 2,
  verified: 0,
  unverified: [],
  citedNotRun: ['kubectl describe pod web-1 -n shop (FACT-2)'],
  excerptsNotFound: [],
  gaps: [
    'cluster prod-eu-1 was unreachable when the run started: Unable to connect to the server',
    'no cluster read succeeded during the run',
  ],
};

const withEvidence = (evidence: Evidence) => {
  const base = renderInput();
  if (!base.result) throw new Error('renderInput has a result');
  return renderInput({ result: { ...base.result, evidence } });
};

describe('the evidence verdict next to the answer', () => {
  it("marks Slack's header by verdict: 🟢 grounded, 🟡 partial, 🟠 ungrounded, and names the gaps", () => {
    const header = (evidence: Evidence) =>
      (parentMessage(withEvidence(evidence), true).blocks[0] as { text: { text: string } }).text.text;
    expect(header({ ...UNREACHABLE, verdict: 'grounded', gaps: [], citedNotRun: [] })).toMatch(/^🟢 /);
    expect(header({ ...UNREACHABLE, verdict: 'partial' })).toMatch(/^🟡 /);
    expect(header(UNREACHABLE)).toMatch(/^🟠 /);
    const text = JSON.stringify(parentMessage(withEvidence(UNREACHABLE), true).blocks);
    expect(text).toContain('Evidence: ungrounded — 1 cited command(s) never ran');
    expect(text).toContain('cluster prod-eu-1 was unreachable');
  });

  it('lists every citation that did not hold and every gap first in the Slack thread; a grounded run has no such message', () => {
    const thread = threadMessages(withEvidence(UNREACHABLE));
    const first = JSON.stringify(thread[0]?.blocks);
    expect(thread[0]?.text).toBe('Evidence: ungrounded, 3 points not verified');
    expect(first).toContain('• cited but never run: kubectl describe pod web-1 -n shop (FACT-2)');
    expect(first).toContain('• gap: no cluster read succeeded during the run');
    expect(thread[1]?.text).toMatch(/^Investigation report, part 1 of/);
    const grounded = threadMessages(
      withEvidence({ ...UNREACHABLE, verdict: 'grounded', gaps: [], citedNotRun: [] }),
    );
    expect(grounded[0]?.text).toMatch(/^Investigation report, part 1 of/);
    const many = threadMessages(
      withEvidence({ ...UNREACHABLE, gaps: Array.from({ length: 40 }, (_, i) => `gap number ${i}`) }),
    );
    expect(JSON.stringify(many[0]?.blocks)).toContain('16 more in result.json');
  });

  it('marks the status listing with the verdict and how many points did not hold', () => {
    expect(evidenceMark(UNREACHABLE)).toBe('[ungrounded: 1 unverified, 2 gaps]');
    expect(evidenceMark({ ...UNREACHABLE, verdict: 'grounded', gaps: [], citedNotRun: [] })).toBe(
      '[grounded]',
    );
  });

  it('keeps 🟢 for a run without an evidence record and 🔴 for a failed run', () => {
    const header = (input: ReturnType<typeof renderInput>) =>
      (parentMessage(input, true).blocks[0] as { text: { text: string } }).text.text;
    expect(header(renderInput())).toMatch(/^🟢 /);
    expect(
      header(
        renderInput({ state: { state: 'failed', attempts: 1, runs: [{ id: 'run-1', status: 'failed' }] } }),
      ),
    ).toMatch(/^🔴 /);
  });

  it('puts the evidence in the webhook payload and the gap in every summary text (webhook, PagerDuty, Slack fallback)', () => {
    const input = withEvidence(UNREACHABLE);
    const doc = webhookDocument(input);
    expect(doc.evidence).toEqual(UNREACHABLE);
    expect(summaryText(input)).toContain('Evidence: ungrounded');
    expect((doc.summary as { text: string }).text).toContain('cluster prod-eu-1 was unreachable');
    const sink = { name: 'pd', type: 'pagerduty', secret: 'PD', notes: true } as unknown as Parameters<
      typeof pagerduty.render
    >[1];
    const event = pagerduty.render(input, sink).event as {
      payload: { custom_details: Record<string, unknown> };
    };
    expect(event.payload.custom_details).toMatchObject({
      evidence: 'ungrounded',
      evidence_gaps: UNREACHABLE.gaps,
    });
  });
});
