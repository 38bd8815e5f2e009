import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  accuracyBy,
  accuracyOverall,
  confidenceIn,
  formatAccuracy,
  isHighConfidence,
  type GradedAnswer,
} from '../../../src/feedback/accuracy.js';
import { parseFeedbackInput } from '../../../src/feedback/feedback.js';
import { parseSlackInteraction, verifySlackSignature } from '../../../src/feedback/slack-interaction.js';

const answers: GradedAnswer[] = [
  {
    folder: 'a',
    agent: 'claude',
    model: 'sonnet',
    cluster: 'prod',
    faultType: 'CrashLoop',
    confidence: 'high',
    verdict: 'correct',
  },
  {
    folder: 'b',
    agent: 'claude',
    model: 'sonnet',
    cluster: 'prod',
    faultType: 'CrashLoop',
    confidence: 'high',
    verdict: 'wrong',
  },
  {
    folder: 'c',
    agent: 'claude',
    model: 'opus',
    cluster: 'staging',
    faultType: 'OOMKilled',
    confidence: 'low',
    verdict: 'wrong',
  },
  {
    folder: 'd',
    agent: 'codex',
    cluster: 'prod',
    faultType: 'OOMKilled',
    confidence: '90%',
    verdict: 'partly',
  },
  { folder: 'e', agent: 'codex', cluster: 'prod', faultType: 'CrashLoop' },
];

describe('accuracy over time', () => {
  it('grades rated answers 100 / 50 / 0 per agent and counts confident-wrong answers beside the rate', () => {
    const byAgent = accuracyBy('agent', answers);
    expect(byAgent).toEqual([
      { key: 'claude', answers: 3, rated: 3, correct: 1, partly: 0, wrong: 2, confidentWrong: 1, rate: 33.3 },
      { key: 'codex', answers: 2, rated: 1, correct: 0, partly: 1, wrong: 0, confidentWrong: 0, rate: 50 },
    ]);
    expect(accuracyBy('model', answers).find((r) => r.key === '(none)')).toMatchObject({
      answers: 2,
      rated: 1,
    });
    expect(accuracyBy('faultType', answers).map((r) => [r.key, r.rate])).toEqual([
      ['CrashLoop', 50],
      ['OOMKilled', 25],
    ]);
    expect(accuracyOverall(answers)).toMatchObject({
      key: 'all',
      answers: 5,
      rated: 4,
      confidentWrong: 1,
      rate: 37.5,
    });
  });

  it('says there is no feedback yet, and how to give it, when nothing is rated', () => {
    const text = formatAccuracy([{ folder: 'x', agent: 'claude' }]);
    expect(text).toContain('1 answers, 0 rated');
    expect(text).toContain('POST /v1/incidents/{id}/feedback');
    expect(formatAccuracy(answers)).toMatch(/accuracy 37\.5%, 1 confident-wrong/);
  });

  it('reads high confidence as agents write it and finds it in the one-line answer', () => {
    for (const high of ['high', 'Very high', '85%', '0.9', '1'])
      expect(isHighConfidence(high), high).toBe(true);
    for (const low of ['medium', 'low', '60%', '0.5', undefined])
      expect(isHighConfidence(low), String(low)).toBe(false);
    expect(confidenceIn('Hypothesis: x; confidence high; first action: y')).toBe('high');
    expect(confidenceIn('Hypothesis: x (confidence: 85%)')).toBe('85%');
    expect(confidenceIn('Hypothesis: x')).toBeUndefined();
    // The shared reader: "very high", and "high confidence" written before the word.
    expect(isHighConfidence(confidenceIn('Hypothesis: x — Confidence: Very High'))).toBe(true);
    expect(isHighConfidence(confidenceIn('We have high confidence that the node is full'))).toBe(true);
  });
});

describe('feedback input', () => {
  it('takes a verdict with an optional cause and author, trimmed, and explains what is wrong otherwise', () => {
    expect(parseFeedbackInput({ verdict: 'partly', cause: '  disk full ', by: 'ann' })).toEqual({
      ok: true,
      input: { verdict: 'partly', cause: 'disk full', by: 'ann' },
    });
    expect(parseFeedbackInput([])).toMatchObject({ ok: false });
    expect(parseFeedbackInput({ verdict: 'yes' })).toMatchObject({
      ok: false,
      message: expect.stringContaining('correct'),
    });
    expect(parseFeedbackInput({ verdict: 'wrong', cause: 7 })).toMatchObject({
      ok: false,
      message: 'cause must be a string',
    });
    expect(parseFeedbackInput({ verdict: 'wrong', cause: 'x'.repeat(2001) })).toMatchObject({ ok: false });
  });
});

describe('Slack interactions', () => {
  const secret = 'shh-signing-secret';
  it('accepts only the exact body signed within five minutes', () => {
    const body = 'payload=%7B%7D';
    const at = 1_800_000_000;
    const sig = `v0=${createHmac('sha256', secret).update(`v0:${at}:${body}`).digest('hex')}`;
    expect(verifySlackSignature(secret, { signature: sig, timestamp: String(at) }, body, at * 1000)).toEqual({
      ok: true,
    });
    expect(
      verifySlackSignature(secret, { signature: sig, timestamp: String(at) }, body, (at + 301) * 1000),
    ).toMatchObject({ ok: false });
    expect(
      verifySlackSignature(secret, { signature: sig, timestamp: String(at) }, `${body}x`, at * 1000),
    ).toMatchObject({ ok: false });
    expect(
      verifySlackSignature(secret, { signature: 'v0=00', timestamp: 'soon' }, body, at * 1000),
    ).toMatchObject({ ok: false });
  });

  it('finds the feedback button among the actions and ignores other clicks', () => {
    const form = (payload: unknown) => `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    expect(
      parseSlackInteraction(
        form({
          type: 'block_actions',
          user: { id: 'U1', name: 'bo' },
          actions: [{ action_id: 'triage_feedback_correct', value: 'inc-a' }],
        }),
      ),
    ).toEqual({ kind: 'feedback', action: { folder: 'inc-a', verdict: 'correct', by: 'slack:bo (U1)' } });
    expect(parseSlackInteraction(form({ type: 'view_submission' }))).toMatchObject({ kind: 'ignored' });
    expect(
      parseSlackInteraction(form({ type: 'block_actions', actions: [{ action_id: 'open_page' }] })),
    ).toMatchObject({ kind: 'ignored' });
    expect(
      parseSlackInteraction(
        form({ type: 'block_actions', actions: [{ action_id: 'triage_feedback_meh', value: 'x' }] }),
      ),
    ).toMatchObject({ kind: 'invalid' });
    expect(parseSlackInteraction('nothing=1')).toMatchObject({ kind: 'invalid' });
    expect(parseSlackInteraction('payload=%7Bnot')).toMatchObject({ kind: 'invalid' });
  });
});
