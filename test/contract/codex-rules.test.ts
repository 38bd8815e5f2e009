// Contract: the rules file the codex adapter writes from the shipped persona's tool policy is read by
// the real Codex CLI's execpolicy, which forbids the refused command prefixes and leaves reads alone.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codexRulesFile } from '../../src/agents/shared/permissions.js';
import { toolPermissions } from '../../src/kubectl/policy/permissions.js';
import { loadToolPolicy } from '../../src/kubectl/policy/policy.js';
import { requireCli } from '../support/agent-clis.js';
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
