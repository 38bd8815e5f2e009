import { describe, expect, it } from 'vitest';
import {
  GEMINI_BUILTIN_SKILLS,
  GEMINI_DEFAULT_MODEL,
  GEMINI_PROMPT_SUFFIX,
  GEMINI_SETTINGS_FILE,
  gemini,
} from '../../../src/agents/gemini.js';
import type { InvocationInput } from '../../../src/agents/types.js';
import { fixture, promptLeaks, run, sampleInput } from './helpers.js';

const GEMINI_ANSWER = 'Investigation complete: the image tag does not exist.';

/** Events as stream-json prints them, one JSON object a line. */
const lines = (...events: object[]): string => events.map((e) => `${JSON.stringify(e)}\n`).join('');

describe('gemini invocation', () => {
  it('sends system then user part on stdin and only a fixed text with -p', () => {
    const input = sampleInput();
    const inv = gemini.buildInvocation(input);
    expect(promptLeaks(inv.args, inv.env)).toBe(false);
    expect(inv.stdin).toBe(`${input.prompt.system}\n\n${input.prompt.user}`);
    expect(inv.args.slice(0, 2)).toEqual(['-p', GEMINI_PROMPT_SUFFIX]);
  });

  it('runs with streamed JSON events, yolo approvals, a trusted workspace and always a model', () => {
    const inv = gemini.buildInvocation(sampleInput({ model: undefined }));
    expect(inv.args).toEqual([
      '-p',
      GEMINI_PROMPT_SUFFIX,
      '--output-format',
      'stream-json',
      '--approval-mode=yolo',
      '--model',
      GEMINI_DEFAULT_MODEL,
      '--extra-flag',
    ]);
    expect(inv.env.GEMINI_CLI_TRUST_WORKSPACE).toBe('true');
  });

  it('writes settings.json with API-key auth, the turn limit, telemetry and updates off, and only the tools an investigation needs', () => {
    const inv = gemini.buildInvocation(sampleInput());
    expect(inv.files).toHaveLength(1);
    expect(inv.files[0]).toMatchObject({ path: GEMINI_SETTINGS_FILE, inHome: true });
    expect(JSON.parse(inv.files[0]?.content ?? '')).toEqual({
      security: { auth: { selectedType: 'gemini-api-key' } },
      model: { maxSessionTurns: 7 },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, topicUpdateNarration: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      context: { includeDirectoryTree: false },
      experimental: { enableAgents: false },
      skills: { disabled: GEMINI_BUILTIN_SKILLS },
      tools: {
        core: [
          'run_shell_command',
          'read_file',
          'read_many_files',
          'list_directory',
          'write_file',
          'glob',
          'grep_search',
          'activate_skill',
        ],
      },
    });
  });

  it('allows the web and sub-agent tools in tools.core only when agent.extra_tools names them and the policy allows them', () => {
    const core = (extra: Partial<InvocationInput>) =>
      (
        JSON.parse(gemini.buildInvocation(sampleInput(extra)).files[0]?.content ?? '') as {
          tools: { core: string[] };
        }
      ).tools.core;
    expect(core({})).not.toContain('web_fetch');
    expect(core({ extraTools: ['web', 'subagent'] })).toEqual(
      expect.arrayContaining(['web_fetch', 'google_web_search', 'invoke_agent']),
    );
    const policy = { persona: 'p', allowedTools: [], deniedTools: ['web'], deniedCommands: [], reason: 'r' };
    expect(
      core({ extraTools: ['web'], permissions: policy as InvocationInput['permissions'] }),
    ).not.toContain('web_fetch');
  });

  it('passes the Gemini key as a secret and the base URL as plain env', () => {
    const inv = gemini.buildInvocation(sampleInput({ providers: { geminiBaseUrl: 'http://gw:9000' } }));
    expect(inv.secretEnv).toEqual({ GEMINI_API_KEY: 'gemini-secret' });
    expect(inv.env.GOOGLE_GEMINI_BASE_URL).toBe('http://gw:9000');
  });
});

describe('gemini stream-json output', () => {
  it('reads status, turns, tokens and the final answer from a real run with a tool call', () => {
    expect(gemini.parseOutput(fixture('gemini-stream-tool'))).toEqual({
      status: 'succeeded',
      exitCode: 0,
      turns: 2,
      tokens: { input: 6912, output: 156 },
      finalMessage: GEMINI_ANSWER,
    });
  });

  it('keeps only the text after the last tool call, joined from its delta chunks, as the final message', () => {
    const stdout = lines(
      { type: 'init', session_id: 's', model: 'm' },
      { type: 'message', role: 'user', content: 'prompt' },
      { type: 'message', role: 'assistant', content: 'Let me look.', delta: true },
      { type: 'tool_use', tool_name: 'run_shell_command', tool_id: 't1', parameters: {} },
      { type: 'tool_result', tool_id: 't1', status: 'success', output: 'x' },
      { type: 'message', role: 'assistant', content: 'Hypothesis: OOM. ', delta: true },
      { type: 'message', role: 'assistant', content: 'Confidence: high.', delta: true },
      { type: 'result', status: 'success', stats: { input_tokens: 9, output_tokens: 4 } },
    );
    expect(gemini.parseOutput(run({ stdout }))).toMatchObject({
      status: 'succeeded',
      turns: 2,
      tokens: { input: 9, output: 4 },
      finalMessage: 'Hypothesis: OOM. Confidence: high.',
    });
  });

  it('recognises the real 401 result event as an auth failure and keeps exit code 145', () => {
    const outcome = gemini.parseOutput(fixture('gemini-stream-401'));
    expect(outcome).toMatchObject({ status: 'auth_failed', exitCode: 145 });
    expect(outcome.error).toMatch(/401/);
    expect(outcome.error).toMatch(/API key not valid/);
    // Gemini could not name the error's type ("unknown"): the line leaves it out.
    expect(outcome.error).not.toMatch(/unknown/);
  });

  it('recognises the real turn-limit result event with the turns and tokens so far', () => {
    expect(gemini.parseOutput(fixture('gemini-stream-max-turns'))).toMatchObject({
      status: 'turn_limit',
      exitCode: 53,
      turns: 1,
      tokens: { input: 3456, output: 78 },
    });
  });

  it('reports events without a result event as a failure naming what is missing', () => {
    const stdout = lines({ type: 'init', session_id: 's', model: 'm' });
    const outcome = gemini.parseOutput(run({ exitCode: 1, stdout, stderr: 'boom: out of memory' }));
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatch(/no result event.*exit code 1.*boom: out of memory/);
  });

  it('never reports success from a success result when the process exited non-zero', () => {
    const stdout = lines({ type: 'result', status: 'success', stats: {} });
    expect(gemini.parseOutput(run({ exitCode: 1, stdout })).status).toBe('failed');
  });

  it('reports a truncated stream whose last line is cut as a failure, not a crash', () => {
    const whole = fixture('gemini-stream-tool').stdout;
    const cut = whole.slice(0, whole.lastIndexOf('{"type":"result"') + 30);
    const outcome = gemini.parseOutput(run({ stdout: cut }));
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatch(/no result event/);
  });
});

describe('gemini progress', () => {
  it('reports turns and the last tool as the real events arrive, and tokens with the result', () => {
    const reader = gemini.progress?.();
    const updates = fixture('gemini-stream-tool')
      .stdout.split('\n')
      .filter((l) => l.length > 0)
      .map((l) => reader?.push(Buffer.from(`${l}\n`)));
    expect(updates).toEqual([
      undefined, // init
      undefined, // the prompt
      { turns: 1, lastTool: 'run_shell_command' },
      undefined, // the tool's result
      { turns: 2, lastTool: 'run_shell_command' },
      { turns: 2, lastTool: 'run_shell_command', tokens: { input: 6912, output: 156 } },
    ]);
  });

  it('reads a line split across chunks once it is complete', () => {
    const reader = gemini.progress?.();
    const line = JSON.stringify({ type: 'tool_use', tool_name: 'read_file', tool_id: 'a', parameters: {} });
    expect(reader?.push(Buffer.from(line.slice(0, 25)))).toBeUndefined();
    expect(reader?.push(Buffer.from(`${line.slice(25)}\n`))).toEqual({ turns: 1, lastTool: 'read_file' });
  });

  it('counts a second tool request in the same model turn once', () => {
    const reader = gemini.progress?.();
    const tool = (name: string) => `${JSON.stringify({ type: 'tool_use', tool_name: name })}\n`;
    reader?.push(Buffer.from(tool('glob')));
    expect(reader?.push(Buffer.from(tool('read_file')))).toEqual({ turns: 1, lastTool: 'read_file' });
  });

  it('reports the real 401 result event as an auth failure naming the key to check', () => {
    const reader = gemini.progress?.();
    const update = reader?.push(Buffer.from(fixture('gemini-stream-401').stdout));
    expect(update?.authFailure).toMatch(/refused the credentials.*401.*GEMINI_API_KEY/);
  });

  it('does not report the real turn-limit result as an auth failure', () => {
    const reader = gemini.progress?.();
    const update = reader?.push(Buffer.from(fixture('gemini-stream-max-turns').stdout));
    expect(update).toMatchObject({ turns: 1, tokens: { input: 3456, output: 78 } });
    expect(update?.authFailure).toBeUndefined();
  });

  it('reports a refused key once, not again with the result event that follows', () => {
    const reader = gemini.progress?.();
    const refusal = { type: 'error', severity: 'error', message: 'API key not valid.' };
    const result = {
      type: 'result',
      status: 'error',
      error: { type: 'unknown', message: 'API key not valid.' },
    };
    expect(reader?.push(Buffer.from(lines(refusal)))?.authFailure).toBeDefined();
    expect(reader?.push(Buffer.from(lines(result)))?.authFailure).toBeUndefined();
  });

  it('reports an error event carrying a refused key as an auth failure', () => {
    const reader = gemini.progress?.();
    const event = {
      type: 'error',
      severity: 'warning',
      message: 'API key not valid. Please pass a valid API key.',
    };
    expect(reader?.push(Buffer.from(`${JSON.stringify(event)}\n`))?.authFailure).toMatch(/GEMINI_API_KEY/);
  });
});

describe('gemini json output (the single object of --output-format json)', () => {
  it('reads tokens from stats.models of a real success', () => {
    expect(gemini.parseOutput(fixture('gemini-success'))).toEqual({
      status: 'succeeded',
      exitCode: 0,
      tokens: { input: 3456, output: 78 },
    });
  });

  it('sums tokens over several models', () => {
    const stdout = JSON.stringify({
      response: 'ok',
      stats: {
        models: { a: { tokens: { prompt: 5, candidates: 1 } }, b: { tokens: { prompt: 7, candidates: 2 } } },
      },
    });
    expect(gemini.parseOutput(run({ stdout })).tokens).toEqual({ input: 12, output: 3 });
  });

  it('recognises the real 401 error JSON on stderr as an auth failure and keeps the exit code', () => {
    const outcome = gemini.parseOutput(fixture('gemini-401'));
    expect(outcome).toMatchObject({ status: 'auth_failed', exitCode: 145 });
    expect(outcome.error).toMatch(/code 401/);
  });

  it('recognises the real exit 53 as the turn limit', () => {
    expect(gemini.parseOutput(fixture('gemini-max-turns'))).toMatchObject({
      status: 'turn_limit',
      exitCode: 53,
    });
  });

  it('treats exit 41 as an auth failure even without JSON', () => {
    const outcome = gemini.parseOutput(
      run({ exitCode: 41, stderr: 'When using Gemini API, you must specify GEMINI_API_KEY' }),
    );
    expect(outcome).toMatchObject({ status: 'auth_failed', exitCode: 41 });
  });
});
