// Acceptance for the kubectl guard with the REAL Claude Code CLI: `triage-runner daemon --agent claude`,
// with a scripted model behind a local Anthropic API, has Claude's Bash tool run `kubectl delete pod`,
// `kubectl get pods` and a delete spelled with the flags first. Claude's own permission rules
// (--disallowedTools, from the persona's helpers.yaml) refuse the first, the second passes through the
// guard and the broker to a daemon-side stand-in for kubectl, and the broker refuses the third, which
// the CLI's prefix rule does not catch. Every call is in the bundle and result.json. Under the process
// engine with the CLI from the host, and under the docker engine with the agent image's own CLI, where
// the guard's `kubectl` runs inside the container.
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCallLog } from '../../src/kubectl/broker/calls.js';
import { requireCli } from '../support/agent-clis.js';
import { AGENT_IMAGE, dockerHost, requireAgentImage, requireEngine } from '../support/engine.js';
import { dropIncident, startCliDaemon, waitForFinalRun, type CliDaemon } from '../support/cli-daemon.js';
import { FAKE_PODS_TABLE, guardFixture, type GuardFixture } from '../support/guard.js';
import {
  conversationResults as toolResults,
  startScriptedModel,
  type ScriptedModel,
} from '../support/providers/scripted-anthropic.js';
import { RUN_FILES } from '../../src/workspace/layout.js';

const cli = requireCli('claude');
const docker = await requireEngine();
const hasImage = docker ? await requireAgentImage(docker) : false;
const API_KEY = 'sk-ant-e2e-guard-0123456789abcdef';

const REPORT = `# Report

## Summary
web-1 crash-loops; the pods table from the cluster:

{{result 2}}

## Root Cause
Not established in this scripted run.
`;

const SCRIPT = {
  steps: [
    { bash: 'kubectl delete pod web-1 -n shop; echo "delete exit=$?"' },
    { bash: 'kubectl get pods -n shop; echo "get exit=$?"' },
    { bash: 'kubectl -n shop delete pod web-1; echo "flags-first delete exit=$?"' },
    { write_report: REPORT },
  ],
  answer: 'Hypothesis: web-1 crash-loops (confidence low). First action: read its previous logs.',
};

interface Scenario {
  incidentId: string;
  /** `daemon` flags and configuration for the engine. */
  args: string[];
  config: Record<string, unknown>;
}

describe('kubectl guard with the real Claude CLI', () => {
  let fx: GuardFixture;
  let model: ScriptedModel;
  const daemons: CliDaemon[] = [];

  beforeAll(async () => {
    fx = await guardFixture('triage-e2e-guard-');
    model = await startScriptedModel(
      new Map([
        ['e2e-guard-process', SCRIPT],
        ['e2e-guard-docker', SCRIPT],
      ]),
    );
  });

  afterAll(async () => {
    for (const d of daemons) await d.stop();
    await model?.close();
    await fx?.root.cleanup();
  });

  /** Runs the script as one incident and checks what happened to each call. */
  async function scenario({ incidentId, args, config }: Scenario): Promise<void> {
    const { root, real, kubeconfig } = fx;
    const incidents = path.join(root.dir, incidentId, 'incidents');
    await mkdir(incidents, { recursive: true });
    const daemon = await startCliDaemon({
      dir: path.dirname(incidents),
      config: {
        workspaces_root: incidents,
        providers: { anthropic_base_url: model.url },
        kubeconfig,
        kubectl: { command: real.command },
        ...config,
      },
      args: [...args, '--agent', 'claude'],
      env: {
        PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
        HOME: root.dir,
        ANTHROPIC_API_KEY: API_KEY,
      },
    });
    daemons.push(daemon);
    const ws = path.join(incidents, 'crashloop-web-1');
    await dropIncident(ws, {
      incidentId,
      cluster: 'prod-1',
      namespace: 'shop',
      resource: { apiVersion: 'v1', kind: 'Pod', name: 'web-1', namespace: 'shop' },
      faultType: 'CrashLoop',
      severity: 'high',
      timestamp: '2026-11-23T01:00:00Z',
    });
    const { state, bundle, result = {} } = await waitForFinalRun(ws, 150_000, daemon.tail);
    expect(state.state, `${JSON.stringify(result)} ${daemon.tail()}`).toBe('succeeded');

    // What Claude's Bash tool returned: its own refusal, the table from the daemon side, the guard's refusal.
    const [denied, got, refused] = toolResults(model, incidentId);
    expect(denied).toBe(
      'Permission to use Bash with command kubectl delete pod web-1 -n shop; echo "delete exit=$?" has been denied.',
    );
    expect(got).toBe(`${FAKE_PODS_TABLE}get exit=0`);
    expect(refused).toContain('kubectl guard: refused `kubectl delete pods/web-1 --namespace=shop`');
    expect(refused).toContain('flags-first delete exit=1');
    expect(await readFile(path.join(ws, 'output', 'investigation.md'), 'utf8')).toContain('CrashLoopBackOff');

    // Only the get reached the daemon's kubectl, with the daemon's kubeconfig.
    const calls = (await real.calls()).filter((c) => c.startsWith('get pods -n shop'));
    expect(calls.at(-1)).toBe(`get pods -n shop | KUBECONFIG=${kubeconfig} TRIAGE_STAGE=agent`);
    // No delete reached the daemon's kubectl; its own `auth can-i delete …` questions (the broker-identity
    // readiness check) ask, they do not delete.
    expect((await real.calls()).filter((c) => c.includes('delete') && !c.startsWith('auth can-i '))).toEqual(
      [],
    );
    const { records } = await readCallLog(path.join(bundle, RUN_FILES.clusterCalls));
    expect(records.map((r) => [r.by, r.decision, r.normalized, r.category])).toEqual([
      ['guard', 'allowed', 'get pods --namespace=shop', 'read'],
      ['guard', 'refused', 'delete pods/web-1 --namespace=shop', 'mutate'],
      ['cli', 'refused', 'delete pods/web-1 --namespace=shop', 'mutate'],
    ]);
    expect(records[2]?.rule).toBe('claude permission rules');
    expect(result.kubectl).toEqual({ guard: 'broker', calls: 3, refused: 2, log: RUN_FILES.clusterCalls });
    const audit = (await readFile(path.join(ws, '.triage', 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.type === 'kubectl_refused');
    expect(audit.map((e) => e.by)).toEqual(['guard', 'cli']);
  }

  it.skipIf(!cli)(
    'process engine: refuses both deletes (Claude rule, then the guard), passes the get through and records all three',
    () =>
      scenario({
        incidentId: 'e2e-guard-process',
        args: ['--engine', 'process'],
        config: {
          agent: {
            command: cli,
            model: 'sonnet',
            timeout: '3m',
            min_report_bytes: 40,
            report_sections: ['Summary', 'Root Cause'],
          },
        },
      }),
  );

  it.skipIf(!docker || !hasImage)(
    "docker engine, the image's claude: the guard refuses inside the container, the get reaches the daemon side",
    () =>
      scenario({
        incidentId: 'e2e-guard-docker',
        args: ['--engine', 'docker'],
        config: {
          agent: {
            image: AGENT_IMAGE,
            model: 'sonnet',
            timeout: '3m',
            min_report_bytes: 40,
            report_sections: ['Summary', 'Root Cause'],
          },
          docker: { host: dockerHost(), memory: '1g', network: 'host' },
        },
      }),
    180_000,
  );
});
