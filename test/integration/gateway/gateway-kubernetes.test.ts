// The model gateway of an agent pod: the real run pipeline with the kubernetes engine against the fake
// API server creates the Job; a real process stands in for the pod and runs the Job's own command with
// the Job's own environment (container paths mapped to the subPaths of the pod's files, fetched from the daemon as its init container would, nothing else added but
// PATH). Its CLI calls the model at the daemon's Service port (the pod broker's port, kubernetes.broker)
// with the run token as its key: the stand-in model receives the daemon's real key, the pod's
// environment holds only the run token, the Job spec holds neither, and result.json and
// model-calls.jsonl record the call. A wrong token, and the run's own token once the run is over, are
// refused with 401 and never reach the model.
import { execFile } from 'node:child_process';
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentAdapter } from '../../../src/agents/types.js';
import { AuditLog } from '../../../src/audit/log.js';
import { readRunResult } from '../../../src/workspace/run-record.js';
import { createRunExecutor } from '../../../src/run/pipeline.js';
import { createKubernetesEngine, jobNameFor } from '../../../src/engines/kubernetes/index.js';
import { readModelCalls } from '../../../src/gateway/calls.js';
import { POD_TOKEN_DIR, POD_TOKEN_ENV } from '../../../src/gateway/pod-route.js';
import { silentLogger } from '../../../src/log/logger.js';
import { Redactor } from '../../../src/log/redact.js';
import { until } from '../../support/cli-daemon.js';
import { STDIN_PATH } from '../../../src/engines/kubernetes/files/protocol.js';
import { fetchPodFiles, returnPodOutputs } from '../../support/pod-files.js';
import { FakeKubeApi } from '../../support/fake-kube-api.js';
import { freePort } from '../../support/net.js';
import { messageRequests, startAnthropic, type AnthropicFake } from '../../support/providers/anthropic.js';
import {
  emptySkills,
  fakeAdapter,
  makeWorkspace,
  REPO_ROOT,
  tempDir,
  testConfig,
} from '../../support/runs.js';
import { RUN_FILES } from '../../../src/workspace/layout.js';

const run = promisify(execFile);
const REAL_KEY = 'sk-ant-real-key-0123456789abcdef';

// The agent CLI in the "image": one model call with the key and base URL its environment gives it,
// then its environment kept for the test and a report written.
const AGENT_CLI = `
const res = await fetch(process.env.ANTHROPIC_BASE_URL + '/v1/messages', {
  method: 'POST',
  headers: { 'x-api-key': process.env.ANTHROPIC_API_KEY ?? '', 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
  body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'why?' }] }),
});
const fs = await import('node:fs');
const out = process.env.TRIAGE_OUTPUT_DIR;
fs.writeFileSync(out + '/pod-env.json', JSON.stringify(process.env));
fs.writeFileSync(out + '/investigation.md', '# Report\\n\\n## Summary\\n' + 'a'.repeat(120) + '\\n\\n## Root Cause\\nx\\n');
console.log(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, num_turns: 1, status: res.status }));
process.exit(res.ok ? 0 : 3);
`;

interface PodContainer {
  command: string[];
  args: string[];
  env: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  volumeMounts: { mountPath: string; subPath?: string }[];
}

/** The daemon-side path of a container path, through the Job's subPath mounts (the longest match). */
function mapper(volumeRoot: string, mounts: PodContainer['volumeMounts']) {
  const byLength = mounts.filter((m) => m.subPath).sort((a, b) => b.mountPath.length - a.mountPath.length);
  return (text: string): string => {
    for (const m of byLength) {
      if (text === m.mountPath || text.startsWith(`${m.mountPath}/`))
        return path.join(volumeRoot, m.subPath!, text.slice(m.mountPath.length));
    }
    return text;
  };
}

/** The pod: the Job's command and args with the Job's literal env, paths mapped; exit code and output. */
async function runPod(volumeRoot: string, c: PodContainer) {
  const map = mapper(volumeRoot, c.volumeMounts);
  const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
  for (const e of c.env) if (e.value !== undefined) env[e.name] = map(e.value);
  // The stdin wrapper names its mounted file inside the script: the same mapping applies there.
  const stdinMount = c.volumeMounts.find((m) => m.mountPath === STDIN_PATH);
  const fix = (s: string) => (stdinMount ? s.split(stdinMount.mountPath).join(map(stdinMount.mountPath)) : s);
  const [file, ...rest] = [...c.command, ...c.args].map(fix);
  return run(file!, rest, { env }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
    }),
  );
}

async function callGateway(port: number, key: string) {
  const res = await fetch(`http://127.0.0.1:${port}/anthropic/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [] }),
  });
  return { status: res.status, body: await res.text() };
}

let root: { dir: string; cleanup: () => Promise<void> };
let api: FakeKubeApi;
let model: AnthropicFake;

beforeEach(async () => {
  root = await tempDir('triage-gateway-k8s-');
  api = await new FakeKubeApi().start();
  model = await startAnthropic();
});

afterEach(async () => {
  await api.close();
  await model.close();
  await root.cleanup();
});

describe('model gateway for an agent pod, on the daemon Service port with the run token', () => {
  it('carries the pod’s model call with the real key the pod never holds; a wrong token and a finished run’s token are refused', async () => {
    const dir = root.dir;
    for (const d of ['personas', 'briefs'])
      await cp(path.join(REPO_ROOT, 'configs', d), path.join(dir, 'configs', d), { recursive: true });
    const cli = path.join(dir, 'agent-cli.mjs');
    await writeFile(cli, AGENT_CLI);
    const port = await freePort();
    const config = testConfig(dir, {
      engine: 'kubernetes',
      // The kubectl guard is another test's subject (test/integration/kubectl/guard-kubernetes.test.ts).
      kubectl: { guard: false },
      personas_dir: path.join(dir, 'configs', 'personas'),
      briefs_dir: path.join(dir, 'configs', 'briefs'),
      providers: { anthropic_base_url: model.url },
      kubernetes: {
        namespace: 'triage-runner',
        broker: { port, host: '127.0.0.1', url: `http://127.0.0.1:${port}` },
      },
    });
    const workspace = await makeWorkspace(dir);
    const runId = `gateway-k8s-${process.pid}`;
    const engine = createKubernetesEngine(config, silentLogger(), { kubeConfig: api.kubeConfig() });
    const base = fakeAdapter(process.execPath);
    const adapter: AgentAdapter = {
      ...base,
      // The real Claude adapter's shape: the base URL from the provider settings, the key as a secret.
      buildInvocation: (input) => ({
        ...base.buildInvocation(input),
        args: [cli],
        env: { ANTHROPIC_BASE_URL: input.providers.anthropicBaseUrl ?? '' },
      }),
    };
    const executor = createRunExecutor({
      config,
      log: silentLogger(),
      redactor: new Redactor(),
      secrets: { ANTHROPIC_API_KEY: REAL_KEY },
      audit: new AuditLog(),
      env: { PATH: process.env.PATH },
      engine,
      skills: emptySkills(),
      agents: () => adapter,
    });
    const outcome = executor.run({
      workspace,
      runId,
      attempt: 1,
      signal: new AbortController().signal,
      log: silentLogger(),
    });
    try {
      const jobName = jobNameFor(runId);
      const job = await until('the Job', 20_000, async () => api.jobs.get(jobName));
      const pod = (job.spec as { template: { spec: { containers: PodContainer[] } } }).template.spec;
      const container = pod.containers[0]!;
      const bundle = path.join(workspace.dir, '.triage', 'runs', runId);
      const token = (await readFile(path.join(bundle, POD_TOKEN_DIR, 'token'), 'utf8')).trim();
      expect(token).toMatch(/^trg-/);
      // The Job holds neither the key nor the token, and no reference to a model key in any Secret.
      const spec = JSON.stringify(job);
      expect(spec).not.toContain(REAL_KEY);
      expect(spec).not.toContain(token);
      expect(container.env.filter((e) => e.valueFrom?.secretKeyRef)).toEqual([]);
      expect(container.env.find((e) => e.name === 'ANTHROPIC_BASE_URL')?.value).toBe(
        `http://127.0.0.1:${port}/anthropic`,
      );
      expect(container.env.find((e) => e.name === POD_TOKEN_ENV)?.value).toBe(
        `/workspace/.triage/runs/${runId}/${POD_TOKEN_DIR}/token`,
      );
      const podName = api.setPod(jobName, { running: { startedAt: new Date().toISOString() } });

      // The pod's emptyDir, filled from the daemon as its init container would; the CLI behind the
      // returning program, whose last upload is made after it.
      const podFiles = path.join(dir, 'pod-files');
      await fetchPodFiles(api, job, podFiles);
      const cli = { ...container, command: container.args.slice(0, 1), args: container.args.slice(1) };
      const ran = await runPod(podFiles, cli);
      expect(ran, ran.stderr).toMatchObject({ code: 0 });
      await returnPodOutputs(api, job, podFiles);
      // What the kubelet would keep as the container's log, followed by the engine.
      api.appendLog(podName, ran.stdout);
      // The stand-in saw the real key; the pod's environment held the run token and nothing of the key.
      const calls = messageRequests(model);
      expect(calls).toHaveLength(1);
      expect(calls[0]!.headers['x-api-key']).toBe(REAL_KEY);
      const podEnv = JSON.parse(
        await readFile(path.join(workspace.dir, 'output', 'pod-env.json'), 'utf8'),
      ) as Record<string, string>;
      expect(podEnv.ANTHROPIC_API_KEY).toBe(token);
      expect(JSON.stringify(podEnv)).not.toContain(REAL_KEY);

      const wrong = await callGateway(port, 'trg-not-the-run-token');
      expect(wrong.status).toBe(401);
      expect((await callGateway(port, '')).status).toBe(401);
      expect(messageRequests(model)).toHaveLength(1);

      api.finishJob(jobName, 0);
      const finished = await outcome;
      expect(finished, JSON.stringify(finished)).toMatchObject({ status: 'succeeded' });
      const result = await readRunResult(bundle);
      expect(result.ok && result.value.gateway).toMatchObject({ calls: 1, refused: 0, source: 'gateway' });
      const records = await readModelCalls(path.join(bundle, RUN_FILES.modelCalls));
      expect(records.map((r) => [r.provider, r.status, r.path])).toEqual([
        ['anthropic', 200, '/v1/messages'],
      ]);
      // The run is over: its token no longer opens the gateway, and its file is gone from the bundle.
      expect((await callGateway(port, token)).status).toBe(401);
      await expect(readFile(path.join(bundle, POD_TOKEN_DIR, 'token'))).rejects.toThrow(/ENOENT/);
      expect(messageRequests(model)).toHaveLength(1);
    } finally {
      const job = api.jobs.get(jobNameFor(runId));
      if (job && !(job.status as { conditions?: unknown } | undefined)?.conditions)
        api.finishJob(jobNameFor(runId), 1);
      await outcome.catch(() => undefined);
      await executor.close?.();
    }
  });
});
