// Shared inputs for the adapter unit tests: a prompt carrying markers that must never reach argv.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRunOutput, InvocationInput } from '../../../src/agents/types.js';

export const SYSTEM_MARKER = 'SYSTEM-MARKER-7f3a';
export const USER_MARKER = 'USER-MARKER-91c2';

export function sampleInput(overrides: Partial<InvocationInput> = {}): InvocationInput {
  return {
    prompt: {
      system: `${SYSTEM_MARKER} "quoted" $(whoami) \`id\`\nsecond line é`,
      user: `<incident>{"x":"${USER_MARKER}"}</incident>\nInvestigate 'this' $(date) 🚨`,
    },
    model: 'some-model',
    maxTurns: 7,
    extraArgs: ['--extra-flag'],
    paths: {
      home: '/home/agent',
      workspaceDir: '/workspace',
      reportPath: '/workspace/output/investigation.md',
      filesDir: '/opt/triage/files',
    },
    providers: {},
    secrets: {
      ANTHROPIC_API_KEY: 'sk-ant-secret',
      CODEX_API_KEY: 'sk-codex-secret',
      OPENAI_API_KEY: 'sk-openai-secret',
      GEMINI_API_KEY: 'gemini-secret',
    },
    ...overrides,
  };
}

/** True when any argv element or non-secret env value carries prompt text. */
export function promptLeaks(args: string[], env: Record<string, string>): boolean {
  const texts = [...args, ...Object.values(env)];
  return texts.some((t) => t.includes(SYSTEM_MARKER) || t.includes(USER_MARKER));
}

/** A real CLI output recorded by the contract tests' fake providers (test/fixtures/agent-output). */
export function fixture(name: string): AgentRunOutput {
  const path = join(import.meta.dirname, '..', '..', 'fixtures', 'agent-output', `${name}.json`);
  const raw = JSON.parse(readFileSync(path, 'utf8')) as AgentRunOutput;
  return {
    exitCode: raw.exitCode,
    signal: raw.signal,
    timedOut: raw.timedOut,
    stdout: raw.stdout,
    stderr: raw.stderr,
  };
}

export function run(partial: Partial<AgentRunOutput>): AgentRunOutput {
  return { exitCode: 0, signal: null, timedOut: false, stdout: '', stderr: '', ...partial };
}
