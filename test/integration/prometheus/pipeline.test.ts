// promql in the real run pipeline under the process engine, against a real Prometheus behind a proxy
// that needs the daemon's bearer token: the agent (sh) finds `promql` beside the guard's kubectl, its
// queries come back with Prometheus's values, the bundle records them (tool `prometheus`) and
// result.json counts them, /readyz checks the endpoint as `prometheus:<cluster>`, and the token is
// nowhere the agent can see or in anything the run wrote. The evidence check holds the report's
// metric values to what Prometheus answered.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_FILES } from '../../../src/workspace/layout.js';
import { readRunResult } from '../../../src/workspace/run-record.js';
import { clusterRegistry } from '../../../src/clusters/registry.js';
import { createProcessEngine } from '../../../src/engines/process.js';
import { readCallLog } from '../../../src/kubectl/broker/calls.js';
import { readOutputLog } from '../../../src/kubectl/broker/outputs.js';
import { silentLogger } from '../../../src/log/logger.js';
import { resolveEndpoints } from '../../../src/prometheus/endpoint.js';
import { guardFixture, type GuardFixture } from '../../support/guard.js';
import {
  prometheusBinary,
  startPrometheusStack,
  type PrometheusStack,
  type RecordingProxy,
} from '../../support/prometheus.js';
import { makeWorkspace, testConfig } from '../../support/runs.js';
import { FINISH_ON_HOST, runOnce, runShAgent, shScriptExecutor } from '../../support/sh-agent.js';
import { runDirOf } from '../../../src/workspace/layout.js';

const binary = prometheusBinary();
const TOKEN = 'pipeline-prometheus-token-0123456789ab';

describe.skipIf(!binary)('promql in the run pipeline (process engine)', () => {
  let fx: GuardFixture;
  let stack: PrometheusStack;
  let proxy: RecordingProxy;

  beforeAll(async () => {
    fx = await guardFixture('triage-promql-pipeline-');
    stack = await startPrometheusStack(binary ?? '', {
      dir: path.join(fx.root.dir, 'prom'),
      metrics: '# TYPE app_restarts_total counter\napp_restarts_total{pod="api-1"} 7\n',
      token: TOKEN,
      waitFor: 'app_restarts_total',
    });
    ({ proxy } = stack);
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await fx?.root.cleanup();
  });

  const configFor = () =>
    testConfig(fx.root.dir, {
      engine: 'process',
      kubeconfig: fx.kubeconfig,
      kubectl: { command: fx.real.command },
      secrets: { PROM_TOKEN: { env: 'PROM_TOKEN' } },
      prometheus: { url: proxy.url, bearer_token: 'PROM_TOKEN' },
    });
  const endpointsOf = (config: ReturnType<typeof configFor>) =>
    resolveEndpoints(clusterRegistry(config).listClusters(), { PROM_TOKEN: TOKEN }, true);

  it("answers the agent's promql from Prometheus, records the calls and answers, and never shows the agent the token", async () => {
    const config = configFor();
    const workspace = await makeWorkspace(fx.root.dir);
    const runId = `promql-process-${process.pid}`;
    const { outcome, bundle, stdout } = await runShAgent(
      config,
      workspace,
      runId,
      [
        'echo "promql=$(command -v promql)"',
        'promql query \'app_restarts_total\'; echo "query exit=$?"',
        'promql range \'app_restarts_total\' --since 1m --step 5s; echo "range exit=$?"',
        'promql range up --since 30d 2>&1; echo "limit exit=$?"',
        'env > "$TRIAGE_NOTES_DIR/env.txt"',
        'cat "$(dirname "$(command -v promql)")"/* "$(dirname "$(command -v promql)")"/lib/* > "$TRIAGE_NOTES_DIR/guard.txt" 2>/dev/null',
      ],
      undefined,
      createProcessEngine(config, silentLogger()),
      { PATH: process.env.PATH },
      { prometheus: endpointsOf(config) },
    );
    expect(outcome, stdout).toMatchObject({ status: 'succeeded', exitCode: 0 });
    expect(stdout).toContain(`promql=${path.join(bundle, RUN_FILES.guard, 'promql')}`);
    expect(stdout).toMatch(
      /app_restarts_total at \S+Z: 1 series\nVALUE +SERIES\n7 +app_restarts_total\{instance="127\.0\.0\.1:\d+", job="exporter", pod="api-1"\}\nquery exit=0/,
    );
    expect(stdout).toMatch(/app_restarts_total from \S+Z to \S+Z, step 5s: 1 series\n/);
    expect(stdout).toContain('range exit=0');
    expect(stdout).toContain('promql: refused: the range 30d is longer than promql.max_range (7d)');
    expect(stdout).toContain('limit exit=1');

    const { records } = await readCallLog(path.join(bundle, RUN_FILES.clusterCalls));
    expect(records.map((r) => [r.tool, r.decision, r.normalized, r.rule])).toEqual([
      ['prometheus', 'allowed', 'promql query app_restarts_total', 'include "metrics-read"'],
      [
        'prometheus',
        'allowed',
        'promql range app_restarts_total --since 1m --step 5s',
        'include "metrics-read"',
      ],
      ['prometheus', 'refused', 'promql range up --since 30d', 'promql.max_range'],
    ]);
    const outputs = await readOutputLog(path.join(bundle, RUN_FILES.clusterOutputs));
    expect(outputs.map((o) => [o.call, o.tool, o.prometheus?.endpoint])).toEqual([
      [1, 'prometheus', 'query'],
      [2, 'prometheus', 'query_range'],
    ]);
    const result = await readRunResult(bundle);
    expect(result.ok && result.value.kubectl).toEqual({
      guard: 'broker',
      calls: 0,
      refused: 0,
      log: RUN_FILES.clusterCalls,
      prometheus: { endpoint: 'configured', calls: 3, refused: 1 },
    });
    // The token reached Prometheus's proxy on every call, and nothing of the run: not the agent's
    // environment, not its promql, not a bundle file.
    expect(proxy.requests.every((r) => r.authorized)).toBe(true);
    for (const file of await readdir(bundle, { recursive: true })) {
      const text = await readFile(path.join(bundle, file), 'utf8').catch(() => '');
      expect(text, file).not.toContain(TOKEN);
    }
    const seen = await readFile(path.join(bundle, 'agent-notes', 'env.txt'), 'utf8');
    expect(seen).toContain(`PATH=${path.join(bundle, RUN_FILES.guard)}:`);
    expect(seen).not.toContain('PROM_TOKEN');
    expect(await readFile(path.join(bundle, 'agent-notes', 'guard.txt'), 'utf8')).toContain('promql-bin.js');
  });

  it("holds a report's metric values to Prometheus's recorded answer: the value it gave supported, another contradicted", async () => {
    const config = configFor();
    const workspace = await makeWorkspace(fx.root.dir);
    const runId = `promql-evidence-${process.pid}`;
    const cited = "`promql query 'app_restarts_total'`";
    const report = [
      '# Report',
      '## Summary',
      '### Primary Hypothesis',
      `api-1 keeps restarting [FACT-1] — Confidence: Medium`,
      '## Findings',
      `- **[FACT-1]** app_restarts_total of api-1 is 7 — Source: ${cited}`,
      `- **[FACT-2]** app_restarts_total of api-1 reached 12 — Source: ${cited}`,
      '## Root Cause',
      'api-1 restarts; the counter of its restarts says how often.',
    ].join('\n\n');
    const script = [
      "promql query 'app_restarts_total' > /dev/null",
      `cat > "$TRIAGE_OUTPUT_DIR/investigation.md" <<'REPORT'\n${report}\nREPORT`,
      ...FINISH_ON_HOST.slice(1),
    ].join('\n');
    const executor = shScriptExecutor(
      config,
      script,
      createProcessEngine(config, silentLogger()),
      { PATH: process.env.PATH },
      'none',
      { prometheus: endpointsOf(config) },
    );
    const outcome = await runOnce(executor, workspace, runId);
    expect(outcome).toMatchObject({ status: 'succeeded' });
    const result = await readRunResult(runDirOf(workspace.dir, runId));
    const evidence = result.ok ? result.value.evidence : undefined;
    const claims = new Map(evidence?.claims?.map((c) => [c.id ?? c.kind, c]));
    expect(claims.get('FACT-1')).toMatchObject({ status: 'supported', why: 'the cited output shows 7' });
    expect(claims.get('FACT-2')).toMatchObject({
      status: 'contradicted',
      why: 'metric value: the report says 12; `promql query app_restarts_total` says 7',
    });
    // A Prometheus answer is a read of the cluster: the run is not "no cluster access" without kubectl.
    expect(evidence?.verdict).toBe('partial');
    expect(evidence?.gaps).not.toContain('no cluster read succeeded during the run');
    await executor.close?.();
  });

  it('checks the endpoint in /readyz as prometheus:<cluster>, degraded when the token is refused', async () => {
    const config = configFor();
    const good = shScriptExecutor(config, 'true', createProcessEngine(config, silentLogger()), {}, 'none', {
      prometheus: endpointsOf(config),
    });
    const ready = await good.readiness();
    expect(ready.checks.find((c) => c.name === 'prometheus:default')).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/^Prometheus 2\.\S+ answers at http:\/\/127\.0\.0\.1:\d+$/),
    });
    const bad = shScriptExecutor(config, 'true', createProcessEngine(config, silentLogger()), {}, 'none', {
      prometheus: resolveEndpoints(
        clusterRegistry(config).listClusters(),
        { PROM_TOKEN: 'refused-token-00000000' },
        true,
      ),
    });
    const check = (await bad.readiness()).checks.find((c) => c.name === 'prometheus:default');
    expect(check).toMatchObject({ ok: true, degraded: true });
    expect(check?.detail).toContain("credentials for it were refused; check the endpoint's bearer_token");
    await good.close?.();
    await bad.close?.();
  });
});
