import { describe, expect, it } from 'vitest';
import { parentMessage, SLACK_LIMITS, splitText, threadMessages } from '../../../src/notify/slack-blocks.js';
import { summarize } from '../../../src/notify/summary.js';
import { bigReport } from '../../support/notify.js';
import { renderInput } from './render.js';

/** Every text a block shows (section text, fields, context elements). */
const blockText = (block: object): string => {
  const b = block as { text?: { text: string }; fields?: { text: string }[]; elements?: { text: string }[] };
  return [
    b.text?.text ?? '',
    ...(b.fields ?? []).map((f) => f.text),
    ...(b.elements ?? []).map((e) => e.text),
  ].join('');
};

describe('parentMessage', () => {
  it('shows no feedback buttons on a replay or a compare cell (their answers are not the incident’s)', () => {
    for (const trigger of ['replay', 'compare'] as const)
      expect(parentMessage(renderInput({ trigger }), true).blocks.some((b) => b.type === 'actions')).toBe(
        false,
      );
  });

  it('offers no Correct/Partly/Wrong buttons on a failed run: there is no answer to grade', () => {
    const failed = renderInput({
      state: {
        state: 'failed',
        reason: 'the agent wrote no report',
        attempts: 1,
        runs: [{ id: 'run-1', status: 'failed' }],
      },
    });
    expect(parentMessage(failed, true).blocks.some((b) => b.type === 'actions')).toBe(false);
    expect(parentMessage(renderInput(), true).blocks.some((b) => b.type === 'actions')).toBe(true);
  });

  it('marks a resolved incident in the header and fields, and a recorded verdict on its button and context', () => {
    const m = parentMessage(
      renderInput({
        resolvedAt: '2026-03-01T11:02:00.000Z',
        feedback: { verdict: 'partly', by: 'slack:alice (U1)' },
      }),
      true,
    );
    const json = JSON.stringify(m.blocks);
    expect(json).toContain('Resolved · Answer, not verified');
    expect(json).toContain('*Alert resolved*\\n2026-03-01T11:02:00.000Z');
    expect(json).toContain('rated *partly* by slack:alice (U1)');
    expect(json).toContain('"text":"Partly ✓"');
  });

  it('shows resource, fault, severity, state, hypothesis with confidence, first action, duration and cost', () => {
    const m = parentMessage(renderInput({ statusUrl: 'https://triage.example/' }), true);
    expect(m.blocks).toEqual([
      {
        type: 'header',
        text: {
          type: 'plain_text',
          text: '🟠 Answer, not verified — CrashLoop on Deployment payments/payments-api (prod-eu-1)',
          emoji: true,
        },
      },
      {
        type: 'section',
        fields: [
          { type: 'mrkdwn', text: '*Resource*\nDeployment payments/payments-api' },
          { type: 'mrkdwn', text: '*Cluster*\nprod-eu-1' },
          { type: 'mrkdwn', text: '*Fault*\nCrashLoop' },
          { type: 'mrkdwn', text: '*Severity*\ncritical' },
          { type: 'mrkdwn', text: '*Outcome*\nnot verified' },
          { type: 'mrkdwn', text: '*Duration*\n4m 12s' },
          { type: 'mrkdwn', text: '*Cost*\n$0.42' },
          { type: 'mrkdwn', text: '*Tokens*\n12,345 in · 2,345 out' },
        ],
      },
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: '*Primary hypothesis* (confidence: High)\nThe payments-api container exits because DATABASE_URL points at a Secret key that was renamed in the last rollout',
        },
      },
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: '*First action*\nkubectl -n payments rollout undo deployment/payments-api',
        },
      },
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: 'incident `inc-42` · run `run-1` · agent claude · <https://triage.example/|status page> · full report in the thread',
          },
        ],
      },
      {
        type: 'actions',
        block_id: 'triage_feedback',
        elements: [
          ['correct', 'Correct', { style: 'primary' }],
          ['partly', 'Partly', {}],
          ['wrong', 'Wrong', { style: 'danger' }],
        ].map(([verdict, label, style]) => ({
          type: 'button',
          action_id: `triage_feedback_${verdict as string}`,
          text: { type: 'plain_text', text: label, emoji: true },
          value: 'payments-crashloop',
          ...(style as object),
        })),
      },
    ]);
    expect(m.text).toBe(
      'Answer, not verified — CrashLoop on Deployment payments/payments-api (prod-eu-1). Hypothesis: The payments-api container exits because DATABASE_URL points at a Secret key that was renamed in the last rollout (confidence High). First action: kubectl -n payments rollout undo deployment/payments-api.',
    );
  });

  it("escapes the agent's mentions and links in the top-level text as in the blocks", () => {
    const report = [
      '## 0. Executive Triage Card',
      '',
      '### Primary Hypothesis',
      '<!channel> the DB is down, see <https://evil.example|this> & <@U123> — Confidence: High',
      '',
      '### Top 3 Recommended Actions',
      '',
      '| Priority | Action | Expected Outcome | Risk |',
      '|----------|--------|------------------|------|',
      '| 1 | <!here> click <https://evil.example/go|here> | fixed | Low |',
      '',
    ].join('\n');
    const m = parentMessage(renderInput({ report, summary: summarize(report) }), true);
    const shown = [m.text, ...m.blocks.map(blockText)].join('\n');
    expect(m.text).toContain('First action: &lt;!here&gt; click &lt;https://evil.example/go');
    expect(shown).not.toMatch(/<!channel>|<!here>|<https:\/\/evil/);
  });

  it('posts the reason and what to do for a failed run', () => {
    const input = renderInput({
      state: {
        state: 'failed',
        reason: 'the agent run exceeded agent.timeout and was stopped',
        attempts: 1,
        runs: [],
      },
      report: undefined,
      summary: summarize(undefined),
    });
    input.result = { ...input.result!, status: 'timed_out' };
    const texts = parentMessage(input, true).blocks.map(blockText);
    expect(texts[0]).toBe(
      '🔴 Investigation failed — CrashLoop on Deployment payments/payments-api (prod-eu-1)',
    );
    expect(texts).toContain('*Why it failed*\nthe agent run exceeded agent.timeout and was stopped');
    expect(texts).toContain(
      '*What to do*\nThe agent ran out of time (agent.timeout): read .triage/runs/run-1/agent-stderr.log; then re-queue it: `triage-runner retry payments-crashloop` (raise agent.timeout if the cluster is slow to inspect).',
    );
    expect(texts.join('\n')).not.toContain('full report in the thread');
  });

  it('escapes what the agent wrote so that it cannot mention a channel or forge a link', () => {
    const input = renderInput({
      summary: { hypothesis: 'ping <!channel> & <https://evil|click>', source: 'answer' },
    });
    const texts = parentMessage(input, true).blocks.map(blockText).join('\n');
    expect(texts).toContain("*Agent's answer*\nping &lt;!channel&gt; &amp; &lt;https://evil|click&gt;");
    expect(texts).not.toContain('<!channel>');
  });
});

describe('threadMessages', () => {
  it('keeps a 200 KB report within Slack limits: 3,000 per section, 50 blocks and ~13,000 characters per message', () => {
    const report = bigReport(200 * 1024);
    const messages = threadMessages(renderInput({ report }));
    expect(messages.length).toBeGreaterThan(10);
    expect(messages.length).toBeLessThanOrEqual(SLACK_LIMITS.threadMessages);
    for (const m of messages) {
      expect(m.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.blocksPerMessage);
      const sections = m.blocks.filter((b) => b.type === 'section').map(blockText);
      for (const text of sections) expect(text.length).toBeLessThanOrEqual(SLACK_LIMITS.sectionChars);
      expect(m.blocks.map(blockText).join('').length).toBeLessThanOrEqual(13_000);
    }
    const all = messages.flatMap((m) => m.blocks.map(blockText)).join('\n');
    // Nothing lost: every section's last line arrives, escaped.
    const sections = report.match(/^## \d+\. Section \d+$/gm) ?? [];
    for (let i = 1; i <= sections.length; i++) expect(all).toContain(`END-${i}`);
    expect(all).toContain('&lt;1&gt; times &amp; more');
  });

  it('starts a message at a section boundary when the next section does not fit', () => {
    const report = ['## A', 'a'.repeat(6000), '## B', 'b'.repeat(6000)].join('\n\n');
    const messages = threadMessages(renderInput({ report }));
    const firstTexts = messages.map((m) => m.blocks.filter((b) => b.type === 'section').map(blockText));
    expect(firstTexts[0]?.[0]?.startsWith('*A*')).toBe(true);
    expect(firstTexts[1]?.[0]?.startsWith('*B*')).toBe(true);
  });

  it('says where the rest is when the report was cut at notify.max_report_bytes', () => {
    const messages = threadMessages(
      renderInput({ report: '## A\n\nshort', reportTruncated: { bytes: 5_000_000 } }),
    );
    const last = messages.at(-1)!.blocks.map(blockText).join('\n');
    expect(last).toContain('The report is 5000000 bytes; the first 11 (notify.max_report_bytes) are above.');
    expect(last).toContain('output/investigation.md in the workspace payments-crashloop');
  });
});

describe('splitText', () => {
  it('re-fences each piece of a long code block and never cuts an entity', () => {
    const code = `\`\`\`\n${'line &amp; more\n'.repeat(400)}\`\`\``;
    const pieces = splitText(code, 3000);
    expect(pieces.length).toBeGreaterThan(1);
    for (const p of pieces) {
      expect(p.length).toBeLessThanOrEqual(3000);
      expect(p.startsWith('```\n') && p.endsWith('\n```')).toBe(true);
    }
    const line = splitText('&amp;'.repeat(1000), 3000);
    for (const p of line) expect(p).toMatch(/^(?:&amp;)+$/);
  });
});
