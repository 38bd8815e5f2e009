// Acceptance of the model gateway: the real Claude CLI in the agent image, under the docker engine with
// networking off, investigates a dropped incident against a local stand-in model that only the daemon
// can reach. The container holds a run token, never the key; the stand-in sees the key, never the token;
// model-calls.jsonl lists the stand-in's calls one for one; from inside the container the daemon's HTTP
// port, the host's addresses and an outside address cannot be reached. A second run with
// budget.max_tokens below what the stand-in spends ends failed naming the cap.
import { readFile } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readModelCalls } from '../../src/gateway/calls.js';
import { RUN_LABELS } from '../../src/engines/labels.js';
import {
  dropIncident,
  startCliDaemon,
  until,
  waitForFinalRun,
  type CliDaemon,
} from '../support/cli-daemon.js';
import {
  AGENT_IMAGE,
  dockerClient,
  dockerHost,
  requireAgentImage,
  requireEngine,
} from '../support/engine.js';
import { freePort } from '../support/net.js';
import {
  ANTHROPIC_USAGE,
  messageRequests,
  startAnthropic,
  type AnthropicFake,
} from '../support/providers/anthropic.js';
import { tempDir } from '../support/runs.js';

const docker = await requireEngine();
const hasImage = docker ? await requireAgentImage(docker) : false;
const REAL_KEY = 'sk-ant-gateway-e2e-real-key-0123456789abcdef';
const RUN_TIMEOUT_MS = 120_000;

/** A non-loopback IPv4 address of this host (what a container on a bridge would use to reach it). */
function hostAddress(): string {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return '10.0.2.2';
}

/** Each incident names its own pod: the dedup window would reject a second one for the same pod. */
const incident = (id: string) => ({
  incidentId: id,
  cluster: 'prod-1',
  namespace: 'payments',
  resource: { apiVersion: 'v1', kind: 'Pod', name: `payments-api-${id}`, namespace: 'payments' },
  faultType: 'CrashLoop',
  severity: 'high',
  timestamp: '2026-11-22T01:00:00Z',
});

describe.skipIf(!docker || !hasImage)(
  'model gateway: the real claude in the agent image, networking off',
  () => {
    let root: { dir: string; cleanup: () => Promise<void> };
    let provider: AnthropicFake;
    let daemon: CliDaemon | undefined;
    let httpPort: number;
    const containers: string[] = [];

    beforeAll(async () => {
      root = await tempDir('triage-gateway-e2e-');
      provider = await startAnthropic();
      httpPort = await freePort();
    });

    afterAll(async () => {
      await daemon?.stop();
      for (const id of containers)
        await dockerClient()
          .getContainer(id)
          .remove({ force: true })
          .catch(() => undefined);
      await provider?.close();
      await root?.cleanup();
    });

    async function start(budget: Record<string, number> = {}): Promise<CliDaemon> {
      await daemon?.stop();
      daemon = await startCliDaemon({
        dir: root.dir,
        config: {
          workspaces_root: path.join(root.dir, 'incidents'),
          agent: {
            image: AGENT_IMAGE,
            model: 'sonnet',
            timeout: '2m',
            min_report_bytes: 40,
            report_sections: ['Summary', 'Root Cause'],
          },
          providers: { anthropic_base_url: provider.url },
          // docker.network is left at its default: none.
          docker: { host: dockerHost(), memory: '1g' },
          keep_runs: true,
          http: { port: httpPort },
          budget,
        },
        args: ['--engine', 'docker', '--agent', 'claude'],
        env: { PATH: process.env.PATH, HOME: root.dir, ANTHROPIC_API_KEY: REAL_KEY },
      });
      return daemon;
    }

    it(
      'completes a run through the gateway: no key in the container, the key only at the stand-in, every call recorded, nothing else reachable',
      async () => {
        const host = hostAddress();
        const targets = [
          `127.0.0.1:${httpPort}`,
          `${host}:${httpPort}`,
          `${host}:${new URL(provider.url).port}`,
          '1.1.1.1:443',
        ];
        // The model's first answer is a Bash tool call run inside the container: it probes each address
        // and writes the report with what it found.
        provider.toolCommand = [
          "{ printf '# Report\\n\\n## Summary\\nThe pod crash-loops.\\n\\n## Root Cause\\nProbes below.\\n\\n'",
          `for t in ${targets.join(' ')}; do if timeout 5 bash -c "exec 3<>/dev/tcp/\${t%:*}/\${t#*:}" 2>/dev/null; then echo "probe $t=open"; else echo "probe $t=closed"; fi; done`,
          'echo "key=${ANTHROPIC_API_KEY%%-*}"; } > /workspace/output/investigation.md',
        ].join('; ');
        const listings = () => provider.requests.filter((r) => r.url === '/v1/models').length;
        const listed = listings();
        const d = await start();
        // The start-up check's models listing is the daemon's, not the run's: the run's calls come after it.
        await until('the start-up models listing', 30_000, async () =>
          listings() > listed ? true : undefined,
        );
        const before = provider.requests.length;
        const ws = path.join(root.dir, 'incidents', 'gateway-1');
        await dropIncident(ws, incident('gateway-e2e-1'));
        const { state, bundle, result = {} } = await waitForFinalRun(ws, RUN_TIMEOUT_MS, () => d.tail());
        const stderr = await readFile(path.join(bundle, 'agent-stderr.log'), 'utf8').catch(String);
        expect(state.state, `${stderr}\n${d.tail()}`).toBe('succeeded');

        const report = await readFile(path.join(ws, 'output', 'investigation.md'), 'utf8');
        for (const t of targets) expect(report, report).toContain(`probe ${t}=closed`);
        // The CLI's key is the run token.
        expect(report).toContain('key=trg');

        // The stand-in saw the real key on every call and never a token.
        const seen = provider.requests.slice(before);
        expect(seen.length).toBeGreaterThanOrEqual(2);
        for (const r of seen) {
          expect(r.headers['x-api-key']).toBe(REAL_KEY);
          expect(JSON.stringify(r.headers)).not.toContain('trg-');
        }
        // model-calls.jsonl matches the stand-in's log call for call.
        const calls = await readModelCalls(path.join(bundle, 'model-calls.jsonl'));
        expect(calls.map((c) => `${c.method} ${c.path}`)).toEqual(
          seen.map((r) => `${r.method} ${r.url.split('?')[0] ?? ''}`),
        );
        const messages = messageRequests({ ...provider, requests: seen });
        expect(calls.filter((c) => c.path === '/v1/messages')).toHaveLength(messages.length);
        expect(result).toMatchObject({
          status: 'succeeded',
          engine: 'docker',
          tokens: {
            input: ANTHROPIC_USAGE.input_tokens * messages.length,
            output: ANTHROPIC_USAGE.output_tokens * messages.length,
          },
          gateway: { calls: seen.length, source: 'gateway', log: 'model-calls.jsonl' },
        });
        expect(result.firstModelCallMs).toBeGreaterThan(0);
        const invocation = await readFile(path.join(bundle, 'invocation.json'), 'utf8');
        expect(invocation).not.toContain(REAL_KEY);
        expect(JSON.parse(invocation)).toMatchObject({ command: 'claude', wrapper: { command: 'node' } });

        // The container: networking off, no key in its environment or mounts.
        const [info] = await dockerClient().listContainers({
          all: true,
          filters: { label: [`${RUN_LABELS.run}=${path.basename(bundle)}`] },
        });
        expect(info).toBeDefined();
        containers.push(info!.Id);
        const inspect = await dockerClient().getContainer(info!.Id).inspect();
        expect(inspect.HostConfig.NetworkMode).toBe('none');
        expect(JSON.stringify(inspect)).not.toContain(REAL_KEY);
        expect(inspect.Config.Env.find((e) => e.startsWith('ANTHROPIC_API_KEY='))).toMatch(
          /^ANTHROPIC_API_KEY=trg-/,
        );
        for (const m of inspect.Mounts) {
          const source = await readFile(m.Source, 'utf8').catch(() => '');
          expect(source).not.toContain(REAL_KEY);
        }
      },
      RUN_TIMEOUT_MS + 60_000,
    );

    it(
      'ends a run failed naming budget.max_tokens when the stand-in spends more',
      async () => {
        provider.toolCommand = 'echo investigating';
        const d = await start({ max_tokens: 1000 });
        const ws = path.join(root.dir, 'incidents', 'gateway-budget');
        await dropIncident(ws, incident('gateway-e2e-budget'));
        const { state, bundle, result = {} } = await waitForFinalRun(ws, RUN_TIMEOUT_MS, () => d.tail());
        expect(state.state, d.tail()).toBe('failed');
        expect(String(result.error)).toContain('budget.max_tokens (1000) reached');
        const calls = await readModelCalls(path.join(bundle, 'model-calls.jsonl'));
        expect(calls.some((c) => c.refused === 'budget.max_tokens')).toBe(true);
        const metrics = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
        expect(metrics).toMatch(/triage_runner_model_budget_caps_total\{cap="budget.max_tokens"\} 1/);
      },
      RUN_TIMEOUT_MS + 60_000,
    );
  },
);
