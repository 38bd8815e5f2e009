import { describe, expect, it } from 'vitest';
import type { Evidence } from '../../../src/workspace/run-record.js';
import { readAnswer, readWithModel, verifyPrompt } from '../../../src/evidence/model-verify.js';
import { evidenceOf } from '../../support/evidence.js';

const GROUNDED: Evidence = evidenceOf({
  verdict: 'grounded',
  facts: 2,
  verified: 3,
  headline: 'api exits on a bad HTTP_PORT',
  claims: [
    {
      text: 'api exits on a bad HTTP_PORT',
      kind: 'headline',
      status: 'supported',
      source: 'FACT-1',
      why: 'holds',
      chain: true,
    },
    {
      text: 'the log says FATAL',
      kind: 'fact',
      id: 'FACT-1',
      status: 'supported',
      source: 'kubectl logs api -p',
      why: 'found',
      chain: true,
    },
    {
      text: 'web is ready',
      kind: 'fact',
      id: 'FACT-2',
      status: 'supported',
      source: 'kubectl get pods',
      why: 'found',
    },
    {
      text: 'fails at start',
      kind: 'inference',
      id: 'INF-1',
      status: 'supported',
      source: 'FACT-1',
      why: 'holds',
      chain: true,
    },
  ],
  claimsSupported: 4,
  claimsTotal: 4,
  reason: 'the headline and the chain behind it hold',
  checks: ['deterministic'],
});

describe('the model reader', () => {
  it("reads the model's answer as JSON or words, and nothing from an answer without one", () => {
    expect(readAnswer('{"answer": "contradicted", "why": "exit code 1, not 137"}')).toEqual({
      answer: 'contradicted',
      why: 'exit code 1, not 137',
    });
    expect(readAnswer('Not enough information in the output.')).toMatchObject({
      answer: 'not enough information',
    });
    expect(readAnswer('```json\n{"answer":"supported"}\n```')).toMatchObject({ answer: 'supported' });
    expect(readAnswer('I like turtles')).toBeUndefined();
  });

  it('shows the model the claim and its cited output, nothing else of the run', () => {
    const prompt = verifyPrompt(
      GROUNDED.claims?.[1] ?? ({} as never),
      '$ kubectl logs api -p\nFATAL bad port',
    );
    expect(prompt.user).toBe(
      '<claim kind="fact">\nthe log says FATAL\n</claim>\n<cited_output>\n$ kubectl logs api -p\nFATAL bad port\n</cited_output>',
    );
    expect(prompt.system).toContain('supported" | "contradicted" | "not enough information"');
  });

  it('only lowers: a contradicted chain link makes the run ungrounded, an unsupported side fact partial, agreement changes nothing', async () => {
    const asked: string[] = [];
    const answers: Record<string, string> = {
      'api exits on a bad HTTP_PORT': '{"answer":"supported"}',
      'the log says FATAL': '{"answer":"contradicted","why":"the log says INFO"}',
      'web is ready': '{"answer":"supported"}',
    };
    const ask = async ({ user }: { user: string }) => {
      const text = /<claim kind="\w+">\n(.*)\n<\/claim>/.exec(user)?.[1] ?? '';
      asked.push(text);
      return answers[text] ?? '';
    };
    const contradicted = await readWithModel(GROUNDED, () => '', ask, 20);
    expect(asked).toEqual(['api exits on a bad HTTP_PORT', 'the log says FATAL', 'web is ready']);
    expect(contradicted).toMatchObject({
      verdict: 'ungrounded',
      checks: ['deterministic', 'model'],
      claimsSupported: 3,
    });
    expect(contradicted.claims?.[1]).toMatchObject({
      status: 'contradicted',
      why: expect.stringMatching(/^the model reader: contradicted — the log says INFO/),
    });

    answers['the log says FATAL'] = '{"answer":"supported"}';
    answers['web is ready'] = '{"answer":"not enough information"}';
    expect((await readWithModel(GROUNDED, () => '', ask, 20)).verdict).toBe('partial');
    answers['web is ready'] = '{"answer":"supported"}';
    const agreed = await readWithModel(GROUNDED, () => '', ask, 20);
    expect(agreed).toMatchObject({
      verdict: 'grounded',
      claimsSupported: 4,
      checks: ['deterministic', 'model'],
    });
    const ungrounded = await readWithModel(
      { ...GROUNDED, verdict: 'ungrounded' },
      () => '',
      async () => '{"answer":"supported"}',
      20,
    );
    expect(ungrounded.verdict).toBe('ungrounded');
  });

  it('reads at most max_claims claims, the headline and its chain first, and names a failed call as a gap', async () => {
    const asked: string[] = [];
    const evidence = await readWithModel(
      GROUNDED,
      () => '',
      async ({ user }) => {
        asked.push(user);
        throw new Error('no answer within 30000 ms (evidence.timeout)');
      },
      2,
    );
    expect(asked).toHaveLength(2);
    expect(asked[0]).toContain('kind="headline"');
    expect(evidence.verdict).toBe('grounded');
    expect(evidence.gaps).toEqual([
      'the model reader could not read 2 claim(s): headline: no answer within 30000 ms (evidence.timeout)',
    ]);
  });
});
