// The triage script's kubectl goes through the run's broker (process engine, real pipeline, a real
// triage script process, the stand-in kubectl on the daemon's side): its reads reach the daemon-side
// kubectl with the daemon's kubeconfig and are recorded `by: triage` in cluster-calls.jsonl with what
// they returned, its write is refused by the persona's read-only policy and audited, a KUBECONFIG of
// its own choosing is refused while the one the daemon gave it is not, and the agent's own calls follow
// in the same record.
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_FILES, runDirOf } from '../../../src/workspace/layout.js';
import { AuditLog } from '../../../src/audit/log.js';
import { readRunResult } from '../../../src/workspace/run-record.js';
import { createRunExecutor } from '../../../src/run/pipeline.js';
import { createProcessEngine } from '../../../src/engines/process.js';
import { readCallLog } from '../../../src/kubectl/broker/calls.js';
import { readOutputLog } from '../../../src/kubectl/broker/outputs.js';
import { silentLogger } from '../../../src/log/logger.js';
import { Redactor } from '../../../src/log/redact.js';
import { FAKE_PODS_TABLE, guardFixture, type GuardFixture } from '../../support/guard.js';
import { fakeAdapter, makeWorkspace, testConfig } from '../../support/runs.js';
import { FINISH_ON_HOST } from '../../support/sh-agent.js';

const TRIAGE_SCRIPT = [
  '#!/bin/sh',
  'echo "triage kubectl=$(command -v kubectl)"',
  'echo "triage KUBECONFIG=${KUBECONFIG:-unset}"',
  'kubectl get pods -n "$NAMESPACE"; echo "triage get exit=$?"',
  'kubectl delete pod web-1 -n "$NAMESPACE"; echo "triage delete exit=$?"',
  'KUBECONFIG=/tmp/other kubectl get pods; echo "triage swap exit=$?"',
  'exit 0',
  '',
].join('\n');

describe("the triage script's kubectl goes through the run's broker", () => {
  let fx: GuardFixture;
  let skill: string;
  beforeAll(async () => {
    fx = await guardFixture('triage-guard-triage-');
    skill = path.join(fx.root.dir, 'skill');
    await mkdir(skill, { recursive: true });
    await writeFile(path.join(skill, 'triage.sh'), TRIAGE_SCRIPT);
    await chmod(path.join(skill, 'triage.sh'), 0o755);
  });
  afterAll(async () => fx?.root.cleanup());

  const runWith = async (guard: boolean, runId: string) => {
    const config = testConfig(fx.root.dir, {
      engine: 'process',
      kubeconfig: fx.kubeconfig,
      kubectl: { command: fx.real.command, guard },
      skills: {
        sources: [{ name: 'triage-skill', path: skill }],
        cache_dir: path.join(fx.root.dir, `skills-cache-${runId}`),
        disable_triage_preload: false,
        triage: { skill: 'triage-skill', script: 'triage.sh', args: [], validate_report: false },
      },
    });
    const adapter = fakeAdapter('sh');
    const script = ['kubectl get pods -n shop; echo "agent get exit=$?"', ...FINISH_ON_HOST].join('\n');
    const executor = createRunExecutor({
      config,
      log: silentLogger(),
      redactor: new Redactor(),
      secrets: {},
      audit: new AuditLog(),
      env: { PATH: process.env.PATH, HOME: fx.root.dir },
      engine: createProcessEngine(config, silentLogger()),
      agents: () => ({
        ...adapter,
        buildInvocation: (input) => ({ ...adapter.buildInvocation(input), args: ['-c', script] }),
      }),
    });
    const workspace = await makeWorkspace(fx.root.dir);
    const outcome = await executor.run({
      workspace,
      runId,
      attempt: 1,
      signal: new AbortController().signal,
      log: silentLogger(),
    });
    await executor.close?.();
    const bundle = runDirOf(workspace.dir, runId);
    return {
      outcome,
      bundle,
      workspace,
      triage: await readFile(path.join(bundle, RUN_FILES.triageLog), 'utf8'),
    };
  };

  it('records its reads by: triage with their output, refuses its delete and a KUBECONFIG swap', async () => {
    const before = (await fx.real.calls()).length;
    const { outcome, bundle, workspace, triage } = await runWith(true, `guard-triage-${process.pid}`);
    expect(outcome.status, triage).toBe('succeeded');

    // The script found the guard first on its PATH, its KUBECONFIG as before, the pods table, the refusals.
    expect(triage).toContain(`triage kubectl=${path.join(bundle, RUN_FILES.triageGuard, 'kubectl')}`);
    expect(triage).toContain(`triage KUBECONFIG=${fx.kubeconfig}`);
    expect(triage).toContain(`${FAKE_PODS_TABLE}triage get exit=0`);
    expect(triage).toContain('triage delete exit=1');
    expect(triage).toContain('triage swap exit=1');

    // Only the reads reached the daemon's kubectl, with the daemon's kubeconfig, each with its stage.
    expect((await fx.real.calls()).slice(before)).toEqual([
      `get pods -n shop | KUBECONFIG=${fx.kubeconfig} TRIAGE_STAGE=triage`,
      `get pods -n shop | KUBECONFIG=${fx.kubeconfig} TRIAGE_STAGE=agent`,
    ]);

    // One record of the whole investigation: the triage script's calls, then the agent's.
    const { records } = await readCallLog(path.join(bundle, RUN_FILES.clusterCalls));
    expect(records.map((r) => [r.by, r.decision, r.normalized, r.rule, r.exitCode])).toEqual([
      ['triage', 'allowed', 'get pods --namespace=shop', 'include "k8s-read"', 0],
      ['triage', 'refused', 'delete pods/web-1 --namespace=shop', 'exclude "k8s-change"', 1],
      ['triage', 'refused', 'get pods', 'guard: KUBECONFIG', 1],
      ['guard', 'allowed', 'get pods --namespace=shop', 'include "k8s-read"', 0],
    ]);
    // What the triage script's read returned is kept like the agent's.
    const outputs = await readOutputLog(path.join(bundle, RUN_FILES.clusterOutputs));
    expect(outputs.find((o) => o.call === 1)?.stdout).toBe(FAKE_PODS_TABLE);

    const result = await readRunResult(bundle);
    expect(result.ok && result.value.kubectl).toEqual({
      guard: 'broker',
      calls: 4,
      refused: 2,
      log: RUN_FILES.clusterCalls,
    });
    const audit = (await readFile(path.join(workspace.dir, '.triage', 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(audit.filter((e) => e.type === 'kubectl_refused').map((e) => [e.by, e.command])).toEqual([
      ['triage', 'kubectl delete pods/web-1 --namespace=shop'],
      ['triage', 'kubectl get pods'],
    ]);
    // The triage script's broker is gone once it is done: no socket, no guard folder in the bundle.
    await expect(stat(path.join(bundle, RUN_FILES.triageBrokerSocket))).rejects.toThrow(/ENOENT/);
    await expect(stat(path.join(bundle, RUN_FILES.triageGuard))).rejects.toThrow(/ENOENT/);
  }, 60_000);

  it('with kubectl.guard off the script runs the kubectl on its PATH with the kubeconfig, and nothing is recorded', async () => {
    const { outcome, bundle, triage } = await runWith(false, `guard-triage-off-${process.pid}`);
    expect(outcome.status, triage).toBe('succeeded');
    expect(triage).toContain(`triage KUBECONFIG=${fx.kubeconfig}`);
    expect(triage).not.toContain(RUN_FILES.triageGuard);
    await expect(stat(path.join(bundle, RUN_FILES.clusterCalls))).rejects.toThrow(/ENOENT/);
  }, 60_000);
});
