// Goose cannot be installed here: its invocation is checked against its documented flags
// (goose run --instructions FILE --no-session --output-format json --max-turns N --with-builtin; GOOSE_MODE,
// GOOSE_DISABLE_KEYRING, GOOSE_PROVIDER, GOOSE_MODEL) and its output against the documented JSON.
import { describe, expect, it } from 'vitest';
import { GOOSE_INSTRUCTIONS_FILE, GOOSE_MAX_TURNS_SENTINEL, goose } from '../../../src/agents/goose.js';
import { promptLeaks, run, sampleInput } from './helpers.js';

describe('goose invocation', () => {
  it('puts the whole prompt in the instructions file and nothing in argv, env or stdin', () => {
    const input = sampleInput();
    const inv = goose.buildInvocation(input);
    expect(promptLeaks(inv.args, inv.env)).toBe(false);
    expect(inv.stdin).toBe('');
    expect(inv.files).toEqual([
      { path: GOOSE_INSTRUCTIONS_FILE, content: `${input.prompt.system}\n\n${input.prompt.user}` },
    ]);
    expect(inv.args).not.toContain('--system');
  });

  it('runs headless with JSON output, the turn limit and no session file', () => {
    const inv = goose.buildInvocation(sampleInput());
    expect(inv.command).toBe('goose');
    expect(inv.args).toEqual([
      'run',
      '--no-session',
      '--output-format',
      'json',
      '--max-turns',
      '7',
      '--instructions',
      `/opt/triage/files/${GOOSE_INSTRUCTIONS_FILE}`,
      '--with-builtin',
      'developer',
      '--extra-flag',
    ]);
  });

  it('adds the computer controller extension (web scraping) only when agent.extra_tools offers web', () => {
    const builtins = (extra: Parameters<typeof sampleInput>[0]) => {
      const args = goose.buildInvocation(sampleInput(extra)).args;
      return args[args.indexOf('--with-builtin') + 1];
    };
    expect(builtins({})).toBe('developer');
    expect(builtins({ extraTools: ['web'] })).toBe('developer,computercontroller');
    const policy = {
      persona: 'p',
      allowedTools: [],
      deniedTools: ['web' as const],
      deniedCommands: [],
      reason: 'r',
    };
    expect(builtins({ extraTools: ['web'], permissions: policy })).toBe('developer');
  });

  it('runs unattended without a keyring, with provider and model from env', () => {
    const inv = goose.buildInvocation(sampleInput({ providers: { anthropicBaseUrl: 'http://gw:8080' } }));
    expect(inv.env).toMatchObject({
      GOOSE_MODE: 'auto',
      GOOSE_DISABLE_KEYRING: '1',
      GOOSE_PROVIDER: 'anthropic',
      GOOSE_MODEL: 'some-model',
      ANTHROPIC_HOST: 'http://gw:8080',
    });
    expect(inv.secretEnv).toEqual({ ANTHROPIC_API_KEY: 'sk-ant-secret' });
  });

  it('splits an OpenAI base URL into host and base path and hands over the OpenAI key', () => {
    const inv = goose.buildInvocation(
      sampleInput({ providers: { gooseProvider: 'openai', openaiBaseUrl: 'https://gw.example/proxy/v1/' } }),
    );
    expect(inv.env).toMatchObject({
      GOOSE_PROVIDER: 'openai',
      OPENAI_HOST: 'https://gw.example',
      OPENAI_BASE_PATH: 'proxy/v1/chat/completions',
    });
    expect(inv.secretEnv).toEqual({ OPENAI_API_KEY: 'sk-openai-secret' });
  });

  it('maps the google provider to GOOGLE_HOST and the Gemini key', () => {
    const inv = goose.buildInvocation(
      sampleInput({ providers: { gooseProvider: 'google', geminiBaseUrl: 'http://gw:9000' } }),
    );
    expect(inv.env.GOOGLE_HOST).toBe('http://gw:9000');
    expect(inv.secretEnv).toEqual({ GOOGLE_API_KEY: 'gemini-secret' });
  });
});

function gooseJson(text: string, metadata: Record<string, unknown>): string {
  return JSON.stringify({
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [{ type: 'text', text }] },
    ],
    metadata,
  });
}

describe('goose output', () => {
  it('reads tokens and cost from metadata', () => {
    const stdout = gooseJson('done', {
      input_tokens: 900,
      output_tokens: 80,
      total_tokens: 980,
      cost_usd: 0.12,
      status: 'completed',
    });
    expect(goose.parseOutput(run({ stdout }))).toEqual({
      status: 'succeeded',
      exitCode: 0,
      tokens: { input: 900, output: 80 },
      costUsd: 0.12,
    });
  });

  it('counts total_tokens as input when an older Goose reports no split', () => {
    const stdout = gooseJson('done', { total_tokens: 500, status: 'completed' });
    expect(goose.parseOutput(run({ stdout })).tokens).toEqual({ input: 500, output: 0 });
  });

  it('recognises the max-turns sentinel despite exit code 0', () => {
    const stdout = gooseJson(`${GOOSE_MAX_TURNS_SENTINEL}. Would you like me to continue?`, {
      status: 'completed',
    });
    expect(goose.parseOutput(run({ stdout }))).toMatchObject({ status: 'turn_limit', exitCode: 0 });
  });

  it('recognises an invalid key on stderr as an auth failure', () => {
    const outcome = goose.parseOutput(
      run({ exitCode: 1, stderr: 'Error: Authentication failed: 401 Unauthorized (invalid x-api-key)' }),
    );
    expect(outcome).toMatchObject({ status: 'auth_failed', exitCode: 1 });
  });
});
