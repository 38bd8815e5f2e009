// Contract: the real Claude Code CLI, run with the claude adapter's invocation against a fake
// Anthropic API, receives both prompt parts byte-identical, and the adapter reads its real output.
import { existsSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claude } from '../../src/agents/claude.js';
import type { InvocationInput } from '../../src/agents/types.js';
import { hostilePrompt, makeAgentPaths, requireCli, runInvocation } from '../support/agent-clis.js';
import { ANTHROPIC_USAGE, messageRequests, startAnthropic } from '../support/providers/anthropic.js';
import type { AnthropicFake } from '../support/providers/anthropic.js';
import { findRequestContaining } from '../support/providers/server.js';

const cli = requireCli('claude');
const RUN_TIMEOUT_MS = 90_000;
const roots: string[] = [];

async function input(
  provider: AnthropicFake,
  system: string,
  user: string,
  maxTurns = 5,
): Promise<{
  input: InvocationInput;
  paths: Awaited<ReturnType<typeof makeAgentPaths>>;
}> {
  const paths = await makeAgentPaths();
  roots.push(paths.root);
  return {
    paths,
    input: {
      prompt: { system, user },
      model: 'sonnet',
      maxTurns,
      extraArgs: [],
      paths,
      providers: { anthropicBaseUrl: provider.url },
      secrets: { ANTHROPIC_API_KEY: 'sk-ant-contract-test', OPENAI_API_KEY: 'not-for-claude' },
    },
  };
}

describe.skipIf(!cli)('claude CLI contract', () => {
  let provider: AnthropicFake;
  beforeAll(async () => {
    provider = await startAnthropic();
  });
  afterAll(async () => {
    await provider.close();
    await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
  });

  it('delivers a 1 MiB user part and a 200 KB system part byte-identical and parses the real result', async () => {
    const system = hostilePrompt('CLAUDE-SYSTEM', 200 * 1024);
    const user = hostilePrompt('CLAUDE-USER', 1024 * 1024);
    const { input: inp, paths } = await input(provider, system, user);
    const invocation = claude.buildInvocation(inp);
    expect(invocation.args.join('\n')).not.toContain('BEGIN-');
    const output = await runInvocation(invocation, paths, dirname(cli ?? ''), RUN_TIMEOUT_MS);

    const outcome = claude.parseOutput(output);
    expect(outcome, output.stderr).toMatchObject({ status: 'succeeded', exitCode: 0, turns: 1 });
    expect(outcome.tokens).toEqual({
      input: ANTHROPIC_USAGE.input_tokens,
      output: ANTHROPIC_USAGE.output_tokens,
    });
    expect(outcome.costUsd).toBeGreaterThan(0);
    const calls = messageRequests(provider);
    const withSystem = findRequestContaining(calls, system);
    expect(withSystem, 'system part in a /v1/messages body').toBeDefined();
    // Appended to Claude's own system prompt, not sent as a message.
    const body = JSON.parse(withSystem?.body ?? '{}') as { system?: { text?: string }[] };
    expect(body.system?.some((block) => block.text?.includes(system))).toBe(true);
    expect(findRequestContaining(calls, user), 'user part in a /v1/messages body').toBeDefined();
    expect(provider.unknown.map((r) => `${r.method} ${r.url}`)).toEqual([]);
  });

  it('reports an auth failure from a 401 and keeps the exit code', async () => {
    const { input: inp, paths } = await input(provider, 'system', 'user');
    provider.failWith = 401;
    try {
      const output = await runInvocation(
        claude.buildInvocation(inp),
        paths,
        dirname(cli ?? ''),
        RUN_TIMEOUT_MS,
      );
      const outcome = claude.parseOutput(output);
      expect(outcome.status).toBe('auth_failed');
      expect(outcome.exitCode).toBe(output.exitCode);
      expect(outcome.exitCode).not.toBe(0);
      expect(outcome.error).toContain('401');
    } finally {
      provider.failWith = undefined;
    }
  });

  it('runs a pre-approved Bash tool unattended and reports the turn limit', async () => {
    const { input: inp, paths } = await input(provider, 'system', 'run the tool', 1);
    const marker = join(paths.workspaceDir, 'ran-by-claude');
    provider.toolCall = { name: 'Bash', input: { command: `touch ${marker}`, description: 'contract test' } };
    try {
      const output = await runInvocation(
        claude.buildInvocation(inp),
        paths,
        dirname(cli ?? ''),
        RUN_TIMEOUT_MS,
      );
      const outcome = claude.parseOutput(output);
      expect(existsSync(marker), `Bash tool ran under --permission-mode dontAsk: ${output.stdout}`).toBe(
        true,
      );
      expect(outcome.status).toBe('turn_limit');
      expect(outcome.exitCode).toBe(output.exitCode);
    } finally {
      provider.toolCall = undefined;
    }
  });

  it('writes the report with the pre-approved Write tool and succeeds over two model calls', async () => {
    const { input: inp, paths } = await input(provider, 'system', 'write the report');
    const report = '# Report\n\n0. Executive Summary — written by the contract test\n';
    provider.toolCall = { name: 'Write', input: { file_path: paths.reportPath, content: report } };
    const before = messageRequests(provider).length;
    try {
      const output = await runInvocation(
        claude.buildInvocation(inp),
        paths,
        dirname(cli ?? ''),
        RUN_TIMEOUT_MS,
      );
      const outcome = claude.parseOutput(output);
      expect(outcome, output.stdout).toMatchObject({ status: 'succeeded', exitCode: 0, turns: 2 });
      expect(readFileSync(paths.reportPath, 'utf8')).toBe(report);
      const calls = messageRequests(provider).length - before;
      expect(outcome.tokens.output).toBe(calls * ANTHROPIC_USAGE.output_tokens);
    } finally {
      provider.toolCall = undefined;
    }
  });
});
