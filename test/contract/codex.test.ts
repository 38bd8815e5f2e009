// Contract: the real Codex CLI, run with the codex adapter's invocation against a fake OpenAI
// Responses API, receives both prompt parts byte-identical, and the adapter reads its real JSONL.
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codex } from '../../src/agents/codex.js';
import type { InvocationInput } from '../../src/agents/types.js';
import { hostilePrompt, makeAgentPaths, requireCli, runInvocation } from '../support/agent-clis.js';
import { OPENAI_USAGE, responsesRequests, startOpenAI } from '../support/providers/openai.js';
import { findRequestContaining } from '../support/providers/server.js';
import type { FakeProvider } from '../support/providers/server.js';

const cli = requireCli('codex');
const RUN_TIMEOUT_MS = 90_000;
const roots: string[] = [];

async function input(provider: FakeProvider, system: string, user: string) {
  const paths = await makeAgentPaths();
  roots.push(paths.root);
  const inp: InvocationInput = {
    prompt: { system, user },
    model: 'gpt-5-codex',
    maxTurns: 5,
    extraArgs: [],
    paths,
    providers: { openaiBaseUrl: `${provider.url}/v1` },
    secrets: { OPENAI_API_KEY: 'sk-openai-contract-test' },
  };
  return { inp, paths };
}

describe.skipIf(!cli)('codex CLI contract', () => {
  let provider: FakeProvider;
  beforeAll(async () => {
    provider = await startOpenAI();
  });
  afterAll(async () => {
    await provider.close();
    await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
  });

  it('delivers a 300 KB system part and a 1 MiB user part byte-identical and parses the real JSONL', async () => {
    const system = hostilePrompt('CODEX-SYSTEM', 300 * 1024);
    const user = hostilePrompt('CODEX-USER', 1024 * 1024);
    const { inp, paths } = await input(provider, system, user);
    const invocation = codex.buildInvocation(inp);
    expect(invocation.args.join('\n')).not.toContain('BEGIN-');
    const output = await runInvocation(invocation, paths, dirname(cli ?? ''), RUN_TIMEOUT_MS);

    const outcome = codex.parseOutput(output);
    expect(outcome, output.stderr).toMatchObject({ status: 'succeeded', exitCode: 0, turns: 1 });
    expect(outcome.tokens).toEqual({ input: OPENAI_USAGE.input_tokens, output: OPENAI_USAGE.output_tokens });
    const calls = responsesRequests(provider);
    expect(calls.length).toBeGreaterThan(0);
    const withSystem = findRequestContaining(calls, system);
    expect(withSystem, 'system part (developer_instructions) in a request').toBeDefined();
    // developer_instructions arrive as a developer message ahead of the user's.
    const body = JSON.parse(withSystem?.body ?? '{}') as {
      input?: { role?: string; content?: { text?: string }[] }[];
    };
    const developer = body.input?.find(
      (m) => m.role === 'developer' && m.content?.some((c) => c.text === system),
    );
    expect(developer, 'a developer message whose text is exactly the system part').toBeDefined();
    expect(findRequestContaining(calls, user), 'user part in a request').toBeDefined();
    expect(calls[0]?.headers.authorization).toBe('Bearer sk-openai-contract-test');
  });

  it('reports an auth failure from a 401 and keeps the exit code', async () => {
    const { inp, paths } = await input(provider, 'system', 'user');
    provider.failWith = 401;
    try {
      const output = await runInvocation(
        codex.buildInvocation(inp),
        paths,
        dirname(cli ?? ''),
        RUN_TIMEOUT_MS,
      );
      const outcome = codex.parseOutput(output);
      expect(outcome.status).toBe('auth_failed');
      expect(outcome.exitCode).toBe(output.exitCode);
      expect(outcome.exitCode).not.toBe(0);
      expect(outcome.error).toContain('401');
    } finally {
      provider.failWith = undefined;
    }
  });
});
