// The kubectl guard of an agent pod: the real run pipeline with the kubernetes engine against the fake
// API server creates the Job; its files are fetched from the daemon as its init container would, and a
// real process stands in for the pod and runs the guard's `kubectl` from the folder the Job mounts, with no kubeconfig and no ServiceAccount token, reaching the daemon's pod
// broker over TCP with the run token it finds next to the wrapper. Its read is allowed and recorded,
// its delete refused and recorded, result.json says `guard: broker`; a wrong token, and the run's own
// token once the run is over, are refused with 401. Then the same call from a container of the agent
// image (host network: the pod network and the Service are not part of this test).
import { execFile } from 'node:child_process';
import { cp, readFile, stat } from 'node:fs/promises';
import { PassThrough } from 'node:stream';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readRunResult } from '../../../src/workspace/run-record.js';
import { CONTAINER_PATH_PREPEND } from '../../../src/run/layout.js';
import { createKubernetesEngine, jobNameFor } from '../../../src/engines/kubernetes/index.js';
import { TOKEN_FILE } from '../../../src/kubectl/broker/install-guard.js';
import { readCallLog } from '../../../src/kubectl/broker/calls.js';
import { silentLogger } from '../../../src/log/logger.js';
import { until } from '../../support/cli-daemon.js';
import { AGENT_IMAGE, dockerClient, requireAgentImage } from '../../support/engine.js';
import { fetchPodFiles } from '../../support/pod-files.js';
import { FakeKubeApi } from '../../support/fake-kube-api.js';
import { FAKE_PODS_TABLE, guardFixture, type GuardFixture } from '../../support/guard.js';
import { freePort } from '../../support/net.js';
import { makeWorkspace, REPO_ROOT, testConfig } from '../../support/runs.js';
import { shScriptExecutor } from '../../support/sh-agent.js';
import { RUN_FILES } from '../../../src/workspace/layout.js';

const run = promisify(execFile);

let fx: GuardFixture;
let api: FakeKubeApi;

beforeEach(async () => {
  fx = await guardFixture('triage-guard-kubernetes-');
  api = await new FakeKubeApi().start();
});

afterEach(async () => {
  await api.close();
  await fx.root.cleanup();
});

/** The pod: the guard's kubectl from the mounted folder, with nothing but PATH (node) in its environment. */
async function podKubectl(wrapper: string, args: string[]) {
  return run('sh', [wrapper, ...args], { env: { PATH: process.env.PATH ?? '' } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
    }),
  );
}

const docker = dockerClient();

/** Runs the guard's kubectl in the agent image on the host's network; its exit code and output. */
async function inAgentContainer(guardDir: string, mountPath: string, args: string[]) {
  // The pod's groups: its fsGroup, which the run folder's agent inputs are given to, and the daemon's,
  // which the token file the daemon writes at the start has.
  const groups = new Set([(await stat(guardDir)).gid, (await stat(path.join(guardDir, TOKEN_FILE))).gid]);
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  const [result, container] = (await docker.run(AGENT_IMAGE, args, out, {
    Entrypoint: [path.posix.join(mountPath, 'kubectl')],
    User: '1000:1000',
    Tty: true,
    HostConfig: {
      NetworkMode: 'host',
      ReadonlyRootfs: true,
      GroupAdd: [...groups].map(String),
      Binds: [`${guardDir}:${mountPath}:ro`],
    },
  })) as [{ StatusCode: number }, { remove(): Promise<unknown> }];
  await container.remove().catch(() => undefined);
  return { code: result.StatusCode, text };
}

async function callBroker(port: number, token: string) {
  const res = await fetch(`http://127.0.0.1:${port}/v1/kubectl`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: `${JSON.stringify({ v: 1, argv: ['get', 'pods', '-n', 'shop'] })}\n`,
  });
  return { status: res.status, body: await res.text() };
}

describe('kubectl guard in an agent pod, over TCP with the run token', () => {
  it('decides and records the pod’s calls; a wrong token and a finished run’s token are refused', async () => {
    const root = fx.root.dir;
    for (const d of ['personas', 'briefs'])
      await cp(path.join(REPO_ROOT, 'configs', d), path.join(root, 'configs', d), { recursive: true });
    const port = await freePort();
    const config = testConfig(root, {
      engine: 'kubernetes',
      kubeconfig: fx.kubeconfig,
      kubectl: { command: fx.real.command },
      personas_dir: path.join(root, 'configs', 'personas'),
      briefs_dir: path.join(root, 'configs', 'briefs'),
      kubernetes: {
        namespace: 'triage-runner',
        broker: { port, host: '127.0.0.1', url: `http://127.0.0.1:${port}` },
      },
    });
    const workspace = await makeWorkspace(root);
    const runId = `guard-k8s-${process.pid}`;
    const engine = createKubernetesEngine(config, silentLogger(), { kubeConfig: api.kubeConfig() });
    const executor = shScriptExecutor(config, 'true', engine, { PATH: process.env.PATH });
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
      const pod = (job.spec as { template: { spec: Record<string, unknown> } }).template.spec;
      // The pod holds no credentials: no ServiceAccount token, and the run token is not in its spec.
      expect(pod.automountServiceAccountToken).toBe(false);
      const container = (pod.containers as { volumeMounts: { mountPath: string; subPath?: string }[] }[])[0]!;
      const guardMount = container.volumeMounts.find((m) => m.mountPath.startsWith(CONTAINER_PATH_PREPEND));
      expect(guardMount?.subPath).toBeDefined();
      const bundleGuard = path.join(workspace.dir, '.triage', 'runs', runId, RUN_FILES.guard);
      // The pod's files, fetched from the daemon as its init container would: the guard's folder is there.
      const podFiles = path.join(root, 'pod-files');
      await fetchPodFiles(api, job, podFiles);
      const guardDir = path.join(podFiles, guardMount!.subPath!);
      expect(await readFile(path.join(guardDir, 'kubectl'), 'utf8')).toBe(
        await readFile(path.join(bundleGuard, 'kubectl'), 'utf8'),
      );
      api.setPod(jobName, { running: { startedAt: new Date().toISOString() } });

      const token = (await readFile(path.join(guardDir, TOKEN_FILE), 'utf8')).trim();
      expect(token.length).toBeGreaterThanOrEqual(40);
      expect(JSON.stringify(job)).not.toContain(token);

      const wrapper = path.join(guardDir, 'kubectl');
      const get = await podKubectl(wrapper, ['get', 'pods', '-n', 'shop']);
      expect(get, get.stderr).toMatchObject({ code: 0, stdout: FAKE_PODS_TABLE });
      const del = await podKubectl(wrapper, ['delete', 'pod', 'web-1', '-n', 'shop']);
      expect(del.code).toBe(1);
      expect(del.stderr).toMatch(/refused|not allowed/i);
      // Only the read reached the daemon-side kubectl, with the daemon's kubeconfig.
      expect(await fx.real.calls()).toEqual([
        `get pods -n shop | KUBECONFIG=${fx.kubeconfig} TRIAGE_STAGE=agent`,
      ]);

      // The same from the agent image: a container user with the daemon's group (the pod's fsGroup), a
      // read-only root, the guard folder mounted read-only where the Job mounts it, TCP to the broker.
      if (await requireAgentImage(docker)) {
        const out = await inAgentContainer(guardDir, guardMount!.mountPath, ['get', 'pods', '-n', 'shop']);
        expect(out.code, out.text).toBe(0);
        expect(out.text.replace(/\r\n/g, '\n')).toContain(FAKE_PODS_TABLE);
        expect(await fx.real.calls()).toHaveLength(2);
      }

      const wrong = await callBroker(port, 'not-the-run-token');
      expect(wrong.status).toBe(401);
      expect(wrong.body).toContain('not one of a running investigation');
      expect((await callBroker(port, '')).status).toBe(401);

      api.finishJob(jobName, 0);
      const finished = await outcome;
      expect(finished.status).toBeDefined();

      const bundle = path.join(workspace.dir, '.triage', 'runs', runId);
      const { records } = await readCallLog(path.join(bundle, RUN_FILES.clusterCalls));
      const fromContainer = (await fx.real.calls()).length === 2;
      expect(records.map((r) => [r.by, r.decision, r.normalized])).toEqual([
        ['guard', 'allowed', 'get pods --namespace=shop'],
        ['guard', 'refused', 'delete pods/web-1 --namespace=shop'],
        ...(fromContainer ? [['guard', 'allowed', 'get pods --namespace=shop']] : []),
      ]);
      const result = await readRunResult(bundle);
      expect(result.ok && result.value.kubectl).toEqual({
        guard: 'broker',
        calls: fromContainer ? 3 : 2,
        refused: 1,
        log: RUN_FILES.clusterCalls,
      });
      // The run is over: its token no longer opens anything, and its file is gone from the bundle.
      const after = await callBroker(port, token);
      expect(after.status).toBe(401);
      await expect(readFile(path.join(bundleGuard, TOKEN_FILE))).rejects.toThrow(/ENOENT/);
      // The pod's copy of the token opens nothing any more.
      const late = await podKubectl(wrapper, ['get', 'pods']);
      expect(late.code).toBe(1);
      expect((await fx.real.calls()).length).toBeLessThanOrEqual(2);
    } finally {
      const left = api.jobs.get(jobNameFor(runId));
      if (left && !(left.status as { conditions?: unknown } | undefined)?.conditions)
        api.finishJob(jobNameFor(runId), 1);
      await outcome.catch(() => undefined);
      await executor.close?.();
    }
  });
});
