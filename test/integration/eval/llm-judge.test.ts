// The LLM judge against local stand-in servers speaking the Anthropic Messages API and an
// OpenAI-compatible chat API: the fixed rubric and the report reach the server, the verdict comes
// back parsed, and bad answers and HTTP errors become errors that never carry the key.
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadCase, type EvalCase } from '../../../src/eval/cases/load.js';
import { createJudge, JUDGE_SYSTEM } from '../../../src/eval/llm-judge.js';
import { startProvider, type FakeProvider, type ProviderReply } from '../../support/providers/server.js';
import { REPO_ROOT, testConfig } from '../../support/runs.js';

const KEY = 'sk-judge-test-0123456789abcdef';
let evalCase: EvalCase;
let server: FakeProvider | undefined;

beforeAll(async () => {
  evalCase = await loadCase(path.join(REPO_ROOT, 'examples', 'evals', 'crashloop-bad-config'));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const anthropicText = (text: string): ProviderReply => ({
  kind: 'json',
  body: {
    id: 'msg_j',
    type: 'message',
    role: 'assistant',
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
  },
});

async function judgeAgainst(
  provider: 'anthropic' | 'openai',
  reply: (path: string) => ProviderReply | undefined,
) {
  server = await startProvider(
    (req) => reply(req.url),
    (status) => ({ error: { message: `status ${status}` } }),
  );
  const base = provider === 'anthropic' ? server.url : `${server.url}/v1`;
  const config = testConfig('/tmp', {
    eval: { judge: { provider, model: 'judge-model', base_url: base, secret: 'JUDGE_KEY', timeout: '5s' } },
  });
  return createJudge({ config, secrets: { JUDGE_KEY: KEY }, env: {} });
}

describe('LLM judge', () => {
  it('sends the rubric, answer key and report to the Messages API and parses the verdict', async () => {
    const judge = await judgeAgainst('anthropic', (p) =>
      p === '/v1/messages'
        ? anthropicText('{"verdict":"correct","score":0.9,"rationale":"Names the ConfigMap and the typo."}')
        : undefined,
    );
    const verdict = await judge({
      evalCase,
      report: '## 4. Root Cause\nConfigMap orders-api-config has HTTP_PORT=8O80.',
    });
    expect(verdict).toEqual({
      verdict: 'correct',
      score: 0.9,
      rationale: 'Names the ConfigMap and the typo.',
      provider: 'anthropic',
      model: 'judge-model',
    });
    const req = server?.requests[0];
    expect(req?.headers['x-api-key']).toBe(KEY);
    const body = JSON.parse(req?.body ?? '{}') as {
      model: string;
      system: string;
      messages: { content: string }[];
    };
    expect(body.model).toBe('judge-model');
    expect(body.system).toBe(JUDGE_SYSTEM);
    expect(body.messages[0]?.content).toContain('True root causes: configmap/orders-api-config');
    expect(body.messages[0]?.content).toContain(
      '<report>\n## 4. Root Cause\nConfigMap orders-api-config has HTTP_PORT=8O80.\n</report>',
    );
  });

  it('speaks an OpenAI-compatible chat API too', async () => {
    const judge = await judgeAgainst('openai', (p) =>
      p === '/v1/chat/completions'
        ? {
            kind: 'json',
            body: {
              choices: [
                {
                  message: {
                    role: 'assistant',
                    content: 'Verdict: {"verdict":"incorrect","score":0.1,"rationale":"Blames the node."}',
                  },
                },
              ],
            },
          }
        : undefined,
    );
    expect(await judge({ evalCase, report: 'The node is broken.' })).toMatchObject({
      verdict: 'incorrect',
      score: 0.1,
      provider: 'openai',
    });
    expect(server?.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('rejects an answer that is not a verdict', async () => {
    const judge = await judgeAgainst('anthropic', () => anthropicText('{"verdict":"great","score":1}'));
    await expect(judge({ evalCase, report: 'x' })).rejects.toThrow(
      /verdict "great" is not one of correct, partially_correct, incorrect/,
    );
  });

  it('turns an HTTP error into a message that names the URL and status but not the key', async () => {
    const judge = await judgeAgainst('anthropic', () => ({ kind: 'json', status: 500, body: { echo: KEY } }));
    const err = await judge({ evalCase, report: 'x' }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/answered HTTP 500/);
    expect((err as Error).message).not.toContain(KEY);
  });

  it('refuses to start without its key', () => {
    const config = testConfig('/tmp');
    expect(() => createJudge({ config, secrets: {}, env: {} })).toThrow(
      /eval.judge.secret \(ANTHROPIC_API_KEY\)/,
    );
  });
});
