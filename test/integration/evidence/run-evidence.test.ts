// The evidence check in the real run pipeline (process engine): a stand-in agent writes a report citing
// `kubectl describe pod` and quoting a log line. When it never made those calls, result.json names
// them in citedNotRun and excerptsNotFound and the run is not grounded; when it made them through the
// guard (the broker ran a stand-in kubectl on the daemon's side), the same report is grounded.
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunResult } from '../../../src/workspace/run-record.js';
import { createProcessEngine } from '../../../src/engines/process.js';
import { readOutputLog } from '../../../src/kubectl/broker/outputs.js';
import { silentLogger } from '../../../src/log/logger.js';
import { createMetrics } from '../../../src/server/metrics.js';
import { runDirOf, RUN_FILES } from '../../../src/workspace/layout.js';
import { startProvider } from '../../support/providers/server.js';
import { FINISH_ON_HOST, shScriptExecutor } from '../../support/sh-agent.js';
import { makeWorkspace, tempDir, testConfig } from '../../support/runs.js';

const LOG_LINE = 'panic: missing environment variable DATABASE_URL';

const KUBECTL = `#!/bin/sh
case " $* " in
  *" version "*) printf '{"serverVersion":{"gitVersion":"v1.31.0"}}\\n' ;;
  *" can-i --list "*) printf 'Resources   Non-Resource URLs   Resource Names   Verbs\\npods        []                  []               [get list watch]\\n' ;;
  *" can-i "*) echo yes ;;
  *" get "*) printf 'NAME    READY   STATUS             RESTARTS\\nweb-1   0/1     CrashLoopBackOff   7\\n' ;;
  *" describe "*) printf 'Name:  web-1\\nState: Waiting\\n  Reason: CrashLoopBackOff\\n' ;;
  *" logs "*) printf 'starting web v2\\n${LOG_LINE}\\n' ;;
  *) exit 1 ;;
esac
`;

const REPORT = `# Kubernetes Incident Triage Report

## 0. Executive Triage Card

### Primary Hypothesis
web-1 exits because DATABASE_URL is unset [INF-1] — Confidence: High

## 2. Assessment & Findings

### Observed Facts
- **[FACT-1]** web-1 is in CrashLoopBackOff — Source: \`kubectl get pods -n shop\`
- **[FACT-2]** web-1 waits in CrashLoopBackOff — Source: \`kubectl describe pod web-1 -n shop\`
- **[FACT-3]** Its previous container said \`${LOG_LINE}\` — Source: \`kubectl logs web-1 -n shop --previous\`

### Derived Inferences
- **[INF-1]** The container fails at start-up without DATABASE_URL — Based on: FACT-1, FACT-2, FACT-3

## 5. Proof of Work

### Commands Executed

\`\`\`bash
kubectl get pods -n shop
kubectl describe pod web-1 -n shop
kubectl logs web-1 -n shop --previous
\`\`\`

## 6. Supporting Evidence

\`\`\`
${LOG_LINE}
\`\`\`
`;

describe('evidence check after the agent', () => {
  let root: { dir: string; cleanup: () => Promise<void> };
  let kubectl: string;
  let report: string;
  beforeAll(async () => {
    root = await tempDir('triage-evidence-');
    kubectl = path.join(root.dir, 'kubectl');
    await writeFile(kubectl, KUBECTL);
    await chmod(kubectl, 0o755);
    report = path.join(root.dir, 'report.md');
    await writeFile(report, REPORT);
  });
  afterAll(async () => root?.cleanup());

  const run = async (
    calls: string[],
    runId: string,
    command = kubectl,
    access = command !== kubectl,
    permissionsText?: string,
    extra: Record<string, unknown> = {},
  ) => {
    const config = testConfig(root.dir, {
      engine: 'process',
      kubectl: { command, access_check: access },
      ...extra,
    });
    const made = await makeWorkspace(root.dir);
    const workspace = permissionsText === undefined ? made : { ...made, permissionsText };
    const script = [
      ...calls.map((c) => `${c} >/dev/null`),
      // The report the agent "wrote", then the rest of a Claude-like ending (not its stock report).
      `cp ${report} "$TRIAGE_OUTPUT_DIR/investigation.md"`,
      ...FINISH_ON_HOST.slice(1),
    ].join('\n');
    const engine = createProcessEngine(config, silentLogger());
    const metrics = createMetrics();
    const executor = shScriptExecutor(
      config,
      script,
      engine,
      { PATH: process.env.PATH },
      extra.skills ? 'configured' : 'none',
      { metrics },
    );
    const readiness = await executor.readiness();
    const outcome = await executor.run({
      workspace,
      runId,
      attempt: 1,
      signal: new AbortController().signal,
      log: silentLogger(),
    });
    const bundle = runDirOf(workspace.dir, runId);
    const result = await readRunResult(bundle);
    if (!result.ok) throw new Error(result.problem);
    const audit = await readFile(path.join(workspace.dir, '.triage', 'audit.jsonl'), 'utf8');
    const prompt = await readFile(path.join(bundle, 'prompt-sent.md'), 'utf8');
    await executor.close?.();
    const scraped = await metrics.render();
    return { outcome, bundle, result: result.value, audit, readiness, prompt, scraped };
  };

  it('names the describe that never ran and the log line no output holds; the run is not grounded', async () => {
    const { outcome, result, audit } = await run(
      ['kubectl get pods -n shop'],
      `evidence-missing-${process.pid}`,
    );
    expect(outcome.status).toBe('succeeded');
    expect(result.evidence?.verdict).not.toBe('grounded');
    expect(result.evidence?.citedNotRun).toEqual([
      'kubectl describe pod web-1 -n shop (FACT-2)',
      'kubectl logs web-1 -n shop --previous (FACT-3)',
      'kubectl describe pod web-1 -n shop (commands executed)',
      'kubectl logs web-1 -n shop --previous (commands executed)',
    ]);
    expect(result.evidence?.excerptsNotFound).toEqual([
      `${LOG_LINE} (FACT-3)`,
      `${LOG_LINE} (supporting evidence)`,
    ]);
    expect(result.evidence).toMatchObject({ claimsSupported: 1, claimsTotal: 6 });
    expect(result.evidence?.claims?.[0]).toMatchObject({ kind: 'headline', status: 'unsupported' });
    const event = audit
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((e) => e.type === 'evidence_checked');
    expect(event).toMatchObject({
      verdict: 'partial',
      claimsSupported: 1,
      claimsTotal: 6,
      checks: ['deterministic'],
    });
  });

  it('is grounded once the agent made those calls through the guard', async () => {
    const { result, bundle, scraped } = await run(
      [
        'kubectl get pods -n shop',
        'kubectl -n shop describe po web-1',
        'kubectl logs -p web-1 --namespace=shop',
      ],
      `evidence-grounded-${process.pid}`,
    );
    expect(scraped).toContain('triage_runner_evidence_total{verdict="grounded"} 1\n');
    expect(result.evidence).toMatchObject({
      verdict: 'grounded',
      facts: 3,
      unverified: [],
      citedNotRun: [],
      excerptsNotFound: [],
      gaps: [],
      headline: 'web-1 exits because DATABASE_URL is unset [INF-1]',
      claimsSupported: 6,
      claimsTotal: 6,
      checks: ['deterministic'],
    });
    const outputs = await readOutputLog(path.join(bundle, RUN_FILES.clusterOutputs));
    expect(outputs.map((o) => o.normalized)).toEqual([
      'get pods --namespace=shop',
      'describe pods/web-1 --namespace=shop',
      'logs pods/web-1 --namespace=shop --previous',
    ]);
    expect(outputs[2]?.stdout).toContain(LOG_LINE);
  });

  it('with evidence.verify: model, asks a model through the gateway about each supported claim, records the calls, and only lowers the verdict', async () => {
    const model = await startProvider(
      (req) => {
        if (!req.url.endsWith('/v1/messages')) return undefined;
        const body = JSON.parse(req.body) as { model?: string; messages?: { content?: string }[] };
        const claim = body.messages?.[0]?.content ?? '';
        const answer = /<claim kind="headline">/.test(claim)
          ? '{"answer": "contradicted", "why": "the output shows a CrashLoopBackOff, not why"}'
          : '{"answer": "supported", "why": "shown"}';
        return {
          kind: 'json',
          body: {
            id: 'msg_evidence',
            type: 'message',
            role: 'assistant',
            model: body.model,
            content: [{ type: 'text', text: answer }],
            stop_reason: 'end_turn',
            usage: { input_tokens: 100, output_tokens: 20 },
          },
        };
      },
      () => ({ type: 'error', error: { type: 'api_error', message: 'stand-in' } }),
    );
    try {
      const { result, bundle } = await run(
        [
          'kubectl get pods -n shop',
          'kubectl -n shop describe po web-1',
          'kubectl logs -p web-1 --namespace=shop',
        ],
        `evidence-model-${process.pid}`,
        kubectl,
        false,
        undefined,
        {
          providers: { anthropic_base_url: model.url },
          evidence: { verify: 'model', model: 'claude-haiku-4-5' },
        },
      );
      expect(result.evidence).toMatchObject({ verdict: 'ungrounded', checks: ['deterministic', 'model'] });
      expect(result.evidence?.claims?.[0]).toMatchObject({
        kind: 'headline',
        status: 'contradicted',
        why: expect.stringMatching(/^the model reader: contradicted — the output shows a CrashLoopBackOff/),
      });
      // Every claim the deterministic check supported but the inference was read once, with its cited output.
      const asked = model.requests.filter((r) => r.url.endsWith('/v1/messages'));
      expect(asked).toHaveLength(5);
      expect(asked.every((r) => Buffer.byteLength(r.body) < 6000)).toBe(true);
      expect(asked.some((r) => r.body.includes('$ kubectl logs -p web-1 --namespace=shop'))).toBe(true);
      const calls = (await readFile(path.join(bundle, 'model-calls.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { by?: string; path?: string; status?: number });
      expect(calls.filter((c) => c.by === 'evidence')).toHaveLength(5);
      expect(calls.every((c) => c.path === '/v1/messages' && c.status === 200)).toBe(true);
    } finally {
      await model.close();
    }
  });

  it('checks cluster access through kubectl.command: /readyz names it, the run still runs marked unreachable, and is not grounded', async () => {
    const down = path.join(root.dir, 'kubectl-down');
    await writeFile(
      down,
      '#!/bin/sh\necho "The connection to the server localhost:8080 was refused - did you specify the right host or port?" >&2\nexit 1\n',
    );
    await chmod(down, 0o755);
    const { outcome, result, readiness, prompt, scraped } = await run(
      ['kubectl get pods -n shop'],
      `evidence-unreachable-${process.pid}`,
      down,
    );
    expect(scraped).toContain('triage_runner_cluster_reachable{cluster="default"} 0\n');
    expect(scraped).toContain('triage_runner_evidence_total{verdict="ungrounded"} 1\n');
    const check = readiness.checks.find((c) => c.name.includes('cluster'));
    expect(check).toMatchObject({ name: 'cluster:default', ok: true, degraded: true });
    expect(check?.detail).toContain('no kubeconfig is configured, so kubectl fell back to localhost:8080');
    expect(outcome.status).toBe('succeeded');
    expect(prompt).toContain('CLUSTER UNREACHABLE: the daemon could not reach cluster default');
    expect(result.cluster).toMatchObject({ name: 'default', reachable: false });
    expect(result.evidence?.verdict).toBe('ungrounded');
    expect(result.evidence?.reason).toMatch(/^no cluster access: the access check found it unreachable/);
    expect(result.evidence?.gaps[0]).toMatch(
      /^cluster default cannot be reached: The connection to the server localhost:8080 was refused/,
    );
    expect(result.evidence?.gaps).toContain('no cluster read succeeded during the run');
  });

  it('names what the triage output leaves out: a script that failed, and a log cut at context.triage_log_cap', async () => {
    const skill = path.join(root.dir, 'noisy-triage');
    await mkdir(skill, { recursive: true });
    await writeFile(
      path.join(skill, 'triage.sh'),
      '#!/bin/sh\ni=0\nwhile [ $i -lt 400 ]; do echo "triage line $i: pods in shop look fine so far"; i=$((i+1)); done\nexit 3\n',
    );
    await chmod(path.join(skill, 'triage.sh'), 0o755);
    const runId = `evidence-triage-gaps-${process.pid}`;
    const { outcome, result } = await run(['kubectl get pods -n shop'], runId, kubectl, false, undefined, {
      context: { triage_log_cap: '4KiB' },
      skills: {
        sources: [{ name: 'noisy-triage', path: skill }],
        cache_dir: path.join(root.dir, `skills-cache-${runId}`),
        disable_triage_preload: false,
        triage: { skill: 'noisy-triage', script: 'triage.sh', args: [], validate_report: false },
      },
    });
    expect(outcome.status).toBe('succeeded');
    expect(result.triage).toEqual({ status: 'failed' });
    expect(result.evidence?.gaps).toContain('the triage script failed (exit 3): its output may be partial');
    expect(result.evidence?.gaps).toContainEqual(
      expect.stringMatching(
        /^the triage output was cut at context\.triage_log_cap \(4096 of \d+ bytes recorded\)$/,
      ),
    );
  });

  it("preloads probed permissions when the producer wrote none, and a producer's file unchanged", async () => {
    const probed = await run(
      ['kubectl get pods -n shop'],
      `permissions-probed-${process.pid}`,
      kubectl,
      true,
    );
    expect(probed.result.cluster).toEqual({ name: 'default', reachable: true });
    const section =
      /<kubernetes_cluster_access_permissions>([\s\S]*?)<\/kubernetes_cluster_access_permissions>/.exec(
        probed.prompt,
      )?.[1];
    expect(section).toContain('probed by triage-runner with kubectl auth can-i');
    expect(section).toContain('"can_get_logs": true');
    expect(section).toContain('"namespace": "shop"');
    expect(section).toContain('pods        []                  []               [get list watch]');
    expect(probed.audit).toContain('"type":"permissions_probed"');

    const own = '{"cluster_name":"prod-1","can_get_pods":false,"warnings":["from the producer"]}';
    const producer = await run(
      ['kubectl get pods -n shop'],
      `permissions-own-${process.pid}`,
      kubectl,
      true,
      own,
    );
    expect(producer.prompt).toContain(own);
    expect(producer.prompt).not.toContain('probed by triage-runner');
    expect(producer.audit).not.toContain('permissions_probed');
  });
});
