// `eval promote` of a run whose recorded outputs still hold credentials (recorded by a daemon that did
// not redact them, or copied in by hand): the case it writes answers with the same outputs, keys and
// ordinary lines as recorded, and none of the credentials.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../src/audit/log.js';
import { runPromote } from '../../../src/cli/commands/eval.js';
import type { CliIO } from '../../../src/cli/io.js';
import { recordFeedback } from '../../../src/feedback/feedback.js';
import { parseKubectl } from '../../../src/kubectl/parse.js';
import { guardCall } from '../../support/cluster-calls.js';
import { clusterObjects, plantedForms, standInCluster } from '../../support/kube-objects.js';
import { tempDir } from '../../support/runs.js';
import { incidentIn, succeededRun, writeRun } from '../../support/status-root.js';

let root: { dir: string; cleanup: () => Promise<void> };
beforeEach(async () => {
  root = await tempDir('triage-promote-redact-');
});
afterEach(async () => root.cleanup());

const RUN = 'run-1';
const finished = succeededRun(RUN);

async function filesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe('eval promote redacts what the run recorded', () => {
  it('writes a case with the recorded outputs of a Secret, a ConfigMap and a pod, without their credentials', async () => {
    const cluster = await standInCluster(root.dir, clusterObjects());
    const argvs = [
      ['get', 'pods', '-n', 'payments'],
      ['get', 'pods', '-n', 'payments', '-o', 'yaml'],
      ['get', 'configmap', 'payments-config', '-n', 'payments', '-o', 'yaml'],
      ['get', 'secret', 'payments-db', '-n', 'payments', '-o', 'yaml'],
    ];
    const stdouts = await Promise.all(argvs.map((argv) => cluster.kubectl(argv))).finally(() =>
      cluster.close(),
    );
    const dir = await incidentIn(root.dir, 'payments-crash', finished, undefined, {
      namespace: 'payments',
      resource: {
        apiVersion: 'v1',
        kind: 'Pod',
        name: 'payments-api-7c9d8f6b5d-00000',
        namespace: 'payments',
      },
    });
    await writeRun(dir, RUN, { answer: 'the payments-db Secret was rotated' }, '# Report\n');
    const runDir = path.join(dir, '.triage', 'runs', RUN);
    const calls = argvs.map((argv) => guardCall({ argv, normalized: parseKubectl(argv).normalized }));
    await writeFile(
      path.join(runDir, 'cluster-calls.jsonl'),
      calls.map((c) => `${JSON.stringify(c)}\n`).join(''),
    );
    const outputs = calls.map((c, i) => ({
      call: i + 1,
      by: 'guard',
      normalized: c.normalized,
      exitCode: 0,
      stdout: stdouts[i],
      stderr: '',
    }));
    await writeFile(
      path.join(runDir, 'cluster-outputs.jsonl'),
      outputs.map((o) => `${JSON.stringify(o)}\n`).join(''),
    );
    await recordFeedback(
      dir,
      {
        verdict: 'wrong',
        cause: 'secret payments-db was rotated and payments-config still holds the old key',
      },
      'api',
      { audit: new AuditLog() },
    );
    const caseDir = path.join(root.dir, 'cases', 'payments-crash');
    const io: CliIO = { stdout: () => undefined, stderr: () => undefined, env: {}, cwd: root.dir };
    expect(await runPromote(dir, { out: caseDir }, undefined, io)).toBe(0);

    const files = await filesBelow(caseDir);
    for (const file of files) {
      const text = await readFile(file, 'utf8');
      expect(
        plantedForms().filter((f) => text.includes(f)),
        path.relative(caseDir, file),
      ).toEqual([]);
    }
    const commands = await readFile(path.join(caseDir, 'cluster', 'commands.yaml'), 'utf8');
    expect(commands).toContain('stripe_key: [REDACTED]');
    expect(commands).toContain('password: [REDACTED]');
    // The ordinary table, as kubectl printed it.
    for (const line of (stdouts[0] ?? '').trim().split('\n')) expect(commands).toContain(line);
  });
});
