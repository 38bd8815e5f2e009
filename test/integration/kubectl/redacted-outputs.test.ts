// What the run saw, as cluster-outputs.jsonl keeps it: the guard's kubectl calls the broker, which runs
// the real kubectl against a stand-in API server serving a Secret, a ConfigMap with a Stripe key and a
// pod with a literal DB_PASSWORD; the recorded outputs hold none of the credentials (keys and the rest
// of each object kept), and an ordinary output is recorded exactly as kubectl printed it.
import { execFile, execFileSync } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startBroker, type RunningBroker } from '../../../src/kubectl/broker/broker.js';
import { CallLog } from '../../../src/kubectl/broker/calls.js';
import { OutputLog, readOutputLog } from '../../../src/kubectl/broker/outputs.js';
import { installGuard } from '../../../src/kubectl/broker/install-guard.js';
import { DEFAULT_HELPERS, compilePolicy } from '../../../src/kubectl/policy/policy.js';
import { Redactor } from '../../../src/log/redact.js';
import { makeDirs } from '../../../src/util/fs.js';
import {
  clusterObjects,
  KUBECTL,
  plantedForms,
  PLANTED,
  podName,
  standInCluster,
  type StandInCluster,
} from '../../support/kube-objects.js';
import { tempDir } from '../../support/runs.js';
import { RUN_FILES } from '../../../src/workspace/layout.js';

const policy = compilePolicy(DEFAULT_HELPERS, 'kubernetes-sre', 'built-in');

let root: { dir: string; cleanup: () => Promise<void> };
let cluster: StandInCluster;
let broker: RunningBroker | undefined;
let calls: CallLog | undefined;
let outputs: OutputLog | undefined;

beforeEach(async () => {
  try {
    execFileSync(KUBECTL, ['version', '--client'], { stdio: 'ignore' });
  } catch {
    throw new Error(`these tests run the real kubectl (${KUBECTL}): run .ci/install-test-tools.sh`);
  }
  root = await tempDir('triage-redacted-outputs-');
  cluster = await standInCluster(root.dir, clusterObjects());
});
afterEach(async () => {
  await broker?.stop();
  broker = undefined;
  await calls?.close();
  await outputs?.close();
  await cluster.close();
  await root.cleanup();
});

/** The run folder the recorders write in, as the daemon lays it out. */
function runDir(): string {
  const dir = path.join(root.dir, 'ws', '.triage', 'runs', 'run-1');
  makeDirs(dir);
  return dir;
}

const leaks = (text: string) => plantedForms().filter((form) => text.includes(form));

/** The daemon's recorders with the daemon's redaction, and a guard whose calls go through the broker. */
async function guarded(): Promise<(args: string[]) => Promise<void>> {
  const redactor = new Redactor();
  calls = await CallLog.open(path.join(runDir(), RUN_FILES.clusterCalls), (t) => redactor.redact(t));
  outputs = await OutputLog.open(path.join(runDir(), RUN_FILES.clusterOutputs), (t) => redactor.redact(t));
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: root.dir, KUBECONFIG: cluster.kubeconfig };
  broker = await startBroker({
    socketPath: path.join(root.dir, 'kubectl.sock'),
    policy,
    kubectl: { command: KUBECTL, env, cwd: root.dir },
    callTimeoutMs: 20_000,
    killGraceMs: 500,
    onCall: async (record, output) => {
      const n = await calls!.append(record);
      if (output && record.decision === 'allowed') await outputs!.append(n, record, output);
    },
  });
  const { kubectl } = await installGuard(path.join(root.dir, 'guard'), {
    socketPath: broker.socketPath,
    nodePath: process.execPath,
    runId: 'run-1',
  });
  return (args) =>
    new Promise((resolve) =>
      execFile(kubectl, args, { env: { PATH: '/usr/bin:/bin' }, maxBuffer: 64 << 20 }, () => resolve()),
    );
}

describe('cluster-outputs.jsonl holds what the run saw, redacted', () => {
  it('keeps no credential from a ConfigMap, a pod spec or its description, and keeps their keys', async () => {
    const run = await guarded();
    await run(['get', 'configmap', 'payments-config', '-o', 'yaml']);
    await run(['get', 'configmap', 'payments-config', '-o', 'json']);
    await run(['describe', 'configmap', 'payments-config']);
    await run(['get', 'pods', '-o', 'yaml']);
    await run(['get', 'pods', '-o', 'json']);
    await run(['describe', 'pods']);
    await broker?.stop();
    const recorded = await readOutputLog(outputs!.file);
    expect(recorded.map((r) => r.exitCode)).toEqual([0, 0, 0, 0, 0, 0]);
    const raw = await readFile(outputs!.file, 'utf8');
    expect(leaks(raw)).toEqual([]);
    const [cmYaml, cmJson, cmDescribe, podYaml, podJson, podDescribe] = recorded.map((r) => r.stdout);
    expect(cmYaml).toContain('  stripe_key: [REDACTED]\n');
    expect(cmYaml).toContain('  LOG_LEVEL: debug\n');
    expect(cmYaml).toContain('    stripe.api.key=[REDACTED]\n');
    expect((JSON.parse(cmJson ?? '') as { data: Record<string, string> }).data.stripe_key).toBe('[REDACTED]');
    expect(cmDescribe).toContain('credentials.json:\n----\n[REDACTED]\n');
    expect(podYaml).toContain("      - name: DB_PASSWORD\n        value: '[REDACTED]'\n");
    expect(podYaml).toContain('      - name: LOG_LEVEL\n        value: info\n');
    expect(podJson).toContain(
      '"name": "AWS_SECRET_ACCESS_KEY",\n                                "value": "[REDACTED]"',
    );
    expect(podDescribe).toMatch(/DB_PASSWORD:\s+\[REDACTED\]\n/);
  });

  it('records ordinary output exactly as kubectl printed it', async () => {
    const run = await guarded();
    await run(['get', 'pods', '-o', 'wide']);
    await run(['get', 'pods', podName(1), '-o', 'yaml']);
    await broker?.stop();
    const [table, yaml] = await readOutputLog(outputs!.file);
    expect(table?.stdout).toBe(await cluster.kubectl(['get', 'pods', '-o', 'wide']));
    expect(yaml?.stdout).toBe(await cluster.kubectl(['get', 'pods', podName(1), '-o', 'yaml']));
    expect(yaml?.stdout).toContain('@sha256:');
  });

  it('keeps no Secret data from `kubectl get secret` in YAML and JSON, one Secret or a list', async () => {
    // The guard refuses these calls; the recorder is tested on their real output all the same, as a
    // call the policy let through would bring it.
    const redactor = new Redactor();
    outputs = await OutputLog.open(path.join(runDir(), RUN_FILES.clusterOutputs), (t) => redactor.redact(t));
    const forms = [
      ['get', 'secret', 'payments-db', '-o', 'yaml'],
      ['get', 'secret', 'payments-db', '-o', 'json'],
      ['get', 'secrets', '-o', 'yaml'],
    ];
    for (const [i, args] of forms.entries()) {
      const stdout = await cluster.kubectl(args);
      expect(stdout).toContain(Buffer.from(PLANTED.dbPassword).toString('base64'));
      await outputs.append(
        i + 1,
        { by: 'guard', normalized: args.join(' '), exitCode: 0 },
        { stdout: Buffer.from(stdout), stderr: Buffer.alloc(0), droppedStdout: 0, droppedStderr: 0 },
      );
    }
    const raw = await readFile(outputs.file, 'utf8');
    expect(leaks(raw)).toEqual([]);
    const [yaml, json] = await readOutputLog(outputs.file);
    expect(yaml?.stdout).toContain('  password: [REDACTED]\n');
    expect(yaml?.stdout).toContain('  name: payments-db\n');
    expect((JSON.parse(json?.stdout ?? '') as { data: Record<string, string> }).data).toEqual({
      DATABASE_URL: '[REDACTED]',
      'aws-credentials': '[REDACTED]',
      password: '[REDACTED]',
      username: '[REDACTED]',
    });
  });

  it("is readable by the daemon's user only (0600), as is the call log", async () => {
    await guarded();
    expect((await stat(outputs!.file)).mode & 0o777).toBe(0o600);
    expect((await stat(calls!.file)).mode & 0o777).toBe(0o600);
  });
});
