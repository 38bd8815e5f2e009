import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { CODEX_CONFIG_FILE, CODEX_PROVIDER_ID, codex } from '../../../src/agents/codex.js';
import type { InvocationInput } from '../../../src/agents/types.js';
import { fixture, promptLeaks, run, sampleInput } from './helpers.js';

describe('codex invocation', () => {
  it('puts the system part in config.toml and the user part on stdin, never in argv or env', () => {
    const input = sampleInput();
    const inv = codex.buildInvocation(input);
    expect(promptLeaks(inv.args, inv.env)).toBe(false);
    expect(inv.stdin).toBe(input.prompt.user);
    expect(inv.files).toHaveLength(1);
    expect(inv.files[0]).toMatchObject({ path: CODEX_CONFIG_FILE, inHome: true });
    expect(inv.files[0]?.content).toContain(
      'developer_instructions = "SYSTEM-MARKER-7f3a \\"quoted\\" $(whoami) `id`\\nsecond line é"',
    );
    expect(inv.env.CODEX_HOME).toBe('/home/agent/.codex');
  });

  it('runs exec with JSON lines, outside git, unsandboxed inside the container, prompt from stdin last', () => {
    const inv = codex.buildInvocation(sampleInput());
    expect(inv.command).toBe('codex');
    expect(inv.args).toEqual([
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--dangerously-bypass-approvals-and-sandbox',
      '--model',
      'some-model',
      '--extra-flag',
      '-',
    ]);
  });

  it('declares a model provider for a configured base URL, keyed by CODEX_API_KEY', () => {
    const inv = codex.buildInvocation(sampleInput({ providers: { openaiBaseUrl: 'http://gw:4000/v1' } }));
    const toml = inv.files[0]?.content ?? '';
    expect(toml).toContain(`model_provider = "${CODEX_PROVIDER_ID}"`);
    expect(toml).toContain(`[model_providers.${CODEX_PROVIDER_ID}]`);
    expect(toml).toContain('base_url = "http://gw:4000/v1"');
    expect(toml).toContain('env_key = "CODEX_API_KEY"');
    expect(toml).toContain('wire_api = "responses"');
    expect(toml.indexOf('model_provider =')).toBeLessThan(toml.indexOf('[model_providers.'));
  });

  it('writes a config.toml that parses back to the exact system part and provider settings', () => {
    const system = 'a "b" \\ c\n\t\r\u0001\u007f é 🚨 $(x) `y` \u2028 end';
    const inv = codex.buildInvocation(
      sampleInput({ prompt: { system, user: 'u' }, providers: { openaiBaseUrl: 'http://gw:4000/v1' } }),
    );
    expect(parse(inv.files[0]?.content ?? '')).toEqual({
      check_for_update_on_startup: false,
      model_provider: CODEX_PROVIDER_ID,
      developer_instructions: system,
      web_search: 'disabled',
      features: { multi_agent: false, goals: false, view_image: false },
      tools: { experimental_request_user_input: { enabled: false } },
      skills: { bundled: { enabled: false } },
      model_providers: {
        [CODEX_PROVIDER_ID]: {
          name: 'triage-runner provider',
          base_url: 'http://gw:4000/v1',
          env_key: 'CODEX_API_KEY',
          wire_api: 'responses',
        },
      },
    });
  });

  it('turns off every tool an investigation does without, and on the ones agent.extra_tools names', () => {
    const config = (extra: Partial<InvocationInput>) =>
      parse(codex.buildInvocation(sampleInput(extra)).files[0]?.content ?? '') as Record<string, unknown>;
    expect(config({})).toMatchObject({
      web_search: 'disabled',
      features: { multi_agent: false, goals: false, view_image: false },
      tools: { experimental_request_user_input: { enabled: false } },
      skills: { bundled: { enabled: false } },
    });
    expect(config({ extraTools: ['web', 'subagent', 'workflow'] })).toMatchObject({
      web_search: 'live',
      features: { multi_agent: true, goals: true },
    });
    // The persona's policy wins over the configuration.
    const policy = {
      persona: 'p',
      allowedTools: [],
      deniedTools: ['web', 'shell'],
      deniedCommands: [],
      reason: 'r',
    };
    expect(
      config({ extraTools: ['web'], permissions: policy as InvocationInput['permissions'] }),
    ).toMatchObject({
      web_search: 'disabled',
      features: { shell_tool: false },
    });
  });

  it('names exec_command and write_stdin as the only tools its requests define', () => {
    expect(codex.toolNames?.({})).toEqual(['exec_command', 'write_stdin']);
  });

  it('uses the built-in provider when no base URL is configured', () => {
    const toml = codex.buildInvocation(sampleInput()).files[0]?.content ?? '';
    expect(toml).not.toContain('model_provider');
  });

  it('takes CODEX_API_KEY, falling back to OPENAI_API_KEY', () => {
    expect(codex.buildInvocation(sampleInput()).secretEnv).toEqual({ CODEX_API_KEY: 'sk-codex-secret' });
    const fallback = codex.buildInvocation(sampleInput({ secrets: { OPENAI_API_KEY: 'sk-o' } }));
    expect(fallback.secretEnv).toEqual({ CODEX_API_KEY: 'sk-o' });
  });
});

describe('codex output', () => {
  it('sums turn.completed usage from a real run and ignores the non-fatal metadata warning item', () => {
    expect(codex.parseOutput(fixture('codex-success'))).toEqual({
      status: 'succeeded',
      exitCode: 0,
      turns: 1,
      tokens: { input: 2345, output: 67 },
      finalMessage: 'Investigation complete: the node ran out of memory.',
    });
  });

  it('reads progress from its JSON lines: turns, usage, commands, and a refused key', () => {
    const reader = codex.progress?.();
    const lines = [
      { type: 'turn.started' },
      { type: 'item.started', item: { type: 'command_execution', command: 'kubectl get pods' } },
      { type: 'turn.completed', usage: { input_tokens: 50, output_tokens: 7 } },
    ].map((e) => JSON.stringify(e));
    expect(reader?.push(Buffer.from(`${lines.join('\n')}\n`))).toEqual({
      turns: 1,
      lastTool: 'shell',
      tokens: { input: 50, output: 7 },
    });
    const error = JSON.stringify({
      type: 'error',
      message: 'unexpected status 401 Unauthorized: Incorrect API key',
    });
    expect(reader?.push(Buffer.from(`${error}\n`))?.authFailure).toMatch(
      /refused the credentials.*CODEX_API_KEY/,
    );
  });

  it('sums usage over several turns', () => {
    const line = (i: number, o: number) =>
      JSON.stringify({ type: 'turn.completed', usage: { input_tokens: i, output_tokens: o } });
    const stdout = [JSON.stringify({ type: 'thread.started' }), line(10, 1), line(20, 2)].join('\n');
    expect(codex.parseOutput(run({ stdout }))).toMatchObject({
      status: 'succeeded',
      turns: 2,
      tokens: { input: 30, output: 3 },
    });
  });

  it('recognises a real 401 as an auth failure and keeps exit code 1', () => {
    const outcome = codex.parseOutput(fixture('codex-401'));
    expect(outcome).toMatchObject({ status: 'auth_failed', exitCode: 1 });
    expect(outcome.error).toMatch(/401 Unauthorized/);
  });

  it('ignores an error the CLI recovered from before completing the turn', () => {
    const stdout = [
      JSON.stringify({
        type: 'error',
        message: 'Reconnecting... 1/5 (stream disconnected before completion)',
      }),
      JSON.stringify({ type: 'turn.completed', usage: { input_tokens: 4, output_tokens: 2 } }),
    ].join('\n');
    expect(codex.parseOutput(run({ stdout }))).toMatchObject({
      status: 'succeeded',
      tokens: { input: 4, output: 2 },
    });
  });

  it('reports a failed turn that is not about auth as failed', () => {
    const stdout = JSON.stringify({
      type: 'turn.failed',
      error: { message: 'stream disconnected before completion' },
    });
    expect(codex.parseOutput(run({ stdout, exitCode: 1 }))).toMatchObject({ status: 'failed', exitCode: 1 });
  });

  it('reports events without a completed turn as failed', () => {
    const stdout = JSON.stringify({ type: 'thread.started' });
    const outcome = codex.parseOutput(run({ stdout }));
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatch(/no turn\.completed/);
  });
});
