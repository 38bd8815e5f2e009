// Contract: the real Gemini CLI, run with the gemini adapter's invocation against a fake Gemini API,
// receives both prompt parts byte-identical on stdin, and the adapter reads its real stream-json output.
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GEMINI_DEFAULT_MODEL, GEMINI_PROMPT_SUFFIX, gemini } from '../../src/agents/gemini.js';
import type { InvocationInput } from '../../src/agents/types.js';
import { hostilePrompt, makeAgentPaths, requireCli, runInvocation } from '../support/agent-clis.js';
import { GEMINI_ANSWER, GEMINI_USAGE, generateRequests, startGemini } from '../support/providers/gemini.js';
import { findRequestContaining } from '../support/providers/server.js';
import type { FakeProvider } from '../support/providers/server.js';

const cli = requireCli('gemini');
const RUN_TIMEOUT_MS = 90_000;
const roots: string[] = [];

async function input(provider: FakeProvider, system: string, user: string) {
  const paths = await makeAgentPaths();
  roots.push(paths.root);
  const inp: InvocationInput = {
    prompt: { system, user },
    maxTurns: 5,
    extraArgs: [],
    paths,
    providers: { geminiBaseUrl: provider.url },
    secrets: { GEMINI_API_KEY: 'gemini-contract-test-key' },
  };
  return { inp, paths };
}

describe.skipIf(!cli)('gemini CLI contract', () => {
  let provider: FakeProvider;
  beforeAll(async () => {
    provider = await startGemini();
  });
  afterAll(async () => {
    await provider.close();
    await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
  });

  it('delivers a 128 KB system part and a 256 KB user part byte-identical and reads the real stream-json result', async () => {
    const system = hostilePrompt('GEMINI-SYSTEM', 128 * 1024);
    const user = hostilePrompt('GEMINI-USER', 256 * 1024);
    const { inp, paths } = await input(provider, system, user);
    const invocation = gemini.buildInvocation(inp);
    expect(invocation.args.join('\n')).not.toContain('BEGIN-');
    const output = await runInvocation(invocation, paths, dirname(cli ?? ''), RUN_TIMEOUT_MS);

    const outcome = gemini.parseOutput(output);
    expect(outcome, output.stderr).toMatchObject({
      status: 'succeeded',
      exitCode: 0,
      turns: 1,
      finalMessage: GEMINI_ANSWER,
    });
    expect(outcome.tokens).toEqual({
      input: GEMINI_USAGE.promptTokenCount,
      output: GEMINI_USAGE.candidatesTokenCount,
    });
    const calls = generateRequests(provider);
    // -m is always passed, so there is no routing call: exactly one model call, to the default model.
    expect(calls.map((c) => c.url.split('?')[0])).toEqual([
      `/v1beta/models/${GEMINI_DEFAULT_MODEL}:streamGenerateContent`,
    ]);
    expect(
      findRequestContaining(calls, `${system}\n\n${user}\n\n${GEMINI_PROMPT_SUFFIX}`),
      'stdin + -p text',
    ).toBeDefined();
    expect(calls[0]?.headers['x-goog-api-key']).toBe('gemini-contract-test-key');
  });

  it('reports an auth failure from a 401 and keeps the exit code', async () => {
    const { inp, paths } = await input(provider, 'system', 'user');
    provider.failWith = 401;
    try {
      const output = await runInvocation(
        gemini.buildInvocation(inp),
        paths,
        dirname(cli ?? ''),
        RUN_TIMEOUT_MS,
      );
      const outcome = gemini.parseOutput(output);
      expect(outcome.status).toBe('auth_failed');
      expect(outcome.exitCode).toBe(output.exitCode);
      expect(outcome.exitCode).not.toBe(0);
      expect(outcome.error).toContain('401');
    } finally {
      provider.failWith = undefined;
    }
  });
});
