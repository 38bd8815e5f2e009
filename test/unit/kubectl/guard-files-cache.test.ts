import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { installGuard, moduleSource } from '../../../src/kubectl/broker/install-guard.js';
import { toolPermissions } from '../../../src/kubectl/policy/permissions.js';
import { loadToolPolicy, policyCache } from '../../../src/kubectl/policy/policy.js';
import { tempDir } from '../../support/runs.js';

// The guard's files per policy change, not per run: helpers.yaml compiled once while unchanged (and the
// CLI permissions worked out once per compiled policy), the guard client read once per process.

const dirs: { cleanup(): Promise<void> }[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await d.cleanup();
  policyCache.clear();
});

async function persona(helpers: string): Promise<{ root: string; file: string }> {
  const t = await tempDir('guard-cache');
  dirs.push(t);
  const file = path.join(t.dir, 'sre', 'helpers.yaml');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, helpers);
  const then = new Date(Date.now() - 60_000);
  utimesSync(file, then, then);
  return { root: t.dir, file };
}

describe('guard files cache', () => {
  it('a second run loads the compiled policy and its permissions without compiling again', async () => {
    const { root } = await persona('include: ["kubectl get *"]\n');
    const first = await loadToolPolicy(root, 'sre');
    const builds = policyCache.builds;
    const second = await loadToolPolicy(root, 'sre');
    expect(second).toBe(first);
    expect(policyCache.builds).toBe(builds);
    expect(toolPermissions(second)).toBe(toolPermissions(first));
  });

  it('an edited helpers.yaml is the next run policy', async () => {
    const { root, file } = await persona('include: ["kubectl get *"]\n');
    const before = await loadToolPolicy(root, 'sre');
    writeFileSync(file, 'include: ["kubectl get *", "kubectl describe *"]\n');
    const after = await loadToolPolicy(root, 'sre');
    expect(after).not.toBe(before);
    expect(after.include).toContain('kubectl describe *');
    expect(toolPermissions(after)).not.toBe(toolPermissions(before));
  });

  it('a broken helpers.yaml is reported on every run, not remembered', async () => {
    const { root } = await persona('include: [unclosed\n');
    await expect(loadToolPolicy(root, 'sre')).rejects.toThrow(/helpers\.yaml/);
    await expect(loadToolPolicy(root, 'sre')).rejects.toThrow(/helpers\.yaml/);
  });

  it('the guard client is read once per process and written into every run from memory', async () => {
    const first = moduleSource('client');
    expect(moduleSource('client')).toBe(first);
    const t = await tempDir('guard-install');
    dirs.push(t);
    for (const run of ['a', 'b']) {
      const dir = path.join(t.dir, run);
      await installGuard(dir, { socketPath: '/run/kubectl.sock', runId: run });
      expect(await readFile(path.join(dir, 'lib', 'client.js'), 'utf8')).toBe(await first);
    }
    expect(moduleSource('client')).toBe(first);
  });
});
