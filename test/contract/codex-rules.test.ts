// Contract: the rules file the codex adapter writes from the shipped persona's tool policy is read by
// the real Codex CLI's execpolicy, which forbids the refused command prefixes and leaves reads alone,
// also in a real run under --dangerously-bypass-approvals-and-sandbox (the adapter's mode), where a
// scripted model asks its exec_command tool for `kubectl delete pod`.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codex } from '../../src/agents/codex.js';
import { codexRulesFile } from '../../src/agents/shared/permissions.js';
import { toolPermissions } from '../../src/kubectl/policy/permissions.js';
import { loadToolPolicy } from '../../src/kubectl/policy/policy.js';
import { makeAgentPaths, requireCli, runInvocation } from '../support/agent-clis.js';
import { OPENAI_MESSAGE, responseStream } from '../support/providers/openai.js';
import { startProvider, type FakeProvider } from '../support/providers/server.js';
import { REPO_ROOT, tempDir } from '../support/runs.js';

const cli = requireCli('codex');
const run = promisify(execFile);

describe.skipIf(!cli)('codex execpolicy reads the generated rules', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let rules: string;
  beforeAll(async () => {
    root = await tempDir('triage-codex-rules-');
    const policy = await loadToolPolicy(path.join(REPO_ROOT, 'configs/personas'), 'kubernetes-sre');
    rules = path.join(root.dir, 'triage-runner.rules');
    await writeFile(rules, codexRulesFile(toolPermissions(policy)).content);
  });
  afterAll(async () => root?.cleanup());

  const check = async (...command: string[]) => {
    const { stdout } = await run(cli ?? '', ['execpolicy', 'check', '--rules', rules, ...command]);
    return JSON.parse(stdout) as { decision?: string; matchedRules: unknown[] };
  };

  it('forbids kubectl delete, kubectl exec, kubectl rollout undo and helm upgrade', async () => {
    for (const command of [
      ['kubectl', 'delete', 'pod', 'web-1'],
      ['kubectl', 'exec', '-it', 'web-1', '--', 'sh'],
      ['kubectl', 'rollout', 'undo', 'deployment/web'],
      ['helm', 'upgrade', 'web', './chart'],
    ]) {
      expect([command.join(' '), (await check(...command)).decision]).toEqual([
        command.join(' '),
        'forbidden',
      ]);
    }
  });

  it('matches no rule for reads', async () => {
    expect(await check('kubectl', 'get', 'pods', '-n', 'shop')).toEqual({ matchedRules: [] });
    expect(await check('kubectl', 'rollout', 'status', 'deployment/web')).toEqual({ matchedRules: [] });
  });
});

/** A Responses API whose model runs each command with Codex's exec_command tool, then answers. */
function scriptedResponses(commands: string[]): Promise<FakeProvider> {
  return startProvider(
    (req) => {
      const url = req.url.split('?')[0];
      if (req.method === 'GET' && url === '/v1/models')
        return { kind: 'json', body: { object: 'list', data: [] } };
      if (req.method !== 'POST' || url !== '/v1/responses') return undefined;
      const done = (req.body.match(/"function_call_output"/g) ?? []).length;
      const cmd = commands[done];
      if (cmd === undefined) return responseStream(req, OPENAI_MESSAGE);
      const call = { type: 'function_call', id: `fc_${done}`, call_id: `call_${done}`, name: 'exec_command' };
      return responseStream(req, { ...call, arguments: JSON.stringify({ cmd }), status: 'completed' });
    },
    (status) => ({ error: { message: `scripted responses answered ${status}` } }),
  );
}

describe.skipIf(!cli)('codex refuses a forbidden command in a real run', () => {
  let provider: FakeProvider | undefined;
  let root: string | undefined;
  afterAll(async () => {
    await provider?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('does not run kubectl delete, tells the model why, and runs what the rules leave alone', async () => {
    const paths = await makeAgentPaths();
    root = paths.root;
    const deleted = path.join(paths.workspaceDir, 'deleted');
    const allowed = path.join(paths.workspaceDir, 'allowed');
    provider = await scriptedResponses([
      `kubectl delete pod web-1 -n shop; touch ${deleted}`,
      `touch ${allowed}`,
    ]);
    const policy = await loadToolPolicy(path.join(REPO_ROOT, 'configs/personas'), 'kubernetes-sre');
    const invocation = codex.buildInvocation({
      prompt: { system: 'Investigate.', user: 'Run the commands.' },
      model: 'gpt-5-codex',
      maxTurns: 5,
      extraArgs: [],
      paths,
      providers: { openaiBaseUrl: `${provider.url}/v1` },
      secrets: { OPENAI_API_KEY: 'sk-openai-contract-test' },
      permissions: toolPermissions(policy),
    });
    expect(invocation.args).toContain('--dangerously-bypass-approvals-and-sandbox');
    const output = await runInvocation(invocation, paths, path.dirname(cli ?? ''), 90_000);
    expect(output.exitCode, output.stderr.slice(-2000)).toBe(0);
    expect(existsSync(deleted)).toBe(false);
    expect(existsSync(allowed)).toBe(true);
    const refusal = provider.requests.find((r) => r.body.includes('"function_call_output"'));
    expect(refusal?.body).toContain("The kubernetes-sre persona's tool policy does not allow this command");
  }, 120_000);
});
