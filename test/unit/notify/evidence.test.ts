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
  clusterRead: false,
};
const GROUNDED: Evidence = {
  ...UNREACHABLE,
  verdict: 'grounded',
  gaps: [],
  citedNotRun: [],
  clusterRead: true,
};
/** The cluster was read, but the output the headline cites says otherwise. */
const CONTRADICTED: Evidence = {
  ...UNREACHABLE,
  citedNotRun: [],
  gaps: [],
  clusterRead: true,
  claims: [
    {
      text: 'web-1 was OOMKilled',
      kind: 'headline',
      status: 'contradicted',
      source: 'kubectl describe pod web-1 -n shop',
      why: 'reason: the report says OOMKilled; `kubectl describe pod web-1 -n shop` says Error',
    },
  ],
};
/** The cluster was read, but nothing the report cites holds. */
const UNSUPPORTED: Evidence = { ...CONTRADICTED, claims: [] };

const withEvidence = (evidence: Evidence) => {
  const base = renderInput();
  if (!base.result) throw new Error('renderInput has a result');
  return renderInput({ result: { ...base.result, evidence } });
};

describe('the evidence verdict next to the answer', () => {
  it("marks Slack's header by what the answer amounts to: 🟢 only when grounded, and names the gaps", () => {
    const header = (evidence: Evidence) =>
      (parentMessage(withEvidence(evidence), true).blocks[0] as { text: { text: string } }).text.text;
    expect(header(GROUNDED)).toMatch(/^🟢 Answer grounded in the cluster — /);
    expect(header({ ...UNSUPPORTED, verdict: 'partial' })).toMatch(/^🟡 Answer, partly verified — /);
    expect(header(UNREACHABLE)).toMatch(/^⚪ No cluster access: answer from the alert only — /);
    expect(header(CONTRADICTED)).toMatch(/^⛔ Claims contradicted by the cluster — /);
    expect(header(UNSUPPORTED)).toMatch(/^🟠 Answer, not verified — /);
    const text = JSON.stringify(parentMessage(withEvidence(UNREACHABLE), true).blocks);
    expect(text).toContain('Evidence: ungrounded — 1 cited command not run as written');
    expect(text).toContain('gaps the report relies on: cluster prod-eu-1 was unreachable');
  });

  it('never shows an unreachable-cluster run or an ungrounded one green or "succeeded": Slack header, fields and phone text, webhook, PagerDuty', () => {
    const unreachableAtStart = renderInput({
      result: {
        ...renderInput().result!,
        cluster: { name: 'prod-eu-1', reachable: false, detail: 'connection refused' },
      },
    });
    for (const input of [
      withEvidence(UNREACHABLE),
      withEvidence(UNSUPPORTED),
      withEvidence(CONTRADICTED),
      unreachableAtStart,
      renderInput(),
    ]) {
      // The headline opens every text (a gap may say "no cluster read succeeded": that is not the outcome).
      const opening = (text: string) => text.split(' — ')[0];
      const slack = parentMessage(input, true);
      const header = (slack.blocks[0] as { text: { text: string } }).text.text;
      expect(header).not.toMatch(/🟢|succeeded/i);
      const fields = JSON.stringify((slack.blocks[1] as { fields: unknown[] }).fields);
      expect(fields).not.toMatch(/succeeded/i);
      // What a phone shows.
      expect(opening(slack.text)).not.toMatch(/succeeded|🟢/i);
      const doc = webhookDocument(input);
      expect(opening((doc.summary as { text: string }).text)).not.toMatch(/succeeded/i);
      expect((doc.outcome as { kind: string }).kind).not.toBe('grounded');
      const sink = { name: 'pd', type: 'pagerduty', secret: 'PD' } as unknown as Parameters<
        typeof pagerduty.render
      >[1];
      const event = pagerduty.render(input, sink).event as {
        payload: { summary: string; custom_details: Record<string, unknown> };
      };
      expect(opening(event.payload.summary)).not.toMatch(/succeeded/i);
      expect(event.payload.custom_details.outcome).not.toMatch(/succeeded|grounded/);
      expect(event.payload.custom_details).not.toHaveProperty('state', 'succeeded');
    }
    expect(parentMessage(unreachableAtStart, true).text).toMatch(
      /^No cluster access: answer from the alert only — CrashLoop/,
    );
    expect(webhookDocument(withEvidence(CONTRADICTED)).outcome).toEqual({
      kind: 'contradicted',
      label: 'contradicted',
    });
    const pd = pagerduty.render(withEvidence(UNREACHABLE), {
      name: 'pd',
      type: 'pagerduty',
      secret: 'PD',
    } as unknown as Parameters<typeof pagerduty.render>[1]).event as {
      payload: { summary: string; custom_details: Record<string, unknown> };
    };
    expect(pd.payload.summary).toMatch(/^No cluster access: answer from the alert only/);
    expect(pd.payload.custom_details.outcome).toBe('no cluster access');
  });

  it('lists every citation that did not hold and every gap first in the Slack thread; a grounded run has no such message', () => {
    const thread = threadMessages(withEvidence(UNREACHABLE));
    const first = JSON.stringify(thread[0]?.blocks);
    expect(thread[0]?.text).toBe('Evidence: ungrounded, 3 points not verified');
    expect(first).toContain(
      '• cited, but no recorded call ran it as written: kubectl describe pod web-1 -n shop (FACT-2)',
    );
    expect(first).toContain('• gap the report relies on: no cluster read succeeded during the run');
    expect(thread[1]?.text).toMatch(/^Investigation report, part 1 of/);
    const grounded = threadMessages(withEvidence(GROUNDED));
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

  it('shows a run without an evidence record as not verified (🟠), and a failed run 🔴', () => {
    const header = (input: ReturnType<typeof renderInput>) =>
      (parentMessage(input, true).blocks[0] as { text: { text: string } }).text.text;
    expect(header(renderInput())).toMatch(/^🟠 Answer, not verified — /);
    expect(
      header(
        renderInput({ state: { state: 'failed', attempts: 1, runs: [{ id: 'run-1', status: 'failed' }] } }),
      ),
    ).toMatch(/^🔴 Investigation failed — /);
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

  it('has PagerDuty resolve, not trigger, for an incident whose alerts resolved before its run', () => {
    const sink = { name: 'pd', type: 'pagerduty', secret: 'PD' } as unknown as Parameters<
      typeof pagerduty.render
    >[1];
    const resolved = renderInput({
      state: { state: 'resolved', reason: 'every alert resolved before the run', attempts: 0, runs: [] },
      runId: '',
      result: undefined,
    });
    expect(pagerduty.render(resolved, sink).event).toMatchObject({ event_action: 'resolve' });
    expect(pagerduty.render(renderInput(), sink).event).toMatchObject({ event_action: 'trigger' });
  });
});
