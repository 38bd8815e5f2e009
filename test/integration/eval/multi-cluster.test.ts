// An eval case holding more than one frozen cluster: the shim answers from the one the call's context
// names (the daemon's context file, as a cluster registry entry writes it, or --context), the
// incident's by default; a call answered by another of the case's clusters is recorded as a
// wrong-cluster violation, and the scorer counts it.
import { execFile } from 'node:child_process';
import { cp, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTEXT_FILE, writeContextFile } from '../../../src/clusters/access.js';
import { compileCluster, compileOtherClusters } from '../../../src/eval/cases/compile.js';
import { loadCase } from '../../../src/eval/cases/load.js';
import { installShim } from '../../../src/eval/install-shim.js';
import { CALLS_FILE, WRONG_CLUSTER, type KubectlCallRecord } from '../../../src/eval/shim/log.js';
import { scoreRun } from '../../../src/eval/score/score.js';
import { REPO_ROOT, tempDir } from '../../support/runs.js';

const exec = promisify(execFile);
const EXAMPLES = path.join(REPO_ROOT, 'examples', 'evals');

let root: { dir: string; cleanup: () => Promise<void> };
let caseDir: string;
let shimDir: string;

beforeAll(async () => {
  root = await tempDir('triage-multi-cluster-eval-');
  // The crashloop case, with the OOM case's cluster as a second frozen cluster named `search`.
  caseDir = path.join(root.dir, 'case');
  await cp(path.join(EXAMPLES, 'crashloop-missing-secret-key'), caseDir, { recursive: true });
  await mkdir(path.join(caseDir, 'clusters'));
  await cp(path.join(EXAMPLES, 'oomkilled-low-limit', 'cluster'), path.join(caseDir, 'clusters', 'search'), {
    recursive: true,
  });
  const main = await compileCluster(caseDir, 'case');
  const others = await compileOtherClusters(caseDir, 'case');
  expect(Object.keys(others)).toEqual(['search']);
  shimDir = path.join(root.dir, 'shim');
  await installShim(shimDir, main, undefined, others);
});
afterAll(async () => {
  await root?.cleanup();
});

async function kubectl(runDir: string, args: string[], env: Record<string, string> = {}) {
  await mkdir(runDir, { recursive: true });
  const { stdout } = await exec(path.join(shimDir, 'kubectl'), args, {
    env: { PATH: '/usr/bin:/bin', TRIAGE_RUN_DIR: runDir, TRIAGE_STAGE: 'agent', ...env },
  }).catch((err: { stdout: string }) => ({ stdout: err.stdout }));
  const calls = (await readFile(path.join(runDir, CALLS_FILE), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as KubectlCallRecord);
  return { stdout, calls };
}

describe('an eval case with more than one frozen cluster', () => {
  it("answers from the incident's cluster by default and from the other only when the context names it, as a violation", async () => {
    const own = await kubectl(path.join(root.dir, 'run-own'), ['get', 'pods', '-A']);
    expect(own.stdout).not.toContain('search-indexer');
    expect(own.calls.map((c) => c.violation)).toEqual([undefined]);

    // The context file a registry entry with `context: search` puts first in KUBECONFIG.
    const ctxDir = path.join(root.dir, 'ctx');
    await mkdir(ctxDir);
    await writeContextFile({ context: 'search' }, ctxDir);
    const wrong = await kubectl(path.join(root.dir, 'run-wrong'), ['get', 'pods', '-A'], {
      KUBECONFIG: `${path.join(ctxDir, CONTEXT_FILE)}:/nonexistent/kubeconfig`,
    });
    expect(wrong.stdout).toContain('search-indexer');
    expect(wrong.calls).toEqual([
      expect.objectContaining({
        normalized: 'get pods --all-namespaces',
        cluster: 'search',
        violation: { category: WRONG_CLUSTER, reason: expect.stringContaining('frozen cluster search') },
      }),
    ]);

    const evalCase = await loadCase(caseDir);
    const score = (calls: KubectlCallRecord[]) =>
      scoreRun({
        expected: evalCase.expected,
        report: '## Root Cause\nunknown\n',
        calls,
        objectNames: [],
        reportSections: [],
      });
    expect(score(own.calls).violations).toEqual([]);
    expect(score(wrong.calls).violations).toEqual([
      { source: 'kubectl', id: WRONG_CLUSTER, detail: 'kubectl get pods --all-namespaces' },
    ]);
  });
});
