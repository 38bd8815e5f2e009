// Acceptance for promql with the REAL Claude Code CLI: `triage-runner daemon --agent claude --engine
// process`, a scripted model behind a local Anthropic API, and a real Prometheus (Debian's package)
// scraping a small exporter behind a proxy that requires a bearer token and logs every request. Claude's
// Bash tool runs `promql query 'up'` and `promql range …`, which reach Prometheus through the run's
// broker with the daemon's token and come back as tables; hostile spellings of admin, write and
// federation endpoints are refused before the proxy sees anything; the token is in no tool result, in
// no file of the run and in nothing the agent's environment holds.
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_FILES } from '../../src/workspace/layout.js';
import { readCallLog } from '../../src/kubectl/broker/calls.js';
import { readOutputLog } from '../../src/kubectl/broker/outputs.js';
import type { Started } from '../support/alertmanager.js';
import { requireCli } from '../support/agent-clis.js';
import { dropIncident, startCliDaemon, waitForFinalRun, type CliDaemon } from '../support/cli-daemon.js';
import { guardFixture, type GuardFixture } from '../support/guard.js';
import {
  handlerCounts,
  prometheusBinary,
  startPrometheusStack,
  type PrometheusStack,
  type RecordingProxy,
} from '../support/prometheus.js';
import {
  conversationResults,
  startScriptedModel,
  type ScriptedModel,
} from '../support/providers/scripted-anthropic.js';

const cli = requireCli('claude');
const binary = prometheusBinary();
const API_KEY = 'sk-ant-e2e-promql-0123456789abcdef';
const PROM_TOKEN = 'e2e-promql-bearer-token-5f1c2a9d7e3b';
const INCIDENT = 'e2e-promql-process';

const HOSTILE = [
  'promql admin tsdb delete_series; echo "admin exit=$?"',
  'promql labels \'../../admin/tsdb/snapshot\'; echo "path exit=$?"',
  'promql query up --url http://127.0.0.1/federate; echo "url exit=$?"',
  'promql write \'up 1\'; echo "write exit=$?"',
].join('; ');

const SCRIPT = {
  steps: [
    { bash: 'promql query \'up\'; echo "query exit=$?"' },
    {
      bash: 'promql range \'sum(rate(app_requests_total[1m]))\' --since 5m --step 15s; echo "range exit=$?"',
    },
    { bash: `${HOSTILE} 2>&1` },
    // The token is spelled in two halves, so that Claude's own transcript of this command holds no copy.
    {
      bash: `t='${PROM_TOKEN.slice(0, 12)}'; t="\${t}${PROM_TOKEN.slice(12)}"; env | grep -cF "$t"; grep -rlF "$t" "$HOME" "$(dirname "$(command -v promql)")" 2>/dev/null | wc -l`,
    },
    {
      write_report: `# Report

## Summary
The exporter is up: {{result 1 /exporter/}}

## Root Cause
Not established in this scripted run; request rate: {{result 2 /points/}}
`,
    },
  ],
  answer: 'Hypothesis: none established (confidence low). First action: a human reviews the metrics.',
};

describe.skipIf(!cli || !binary)('promql with the real Claude CLI against a real Prometheus', () => {
  let fx: GuardFixture;
  let model: ScriptedModel;
  let stack: PrometheusStack;
  let prometheus: Started;
  let proxy: RecordingProxy;
  let daemon: CliDaemon | undefined;

  beforeAll(async () => {
    fx = await guardFixture('triage-e2e-promql-');
    model = await startScriptedModel(new Map([[INCIDENT, SCRIPT]]));
    stack = await startPrometheusStack(binary ?? '', {
      dir: path.join(fx.root.dir, 'prom'),
      metrics: '# TYPE app_requests_total counter\napp_requests_total{path="/pay"} 4200\n',
      token: PROM_TOKEN,
      waitFor: 'app_requests_total',
    });
    ({ prometheus, proxy } = stack);
  }, 60_000);

  afterAll(async () => {
    await daemon?.stop();
    await stack?.close();
    await model?.close();
    await fx?.root.cleanup();
  });

  it('answers promql from Prometheus through the broker, refuses every other endpoint before it, and keeps the token in the daemon', async () => {
    const { root, real, kubeconfig } = fx;
    const incidents = path.join(root.dir, 'incidents');
    await mkdir(incidents, { recursive: true });
    daemon = await startCliDaemon({
      dir: root.dir,
      config: {
        workspaces_root: incidents,
        providers: { anthropic_base_url: model.url },
        kubeconfig,
        kubectl: { command: real.command },
        secrets: { PROM_TOKEN: { env: 'PROM_TOKEN' } },
        prometheus: { url: proxy.url, bearer_token: 'PROM_TOKEN' },
        agent: {
          command: cli,
          model: 'sonnet',
          timeout: '3m',
          min_report_bytes: 40,
          report_sections: ['Summary', 'Root Cause'],
        },
      },
      args: ['--engine', 'process', '--agent', 'claude'],
      env: {
        PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`,
        HOME: root.dir,
        ANTHROPIC_API_KEY: API_KEY,
        PROM_TOKEN,
      },
    });
    const ws = path.join(incidents, 'latency-pay');
    await dropIncident(ws, {
      incidentId: INCIDENT,
      cluster: 'prod-1',
      namespace: 'shop',
      resource: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'pay', namespace: 'shop' },
      faultType: 'HighLatency',
      severity: 'high',
      timestamp: '2026-11-23T01:00:00Z',
    });
    const { state, bundle, result = {} } = await waitForFinalRun(ws, 150_000, () => daemon?.tail() ?? '');
    expect(state.state, `${JSON.stringify(result)} ${daemon.tail()}`).toBe('succeeded');

    const [query, range, hostile, leak] = conversationResults(model, INCIDENT);
    expect(query).toMatch(
      /^up at \S+Z: 1 series\nVALUE +SERIES\n1 +up\{instance="127\.0\.0\.1:\d+", job="exporter"\}\nquery exit=0$/,
    );
    expect(range).toMatch(/^sum\(rate\(app_requests_total\[1m\]\)\) from \S+Z to \S+Z, step 15s: 1 series\n/);
    expect(range).toContain('range exit=0');
    for (const name of ['admin', 'path', 'url', 'write']) expect(hostile).toContain(`${name} exit=2`);
    // No variable of the agent's and no file in its HOME or beside its promql holds the daemon's token.
    expect(leak).toBe('0\n0');
    for (const text of [query, range, hostile, leak]) expect(text).not.toContain(PROM_TOKEN);

    // Only the two reads reached Prometheus (through the proxy, with the daemon's token), plus the
    // daemon's own readiness checks of the endpoint; Prometheus served no other handler.
    const agentRequests = proxy.requests.filter((r) => !r.url.startsWith('/api/v1/status/buildinfo'));
    expect(agentRequests.map((r) => [r.method, r.url.split('?')[0], r.authorized])).toEqual([
      ['GET', '/api/v1/query', true],
      ['GET', '/api/v1/query_range', true],
    ]);
    const counts = await handlerCounts(prometheus);
    for (const handler of Object.keys(counts).filter((h) => /admin|write|read$|federate/.test(h)))
      expect(counts[handler], handler).toBe(0);

    // Recorded like kubectl: the calls, what Prometheus answered, and result.json's counts.
    const { records } = await readCallLog(path.join(bundle, RUN_FILES.clusterCalls));
    const promql = records.filter((r) => r.tool === 'prometheus');
    expect(promql.map((r) => [r.decision, r.normalized, r.rule, r.exitCode])).toEqual([
      ['allowed', 'promql query up', 'include "metrics-read"', 0],
      [
        'allowed',
        "promql range 'sum(rate(app_requests_total[1m]))' --since 5m --step 15s",
        'include "metrics-read"',
        0,
      ],
      ['refused', 'promql admin tsdb delete_series', 'promql: unreadable', 2],
      ['refused', 'promql labels ../../admin/tsdb/snapshot', 'promql: unreadable', 2],
      ['refused', 'promql query up --url http://127.0.0.1/federate', 'promql: unreadable', 2],
      ['refused', "promql write 'up 1'", 'promql: unreadable', 2],
    ]);
    const audit = (await readFile(path.join(ws, '.triage', 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; command?: string; rule?: string })
      .filter((e) => e.type === 'kubectl_refused');
    expect(audit.map((e) => [e.command, e.rule])).toEqual(
      promql.filter((r) => r.decision === 'refused').map((r) => [r.normalized, r.rule]),
    );
    const outputs = await readOutputLog(path.join(bundle, RUN_FILES.clusterOutputs));
    expect(outputs.filter((o) => o.prometheus).map((o) => o.prometheus?.endpoint)).toEqual([
      'query',
      'query_range',
    ]);
    expect(result.kubectl).toMatchObject({ prometheus: { endpoint: 'configured', calls: 6, refused: 4 } });
    for (const file of await readdir(bundle, { recursive: true })) {
      const text = await readFile(path.join(bundle, file), 'utf8').catch(() => '');
      expect(text, file).not.toContain(PROM_TOKEN);
    }
    expect(daemon.logs()).not.toContain(PROM_TOKEN);
  }, 200_000);
});
