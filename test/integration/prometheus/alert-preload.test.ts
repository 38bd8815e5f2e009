// An incident a real alert opened carries its expression's recent values in the prompt: a real
// Prometheus evaluates a rule over a small exporter's metrics and sends the alert to a real
// Alertmanager, whose webhook opens an incident in the real daemon; the run's triage step parses the
// rule's expression from the alert's generatorURL, evaluates it now and over the last hour through the
// run's promql (recorded `by: triage`), and the prompt's <alert_metrics> section holds the values.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { runCli } from '../../../src/cli/program.js';
import type { CliIO } from '../../../src/cli/io.js';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUN_FILES } from '../../../src/workspace/layout.js';
import { clusterRegistry } from '../../../src/clusters/registry.js';
import { readState } from '../../../src/workspace/state.js';
import { createProcessEngine } from '../../../src/engines/process.js';
import { readCallLog } from '../../../src/kubectl/broker/calls.js';
import { silentLogger } from '../../../src/log/logger.js';
import { resolveEndpoints } from '../../../src/prometheus/endpoint.js';
import { ALERTMANAGER, requireBinary, startAlertmanager, type Started } from '../../support/alertmanager.js';
import { waitFor } from '../../support/incidents.js';
import { freePort } from '../../support/net.js';
import {
  prometheusBinary,
  startPrometheusStack,
  type PrometheusStack,
  type RecordingProxy,
} from '../../support/prometheus.js';
import { tempDir, testConfig } from '../../support/runs.js';
import { FINISH_ON_HOST, shScriptExecutor } from '../../support/sh-agent.js';
import { startIntakeDaemon, type IntakeDaemon } from '../../support/webhooks/daemon.js';

const prometheusBin = prometheusBinary();
const alertmanagerBin = requireBinary(ALERTMANAGER);
const HOOK_TOKEN = 'am-hook-token-8c1d2e';
const PROM_TOKEN = 'alert-preload-prom-token-0123456789';
const EXPR = 'app_memory_working_set_bytes / app_memory_limit_bytes > 0.9';

describe.skipIf(!prometheusBin || !alertmanagerBin)(
  "an alert's expression preloaded in its incident's prompt",
  () => {
    let root: { dir: string; cleanup: () => Promise<void> };
    let stack: PrometheusStack;
    let alertmanager: Started;
    let proxy: RecordingProxy;
    let daemon: IntakeDaemon | undefined;
    /** The incident the alert opened (the first test finds it). */
    let incidentDir = '';

    beforeAll(async () => {
      root = await tempDir('tr-alert-preload-');
      const port = await freePort();
      alertmanager = await startAlertmanager(alertmanagerBin ?? '', {
        dir: path.join(root.dir, 'am'),
        webhookUrl: `http://127.0.0.1:${port}/v1/alerts/alertmanager`,
        token: HOOK_TOKEN,
      });
      stack = await startPrometheusStack(prometheusBin ?? '', {
        dir: path.join(root.dir, 'prom'),
        metrics: [
          '# TYPE app_memory_working_set_bytes gauge',
          'app_memory_working_set_bytes{namespace="shop",pod="api-1",container="api"} 520093696',
          '# TYPE app_memory_limit_bytes gauge',
          'app_memory_limit_bytes{namespace="shop",pod="api-1",container="api"} 536870912',
          '',
        ].join('\n'),
        token: PROM_TOKEN,
        alertmanager,
        rules: [
          'groups:',
          '  - name: app',
          '    rules:',
          '      - alert: AppMemoryNearLimit',
          `        expr: ${EXPR}`,
          '        labels: { severity: critical }',
          '        annotations: { summary: "api-1 is close to its memory limit" }',
          '',
        ].join('\n'),
      });
      ({ proxy } = stack);
      const workspaces = path.join(root.dir, 'incidents');
      const config = testConfig(root.dir, {
        workspaces_root: workspaces,
        engine: 'process',
        kubectl: { command: '/bin/true', access_check: false },
        secrets: { PROM_TOKEN: { env: 'PROM_TOKEN' } },
        prometheus: { url: proxy.url, bearer_token: 'PROM_TOKEN' },
      });
      const executor = shScriptExecutor(
        config,
        FINISH_ON_HOST.join('\n'),
        createProcessEngine(config, silentLogger()),
        { PATH: process.env.PATH },
        'none',
        { prometheus: resolveEndpoints(clusterRegistry(config).listClusters(), { PROM_TOKEN }, true) },
      );
      daemon = await startIntakeDaemon({
        root: workspaces,
        executor,
        token: HOOK_TOKEN,
        config: { http: { port }, kubectl: { access_check: false } },
      });
    }, 60_000);

    afterAll(async () => {
      await daemon?.stop();
      await stack?.close();
      await alertmanager?.stop();
      await root?.cleanup();
    });

    it('evaluates the rule now and over the last hour, records both calls and puts the values in the prompt', async () => {
      const workspaces = path.join(root.dir, 'incidents');
      const folder = await waitFor(
        'the alert to open an incident that runs to the end',
        async () => {
          const folders = (await readdir(workspaces).catch(() => [] as string[])).filter(
            (f) => !f.startsWith('.'),
          );
          for (const f of folders) {
            const state = await readState(path.join(workspaces, f));
            if (state?.state === 'succeeded') return f;
          }
          return undefined;
        },
        60_000,
        200,
      );
      const dir = path.join(workspaces, folder);
      const incident = JSON.parse(await readFile(path.join(dir, 'incident.json'), 'utf8')) as {
        source: { url: string };
      };
      // The generatorURL as Prometheus made it.
      expect(new URL(incident.source.url).searchParams.get('g0.expr')).toBe(EXPR);
      const runs = path.join(dir, '.triage', 'runs');
      const [runId] = await readdir(runs);
      const bundle = path.join(runs, runId ?? '');
      const prompt = await readFile(path.join(bundle, RUN_FILES.promptSent), 'utf8');
      const section = /<alert_metrics>\n([\s\S]*?)\n<\/alert_metrics>/.exec(prompt)?.[1] ?? '';
      expect(section).toContain(`Alert AppMemoryNearLimit: ${EXPR}`);
      expect(section).toContain(`$ promql query '${EXPR}'`);
      expect(section).toMatch(
        /\n0\.96875 +\{container="api", instance="127\.0\.0\.1:\d+", job="exporter", namespace="shop", pod="api-1"\}\n/,
      );
      expect(section).toContain(`$ promql range '${EXPR}' --since 1h`);
      expect(section).toMatch(
        /\{container="api", [^}]*\}: \d+ points?, min 0\.96875 at \S+Z, max 0\.96875 at \S+Z, last 0\.96875/,
      );
      expect(section).toContain(`Every value: ${path.join(bundle, RUN_FILES.alertMetrics)}.`);
      // Both calls are the triage step's, in the run's call log, with what Prometheus answered.
      const { records } = await readCallLog(path.join(bundle, RUN_FILES.clusterCalls));
      expect(
        records.filter((r) => r.tool === 'prometheus').map((r) => [r.by, r.decision, r.normalized]),
      ).toEqual([
        ['triage', 'allowed', `promql query '${EXPR}'`],
        ['triage', 'allowed', `promql range '${EXPR}' --since 1h`],
      ]);
      const context = JSON.parse(await readFile(path.join(bundle, RUN_FILES.context), 'utf8')) as {
        sections: { tag: string; tokens: number; truncated: boolean }[];
      };
      expect(context.sections.find((s) => s.tag === 'alert_metrics')).toMatchObject({ truncated: false });
      expect(prompt).not.toContain(PROM_TOKEN);
      expect(proxy.requests.every((r) => r.authorized && r.method === 'GET')).toBe(true);
      incidentDir = dir;
    });

    it("`context` previews the same section, asking the same Prometheus with the daemon's credentials", async () => {
      const file = path.join(root.dir, 'context.yaml');
      await writeFile(
        file,
        JSON.stringify({
          workspaces_root: path.join(root.dir, 'incidents'),
          secrets: { PROM_TOKEN: { env: 'PROM_TOKEN' } },
          prometheus: { url: proxy.url, bearer_token: 'PROM_TOKEN' },
          skills: { sources: [], cache_dir: path.join(root.dir, 'skills') },
        }),
      );
      const out: string[] = [];
      const io: CliIO = {
        stdout: (t) => void out.push(t),
        stderr: () => undefined,
        env: { PATH: process.env.PATH, PROM_TOKEN, ANTHROPIC_API_KEY: 'sk-ant-context-preview-0123456789' },
        cwd: root.dir,
      };
      expect(await runCli(['context', incidentDir, '--json', '--config', file], io)).toBe(0);
      const preview = JSON.parse(out.join('')) as {
        prompt: { system: string };
        context: { sections: { tag: string }[] };
      };
      const section = /<alert_metrics>\n([\s\S]*?)\n<\/alert_metrics>/.exec(preview.prompt.system)?.[1] ?? '';
      expect(section).toContain(`$ promql query '${EXPR}'`);
      expect(section).toMatch(/\n0\.96875 +\{container="api", /);
      expect(preview.context.sections.map((s) => s.tag)).toContain('alert_metrics');
      // A preview records nothing in the workspace.
      expect(await readdir(path.join(incidentDir, '.triage', 'runs'))).toHaveLength(1);
    });
  },
);
