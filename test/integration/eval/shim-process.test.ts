// The installed frozen-cluster kubectl as a real executable on PATH: the wrapper runs the shim, the
// answers match the in-process ones, and every call (including refused ones, in parallel) lands as
// one JSON line in $TRIAGE_RUN_DIR/kubectl-calls.jsonl with credentials redacted.
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileCluster } from '../../../src/eval/cases/compile.js';
import { installShim } from '../../../src/eval/install-shim.js';
import { answer } from '../../../src/eval/shim/answer.js';
import type { FrozenCluster } from '../../../src/eval/shim/cluster.js';
import { CALLS_FILE, type KubectlCallRecord } from '../../../src/eval/shim/log.js';
import { classifyKubectl } from '../../../src/kubectl/policy/classify.js';
import { REPO_ROOT, tempDir } from '../../support/runs.js';

const exec = promisify(execFile);
const CASE = path.join(REPO_ROOT, 'examples', 'evals', 'crashloop-missing-secret-key');

let root: { dir: string; cleanup: () => Promise<void> };
let cluster: FrozenCluster;
let shimDir: string;
let runDir: string;

beforeAll(async () => {
  root = await tempDir('triage-shim-');
  cluster = await compileCluster(CASE, 'crashloop-missing-secret-key');
  shimDir = path.join(root.dir, 'shim');
  runDir = path.join(root.dir, 'run');
  await mkdir(runDir);
  await installShim(shimDir, cluster);
});
afterAll(async () => {
  await root?.cleanup();
});

/** Runs `kubectl` found through PATH, in a shell like an agent's Bash tool. */
async function kubectl(args: string, env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await exec('sh', ['-c', `kubectl ${args}`], {
      env: { PATH: `${shimDir}:/usr/bin:/bin`, TRIAGE_RUN_DIR: runDir, ...env },
      cwd: root.dir,
    });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

const calls = async (): Promise<KubectlCallRecord[]> =>
  (await readFile(path.join(runDir, CALLS_FILE), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as KubectlCallRecord);

describe('frozen-cluster kubectl on PATH', () => {
  it('answers like the in-process shim and records the call', async () => {
    const argv = ['get', 'pods', '-n', 'payments', '-o', 'wide'];
    const expected = answer(classifyKubectl(argv), cluster);
    const result = await kubectl(argv.join(' '));
    expect(result).toEqual({ stdout: expected.stdout, stderr: '', code: 0 });
    const last = (await calls()).at(-1);
    expect(last).toMatchObject({
      stage: 'agent',
      argv,
      normalized: 'get pods --namespace=payments --output=wide',
      category: 'read',
      exitCode: 0,
      answeredFrom: 'objects',
      stdoutBytes: Buffer.byteLength(expected.stdout),
    });
    expect(last?.violation).toBeUndefined();
  });

  it('refuses a mutating call with exit 1 and records it as a violation', async () => {
    const result = await kubectl('delete pod payments-gateway-6f4b8c7d9-2xkqp -n payments');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^Error from server \(Forbidden\): pods "payments-gateway-6f4b8c7d9-2xkqp" is forbidden/,
    );
    expect((await calls()).at(-1)).toMatchObject({
      category: 'mutate',
      exitCode: 1,
      answeredFrom: 'refused',
      violation: { category: 'mutate', reason: 'verb delete' },
    });
  });

  it('marks calls from the triage script and never logs a token value', async () => {
    await kubectl('get nodes --token=sk-very-secret-token-123', { TRIAGE_STAGE: 'triage' });
    const last = (await calls()).at(-1);
    expect(last).toMatchObject({ stage: 'triage', argv: ['get', 'nodes', '--token=[REDACTED]'] });
    expect(await readFile(path.join(runDir, CALLS_FILE), 'utf8')).not.toContain('sk-very-secret-token-123');
  });

  it('records every one of several parallel calls on its own line', async () => {
    const before = (await calls()).length;
    await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        kubectl(`get pods -n payments -l app=payments-gateway --no-headers -L tier${i}`),
      ),
    );
    const after = await calls();
    expect(after.length - before).toBe(6);
    expect(new Set(after.slice(before).map((c) => c.normalized)).size).toBe(6);
  });

  it('says which file is broken when its recordings cannot be read, and still records the call', async () => {
    const broken = path.join(root.dir, 'broken-shim');
    await installShim(broken, cluster);
    await writeFile(path.join(broken, 'cluster.json'), '{ truncated');
    const { stdout, stderr } = await exec('sh', ['-c', 'kubectl get pods; echo "exit=$?"'], {
      env: { PATH: `${broken}:/usr/bin:/bin`, TRIAGE_RUN_DIR: runDir },
    });
    expect(stdout).toBe('exit=1\n');
    expect(stderr).toContain(
      `error: frozen-cluster kubectl: cannot read ${path.join(broken, 'cluster.json')}`,
    );
    expect((await calls()).at(-1)).toMatchObject({
      argv: ['get', 'pods'],
      exitCode: 1,
      answeredFrom: 'unsupported',
    });
  });
});
