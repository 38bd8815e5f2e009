import { describe, expect, it } from 'vitest';
import {
  GEMINI_DEFAULT_MODEL,
  GEMINI_PROMPT_SUFFIX,
  GEMINI_SETTINGS_FILE,
  gemini,
} from '../../../src/agents/gemini.js';
import { fixture, promptLeaks, run, sampleInput } from './helpers.js';

describe('gemini invocation', () => {
  it('sends system then user part on stdin and only a fixed text with -p', () => {
    const input = sampleInput();
    const inv = gemini.buildInvocation(input);
    expect(promptLeaks(inv.args, inv.env)).toBe(false);
    expect(inv.stdin).toBe(`${input.prompt.system}\n\n${input.prompt.user}`);
    expect(inv.args.slice(0, 2)).toEqual(['-p', GEMINI_PROMPT_SUFFIX]);
  });

  it('runs with JSON output, yolo approvals, a trusted workspace and always a model', () => {
    const inv = gemini.buildInvocation(sampleInput({ model: undefined }));
    expect(inv.args).toEqual([
      '-p',
      GEMINI_PROMPT_SUFFIX,
      '--output-format',
      'json',
      '--approval-mode=yolo',
      '--model',
      GEMINI_DEFAULT_MODEL,
      '--extra-flag',
    ]);
    expect(inv.env.GEMINI_CLI_TRUST_WORKSPACE).toBe('true');
  });

  it('writes settings.json with API-key auth, the turn limit and telemetry and updates off', () => {
    const inv = gemini.buildInvocation(sampleInput());
    expect(inv.files).toHaveLength(1);
    expect(inv.files[0]).toMatchObject({ path: GEMINI_SETTINGS_FILE, inHome: true });
    expect(JSON.parse(inv.files[0]?.content ?? '')).toEqual({
      security: { auth: { selectedType: 'gemini-api-key' } },
      model: { maxSessionTurns: 7 },
      general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
    });
  });

  it('passes the Gemini key as a secret and the base URL as plain env', () => {
    const inv = gemini.buildInvocation(sampleInput({ providers: { geminiBaseUrl: 'http://gw:9000' } }));
    expect(inv.secretEnv).toEqual({ GEMINI_API_KEY: 'gemini-secret' });
    expect(inv.env.GOOGLE_GEMINI_BASE_URL).toBe('http://gw:9000');
  });
});

describe('gemini output', () => {
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
