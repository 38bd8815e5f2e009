import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CLAUDE_SETTINGS,
  CLAUDE_SETTINGS_FILE,
  CLAUDE_SYSTEM_PROMPT_FILE,
  claude,
} from '../../../src/agents/claude.js';
import { fixture, promptLeaks, run, sampleInput } from './helpers.js';

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'fixtures', 'agent-output');

describe('claude invocation', () => {
  it('puts the system part in a file and the user part on stdin, never in argv or env', () => {
    const input = sampleInput();
    const inv = claude.buildInvocation(input);
    expect(promptLeaks(inv.args, inv.env)).toBe(false);
    expect(inv.stdin).toBe(input.prompt.user);
    expect(inv.files[0]).toEqual({ path: CLAUDE_SYSTEM_PROMPT_FILE, content: input.prompt.system });
    const at = inv.args.indexOf('--append-system-prompt-file');
    expect(inv.args[at + 1]).toBe(`/opt/triage/files/${CLAUDE_SYSTEM_PROMPT_FILE}`);
  });

  it('runs headless with streamed JSON events, the turn limit, the model and unattended permissions', () => {
    const inv = claude.buildInvocation(sampleInput());
    expect(inv.command).toBe('claude');
    // stream-json needs --verbose in print mode; its last line is the same result object as json.
    expect(inv.args.slice(0, 6)).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--max-turns',
      '7',
    ]);
    expect(inv.args).not.toContain('--dangerously-skip-permissions');
    expect(inv.args.join(' ')).toContain('--permission-mode dontAsk');
    expect(inv.args.some((a) => a.startsWith('--allowedTools=') && a.includes('Bash'))).toBe(true);
    expect(inv.args.join(' ')).toContain('--model some-model');
    expect(inv.args.at(-1)).toBe('--extra-flag');
  });

  it('offers only the tools an investigation needs, and hides the bundled skills, memory and attribution', () => {
    const inv = claude.buildInvocation(sampleInput());
    expect(inv.args).toContain('--tools=Bash,Read,Write,Glob,Grep,Skill');
    expect(inv.args).toContain('--allowedTools=Bash,Read,Write,Glob,Grep,Skill');
    const at = inv.args.indexOf('--settings');
    expect(inv.args[at + 1]).toBe(`/opt/triage/files/${CLAUDE_SETTINGS_FILE}`);
    const settings = inv.files.find((f) => f.path === CLAUDE_SETTINGS_FILE);
    expect(JSON.parse(settings?.content ?? '')).toEqual({
      disableBundledSkills: true,
      autoMemoryEnabled: false,
      attribution: { commit: '', pr: '' },
    });
    expect(CLAUDE_SETTINGS.disableBundledSkills).toBe(true);
    expect(claude.toolNames?.({})).toEqual([
      'Bash',
      'Read',
      'Write',
      'Glob',
      'Grep',
      'Skill',
      'DeferredToolPlaceholder',
    ]);
  });

  it('adds the tools agent.extra_tools names', () => {
    const inv = claude.buildInvocation(sampleInput({ extraTools: ['edit', 'web', 'schedule', 'workflow'] }));
    expect(inv.args).toContain(
      '--tools=Bash,Read,Write,Glob,Grep,Skill,Edit,WebFetch,WebSearch,ScheduleWakeup,Workflow',
    );
  });

  it('omits --model when none is configured', () => {
    const inv = claude.buildInvocation(sampleInput({ model: undefined }));
    expect(inv.args).not.toContain('--model');
  });

  it('passes only the Anthropic key as a secret and the base URL as plain env', () => {
    const inv = claude.buildInvocation(sampleInput({ providers: { anthropicBaseUrl: 'http://gw:8080' } }));
    expect(inv.secretEnv).toEqual({ ANTHROPIC_API_KEY: 'sk-ant-secret' });
    expect(inv.env.ANTHROPIC_BASE_URL).toBe('http://gw:8080');
    expect(inv.env.HOME).toBe('/home/agent');
    expect(Object.values(inv.env).join(' ')).not.toContain('secret');
  });
});

describe('claude output', () => {
  it('reads status, turns, tokens and cost from a real success', () => {
    expect(claude.parseOutput(fixture('claude-success'))).toEqual({
      status: 'succeeded',
      exitCode: 0,
      turns: 1,
      tokens: { input: 1234, output: 56 },
      costUsd: expect.any(Number) as number,
      finalMessage: expect.any(String) as string,
    });
  });

  it('reads progress from the stream as it arrives: turns, tokens, the last tool, and a refused key', () => {
    const reader = claude.progress?.();
    const assistant = (tool: string | undefined, input: number) =>
      JSON.stringify({
        type: 'assistant',
        message: {
          content: tool
            ? [
                { type: 'text', text: 'x' },
                { type: 'tool_use', name: tool },
              ]
            : [{ type: 'text' }],
          usage: { input_tokens: input, cache_read_input_tokens: 10, output_tokens: 5 },
        },
      });
    const first = assistant('Bash', 100);
    // A line split across two chunks is read once it is complete.
    expect(reader?.push(Buffer.from(first.slice(0, 40)))).toBeUndefined();
    expect(reader?.push(Buffer.from(`${first.slice(40)}\n`))).toEqual({
      turns: 1,
      tokens: { input: 110, output: 5 },
      lastTool: 'Bash',
    });
    expect(reader?.push(Buffer.from(`${assistant(undefined, 200)}\n`))).toEqual({
      turns: 2,
      tokens: { input: 320, output: 10 },
    });
    const retry = JSON.stringify({ type: 'system', subtype: 'api_retry', attempt: 1, error_status: 401 });
    expect(reader?.push(Buffer.from(`${retry}\n`))?.authFailure).toMatch(/HTTP 401.*ANTHROPIC_API_KEY/);
    const overloaded = JSON.stringify({
      type: 'system',
      subtype: 'api_retry',
      attempt: 1,
      error_status: 529,
    });
    expect(reader?.push(Buffer.from(`${overloaded}\n`))).toEqual({
      retrying: 'retrying the model API: HTTP 529, attempt 1',
    });
  });

  it("reports the real CLI's retries against a refused connection as progress, with the attempt", () => {
    // Recorded from claude 2.1 with ANTHROPIC_BASE_URL on a port nothing listens on.
    const lines = readFileSync(path.join(FIXTURES, 'claude-api-retry-refused.jsonl'));
    const update = claude.progress?.().push(lines);
    expect(update?.authFailure).toBeUndefined();
    expect(update?.retrying).toBe(
      'retrying the model API: could not connect (connection refused or unreachable: check providers.anthropic_base_url), attempt 3 of 10',
    );
  });

  it('recognises a real 401 as an auth failure and keeps exit code 1', () => {
    const outcome = claude.parseOutput(fixture('claude-401'));
    expect(outcome).toMatchObject({ status: 'auth_failed', exitCode: 1 });
    expect(outcome.error).toMatch(/HTTP 401/);
    expect(outcome.error).toContain('set ANTHROPIC_API_KEY (or the secret configured for it under secrets:)');
  });

  it('recognises a real error_max_turns result as the turn limit', () => {
    expect(claude.parseOutput(fixture('claude-max-turns'))).toMatchObject({
      status: 'turn_limit',
      exitCode: 1,
      turns: 2,
    });
  });

  it('counts cache tokens as input', () => {
    const stdout = JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      num_turns: 3,
      usage: {
        input_tokens: 10,
        cache_creation_input_tokens: 100,
        cache_read_input_tokens: 1000,
        output_tokens: 5,
      },
    });
    expect(claude.parseOutput(run({ stdout })).tokens).toEqual({ input: 1110, output: 5 });
  });

  it('never reports success for a non-zero exit even when the JSON says success', () => {
    const outcome = claude.parseOutput({ ...fixture('claude-success'), exitCode: 2 });
    expect(outcome).toMatchObject({ status: 'failed', exitCode: 2 });
    expect(outcome.error).toMatch(/exit code 2/);
  });

  it('reports a timeout as timed_out with the exit code it had', () => {
    const outcome = claude.parseOutput({
      ...fixture('claude-success'),
      exitCode: null,
      signal: 'SIGKILL',
      timedOut: true,
    });
    expect(outcome).toMatchObject({ status: 'timed_out', exitCode: null });
  });

  it('does not mistake a report that talks about 401 errors for an auth failure', () => {
    const stdout = JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      num_turns: 4,
      result: 'The service returns 401 Unauthorized because its invalid api key expired.',
      usage: { input_tokens: 1, output_tokens: 1 },
    });
    expect(claude.parseOutput(run({ stdout })).status).toBe('succeeded');
  });
});
