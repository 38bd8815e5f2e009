// An agent Job's files through the daemon, with no volume of the daemon's: the real run pipeline with
// the kubernetes engine against the fake API server creates the Job and the Secret of its run token; a
// container of the agent image then plays the pod exactly as the Job describes it (the init container's
// command, the agent container's command, env, mounts of the emptyDir by subPath, read-only root, uid
// 1000), on the host's network (the pod network and the Service are not part of this test) against the
// daemon's pod port over TCP. It fetches the run's files, the agent writes its report, the report comes
// back into the workspace; a wrong token, no token, and the run's own token once the run is over get
// 401 and nothing. A pod killed after an upload keeps what came, and the run says what was lost.
import { mkdir, mkdtemp, readFile, rm, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { PassThrough } from 'node:stream';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type Docker from 'dockerode';
import { createKubernetesEngine, jobNameFor } from '../../../src/engines/kubernetes/index.js';
import {
  INPUTS_PATH,
  OUTPUTS_PATH,
  STDIN_PATH,
  TOKEN_KEY,
} from '../../../src/engines/kubernetes/files/protocol.js';
import { silentLogger } from '../../../src/log/logger.js';
import { readRunResult } from '../../../src/workspace/run-record.js';
import { runDirOf } from '../../../src/workspace/layout.js';
import type { RunOutcome } from '../../../src/run/types.js';
import { until } from '../../support/cli-daemon.js';
import { AGENT_IMAGE, dockerClient, requireAgentImage } from '../../support/engine.js';
import { FakeKubeApi } from '../../support/fake-kube-api.js';
import { freePort } from '../../support/net.js';
import { makeWorkspace, testConfig } from '../../support/runs.js';
import { FINISH_LIKE_CLAUDE, shScriptExecutor } from '../../support/sh-agent.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let api: FakeKubeApi;
let root: string;
const docker = dockerClient();

beforeEach(async () => {
  api = await new FakeKubeApi().start();
  root = await mkdtemp(path.join(tmpdir(), 'triage-k8s-files-'));
});

afterEach(async () => {
  await api.close();
  await rm(root, { recursive: true, force: true });
});

/** The pod's emptyDir and token volume, as host folders the containers bind. */
async function podVolumes(token: string) {
  const files = path.join(root, 'pod', 'files');
  const tokenDir = path.join(root, 'pod', 'token');
  await mkdir(files, { recursive: true });
  await mkdir(tokenDir, { recursive: true });
  // The pod's user (uid 1000) writes the emptyDir, as the kubelet's fsGroup lets it.
  await chmod(files, 0o777);
  await writeFile(path.join(tokenDir, TOKEN_KEY), token, { mode: 0o444 });
  return { files, tokenDir };
}

/** Runs one of the Job's containers in the agent image as the kubelet would; its exit code and output. */
async function runContainer(
  container: Obj,
  volumes: { files: string; tokenDir: string },
  options: { name?: string } = {},
) {
  const binds: string[] = [];
  const tmpfs: Record<string, string> = {};
  for (const m of container.volumeMounts as Obj[]) {
    const ro = m.readOnly ? ':ro' : '';
    if (m.name === 'run-files')
      binds.push(`${m.subPath ? path.join(volumes.files, m.subPath) : volumes.files}:${m.mountPath}${ro}`);
    else if (m.name === 'run-token') binds.push(`${volumes.tokenDir}:${m.mountPath}:ro`);
    else tmpfs[m.mountPath] = 'rw,mode=1777';
  }
  const env = (container.env as Obj[])
    .filter((e) => e.value !== undefined)
    .map((e) => `${e.name}=${e.value}`);
  // One stream, as a pod's log merges stdout and stderr.
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  const [result, created] = (await docker.run(AGENT_IMAGE, container.args ?? [], out, {
    Entrypoint: container.command,
    Env: env,
    User: '1000:1000',
    Tty: true,
    ...(options.name ? { name: options.name } : {}),
    ...(container.workingDir ? { WorkingDir: container.workingDir } : {}),
    HostConfig: { NetworkMode: 'host', ReadonlyRootfs: true, Binds: binds, Tmpfs: tmpfs },
  })) as [{ StatusCode: number }, Docker.Container];
  await created.remove().catch(() => undefined);
  // The engine's attach header is not the container's output.
  const output = text.replace(/^\{"stream":true[^}]*\}/, '').replace(/\r\n/g, '\n');
  return { code: result.StatusCode, output };
}

async function call(port: number, method: 'GET' | 'POST', route: string, token?: string) {
  const res = await fetch(`http://127.0.0.1:${port}${route}`, {
    method,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    ...(method === 'POST' ? { body: Buffer.from('not an upload') } : {}),
  });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

async function startRun(script: string, runId: string, extra: Record<string, unknown> = {}) {
  const port = await freePort();
  const config = testConfig(root, {
    engine: 'kubernetes',
    agent: { image: AGENT_IMAGE },
    kubectl: { guard: false },
    kubernetes: {
      namespace: 'triage-runner',
      broker: { port, host: '127.0.0.1', url: `http://127.0.0.1:${port}` },
      ...extra,
    },
  });
  const workspace = await makeWorkspace(root);
  const engine = createKubernetesEngine(config, silentLogger(), { kubeConfig: api.kubeConfig() });
  const executor = shScriptExecutor(config, script, engine, { PATH: process.env.PATH });
  const outcome: Promise<RunOutcome> = executor.run({
    workspace,
    runId,
    attempt: 1,
    signal: new AbortController().signal,
    log: silentLogger(),
  });
  outcome.catch(() => undefined);
  const jobName = jobNameFor(runId);
  const job = await until('the Job', 30_000, async () => api.jobs.get(jobName));
  const token = api.secretValue('triage-runner', jobName, TOKEN_KEY);
  if (!token) throw new Error('the run has no token Secret');
  return { port, workspace, jobName, job: job as Obj, token, outcome, executor };
}

/** Ends the run however the test went: a failed assertion must not leave it waiting on a Job. */
async function endRun(run: Awaited<ReturnType<typeof startRun>>): Promise<void> {
  const job = api.jobs.get(run.jobName);
  if (job && !(job.status as Obj | undefined)?.conditions) api.finishJob(run.jobName, 1);
  await run.outcome.catch(() => undefined);
  await run.executor.close?.();
}

describe.runIf(await requireAgentImage(docker))(
  'an agent Job gets its files and returns its report through the daemon',
  () => {
    it('fetches the inputs and returns the report over TCP with its run token; a wrong, missing or spent token gets nothing', async () => {
      const runId = `k8s-files-${process.pid}`;
      const run = await startRun(FINISH_LIKE_CLAUDE.join('\n'), runId);
      try {
        const pod = run.job.spec.template.spec as Obj;
        // No volume of the daemon's and no affinity to its node: the Job can run on any node.
        expect((pod.volumes as Obj[]).filter((v) => v.persistentVolumeClaim || v.hostPath)).toEqual([]);
        expect(pod.affinity).toBeUndefined();
        expect(JSON.stringify(run.job)).not.toContain(run.token);

        // A wrong token and no token get 401 and not a byte of the run's files.
        for (const bad of ['not-the-run-token', undefined]) {
          const got = await call(run.port, 'GET', INPUTS_PATH, bad);
          expect(got.status).toBe(401);
          expect(got.body.toString()).not.toContain(runId);
          expect((await call(run.port, 'POST', OUTPUTS_PATH, bad)).status).toBe(401);
        }

        const volumes = await podVolumes(run.token);
        const fetched = await runContainer(pod.initContainers[0], volumes);
        expect(fetched.code, fetched.output).toBe(0);
        expect(fetched.output).toMatch(/run-files: \d+ files, \d+ bytes from the daemon/);
        // The prompt, the incident and the run folder's agent inputs are in the pod; the daemon's own
        // records (.triage/ of the workspace) are not.
        const stdin = await readFile(path.join(volumes.files, STDIN_PATH.slice(1)), 'utf8');
        expect(stdin).toMatch(/^Investigate the incident/);
        await expect(
          readFile(path.join(volumes.files, 'workspace', 'incident.json'), 'utf8'),
        ).resolves.toContain(run.workspace.incident.incidentId);

        const podName = api.setPod(run.jobName, { running: { startedAt: new Date().toISOString() } });
        const agent = await runContainer(pod.containers[0], volumes);
        expect(agent.code, agent.output).toBe(0);
        // The pod's log stays the agent's stdout.
        api.appendLog(podName, agent.output);
        api.finishJob(run.jobName, agent.code);
        const outcome = await run.outcome;
        expect(outcome.status, outcome.reason).toBe('succeeded');

        const report = await readFile(path.join(run.workspace.dir, 'output', 'investigation.md'), 'utf8');
        expect(report).toContain('## Root Cause');
        const result = await readRunResult(runDirOf(run.workspace.dir, runId));
        expect(result.ok && result.value.returned).toMatchObject({ final: true, report: true, lost: [] });

        // The run is over: its token opens nothing any more, and the Secret is gone with the Job.
        expect((await call(run.port, 'GET', INPUTS_PATH, run.token)).status).toBe(401);
        expect((await call(run.port, 'POST', OUTPUTS_PATH, run.token)).status).toBe(401);
        expect(api.secrets.size).toBe(0);
      } finally {
        await endRun(run);
      }
    }, 180_000);

    it('keeps what a pod returned before it was killed, and the run says what was lost', async () => {
      const runId = `k8s-files-killed-${process.pid}`;
      // The report, then the agent waits: the pod is killed after an interval upload, before its last.
      const script = [
        FINISH_LIKE_CLAUDE[0]!,
        'echo note > "$(dirname "$0")/never-returned.md"',
        'sleep 600',
      ].join('\n');
      const run = await startRun(script, runId, { run_files: { sync_interval: '1s' } });
      try {
        const pod = run.job.spec.template.spec as Obj;
        const volumes = await podVolumes(run.token);
        expect((await runContainer(pod.initContainers[0], volumes)).code).toBe(0);
        const podName = api.setPod(run.jobName, { running: { startedAt: new Date().toISOString() } });
        const name = `triage-pod-${process.pid}`;
        const agent = runContainer(pod.containers[0], volumes, { name });
        const returned = path.join(runDirOf(run.workspace.dir, runId), 'returned.json');
        await until('an upload of the report', 60_000, async () => {
          const text = await readFile(returned, 'utf8').catch(() => '');
          return text.includes('output/investigation.md') ? text : undefined;
        });
        // The node dies: every process of the pod is killed at once, no last upload.
        await docker.getContainer(name).kill({ signal: 'SIGKILL' });
        const killed = await agent;
        api.appendLog(podName, killed.output);
        api.finishJob(run.jobName, 137);
        const outcome = await run.outcome;
        expect(outcome.status).toBe('failed');

        // What came before the kill is in the workspace; result.json says the last upload never came.
        await expect(
          readFile(path.join(run.workspace.dir, 'output', 'investigation.md'), 'utf8'),
        ).resolves.toContain('## Root Cause');
        const result = await readRunResult(runDirOf(run.workspace.dir, runId));
        const record = result.ok ? result.value.returned : undefined;
        expect(record).toMatchObject({ final: false, report: true });
        expect(record?.uploads).toBeGreaterThanOrEqual(1);
        expect(record?.reason).toMatch(/ended without its last upload/);
      } finally {
        await endRun(run);
      }
    }, 180_000);
  },
);
