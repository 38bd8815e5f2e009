// Contract: the policy file the gemini adapter writes from the shipped persona's tool policy is loaded by
// the real Gemini CLI and holds under --approval-mode=yolo: a scripted model asks its shell tool for
// `kubectl delete pod`, which Gemini refuses without running it, and for another command, which runs.
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gemini } from '../../src/agents/gemini.js';
import { toolPermissions } from '../../src/kubectl/policy/permissions.js';
import { loadToolPolicy } from '../../src/kubectl/policy/policy.js';
import { makeAgentPaths, requireCli, runInvocation } from '../support/agent-clis.js';
import { startScriptedGemini } from '../support/providers/gemini.js';
import type { FakeProvider } from '../support/providers/server.js';
import { REPO_ROOT } from '../support/runs.js';

const cli = requireCli('gemini');

describe.skipIf(!cli)('gemini CLI applies the persona policy file', () => {
  let provider: FakeProvider;
  let root: string | undefined;
  beforeAll(async () => {
    const paths = await makeAgentPaths();
    root = paths.root;
    provider = await startScriptedGemini([
      `kubectl delete pod web-1 -n shop; touch ${join(paths.workspaceDir, 'deleted')}`,
      `touch ${join(paths.workspaceDir, 'allowed')}`,
    ]);
    const policy = await loadToolPolicy(join(REPO_ROOT, 'configs/personas'), 'kubernetes-sre');
    const invocation = gemini.buildInvocation({
      prompt: { system: 'Investigate.', user: 'Run the commands.' },
      maxTurns: 5,
      extraArgs: [],
      paths,
      providers: { geminiBaseUrl: provider.url },
      secrets: { GEMINI_API_KEY: 'gemini-contract-test-key' },
      permissions: toolPermissions(policy),
    });
    const output = await runInvocation(invocation, paths, dirname(cli ?? ''), 90_000);
    expect(output.exitCode, output.stderr).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await provider?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('refuses kubectl delete in yolo mode without running it, with the policy message', () => {
    expect(existsSync(join(root ?? '', 'workspace', 'deleted'))).toBe(false);
    const last = provider.requests.filter((r) => r.body.includes('"functionResponse"')).at(-1);
    expect(last?.body).toContain('tool policy does not allow this command');
  });

  it('still runs the commands the policy leaves alone', () => {
    expect(existsSync(join(root ?? '', 'workspace', 'allowed'))).toBe(true);
  });
});
