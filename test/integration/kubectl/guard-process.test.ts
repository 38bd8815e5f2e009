// The kubectl guard in the real run pipeline under the process engine: an agent (sh) on the daemon's
// host finds the guard's `kubectl` first on its PATH and no KUBECONFIG; its read passes through the
// broker to the daemon-side kubectl with the daemon's kubeconfig, its delete, raw DELETE and KUBECONFIG
// swap are refused; the bundle lists every call, result.json counts them and the audit log records
// each refusal.
import { appendFile, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunResult } from '../../../src/workspace/run-record.js';
import { createProcessEngine } from '../../../src/engines/process.js';
import { readCallLog } from '../../../src/kubectl/broker/calls.js';
import { silentLogger } from '../../../src/log/logger.js';
import { verifyWorkspaceAudit } from '../../../src/replay/verify.js';
import { FAKE_PODS_TABLE, guardFixture, type GuardFixture } from '../../support/guard.js';
import { makeWorkspace, testConfig } from '../../support/runs.js';
import { runShAgent } from '../../support/sh-agent.js';
import { RUN_FILES } from '../../../src/workspace/layout.js';

describe('kubectl guard under the process engine', () => {
  let fx: GuardFixture;
  beforeAll(async () => {
    fx = await guardFixture('triage-guard-process-');
  });
  afterAll(async () => fx?.root.cleanup());

  it('refuses the delete, passes the get to the daemon-side kubectl, and records every call', async () => {
    const config = testConfig(fx.root.dir, {
      engine: 'process',
      kubeconfig: fx.kubeconfig,
      kubectl: { command: fx.real.command },
    });
    const workspace = await makeWorkspace(fx.root.dir);
    const runId = `guard-process-${process.pid}`;
    const { outcome, bundle, stdout } = await runShAgent(
      config,
      workspace,
      runId,
      [
        'echo "kubectl=$(command -v kubectl)"',
        'echo "agent KUBECONFIG=${KUBECONFIG:-unset}"',
        'kubectl get pods -n shop; echo "get exit=$?"',
        'kubectl delete pod web-1 -n shop; echo "delete exit=$?"',
        'kubectl delete --raw /api/v1/namespaces/shop/pods/web-1; echo "raw exit=$?"',
        'KUBECONFIG=/tmp/x kubectl get pods; echo "swap exit=$?"',
      ],
      undefined,
      createProcessEngine(config, silentLogger()),
      { PATH: process.env.PATH },
    );
    expect(outcome, stdout).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(stdout).toContain(`kubectl=${path.join(bundle, RUN_FILES.guard, 'kubectl')}`);
    expect(stdout).toContain('agent KUBECONFIG=unset');
    expect(stdout).toContain(`${FAKE_PODS_TABLE}get exit=0`);
    expect(stdout).toContain('delete exit=1');
    expect(stdout).toContain('raw exit=1');
    expect(stdout).toContain('swap exit=1');

    // Only the read reached the daemon's kubectl, with the daemon's kubeconfig.
    expect(await fx.real.calls()).toEqual([
      `get pods -n shop | KUBECONFIG=${fx.kubeconfig} TRIAGE_STAGE=agent`,
    ]);

    const { records } = await readCallLog(path.join(bundle, RUN_FILES.clusterCalls));
    expect(records.map((r) => [r.decision, r.normalized, r.rule])).toEqual([
      ['allowed', 'get pods --namespace=shop', 'include "k8s-read"'],
      ['refused', 'delete pods/web-1 --namespace=shop', 'exclude "k8s-change"'],
      ['refused', 'delete --raw=/api/v1/namespaces/shop/pods/web-1', 'exclude "k8s-change"'],
      ['refused', 'get pods', 'guard: KUBECONFIG'],
    ]);
    const result = await readRunResult(bundle);
    expect(result.ok && result.value.kubectl).toEqual({
      guard: 'broker',
      calls: 4,
      refused: 3,
      log: RUN_FILES.clusterCalls,
    });

    const audit = (await readFile(path.join(workspace.dir, '.triage', 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(audit.filter((e) => e.type === 'kubectl_refused').map((e) => [e.by, e.command, e.rule])).toEqual([
      ['guard', 'kubectl delete pods/web-1 --namespace=shop', 'exclude "k8s-change"'],
      ['guard', 'kubectl delete --raw=/api/v1/namespaces/shop/pods/web-1', 'exclude "k8s-change"'],
      ['guard', 'kubectl get pods', 'guard: KUBECONFIG'],
    ]);
    // The call log is part of what the `finished` event digests; the socket is gone.
    const finished = audit.find((e) => e.type === 'finished') as { files: Record<string, string> };
    expect(Object.keys(finished.files)).toContain(RUN_FILES.clusterCalls);
    await expect(stat(path.join(bundle, RUN_FILES.brokerSocket))).rejects.toThrow(/ENOENT/);
    // The call log is covered by audit verify: an edit to it afterwards is found.
    expect(await verifyWorkspaceAudit(workspace.dir)).toMatchObject({ ok: true });
    await appendFile(path.join(bundle, RUN_FILES.clusterCalls), '{"forged":true}\n');
    expect(await verifyWorkspaceAudit(workspace.dir)).toMatchObject({ ok: false });
  });

  it('hands the agent the kubeconfig and no guard when kubectl.guard is off', async () => {
    const config = testConfig(fx.root.dir, {
      engine: 'process',
      kubeconfig: fx.kubeconfig,
      kubectl: { guard: false, command: fx.real.command },
    });
    const workspace = await makeWorkspace(fx.root.dir);
    const { outcome, bundle, stdout } = await runShAgent(
      config,
      workspace,
      `guard-off-${process.pid}`,
      ['echo "agent KUBECONFIG=${KUBECONFIG:-unset}"', 'echo "kubectl=$(command -v kubectl || echo none)"'],
      undefined,
      createProcessEngine(config, silentLogger()),
      { PATH: '/usr/bin:/bin' },
    );
    expect(outcome, stdout).toMatchObject({ status: 'succeeded' });
    expect(stdout).toContain(`agent KUBECONFIG=${fx.kubeconfig}`);
    expect(stdout).not.toContain(RUN_FILES.guard);
    const result = await readRunResult(bundle);
    expect(result.ok && result.value.kubectl).toEqual({ guard: 'off', calls: 0, refused: 0 });
  });
});
