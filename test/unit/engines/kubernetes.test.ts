import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { configSchema, type Config } from '../../../src/config/schema.js';
import { silentLogger } from '../../../src/log/logger.js';
import { isTransient, TransientError } from '../../../src/util/errors.js';
import { buildJob, createKubernetesEngine, jobNameFor } from '../../../src/engines/kubernetes/index.js';
import { STDIN_PATH, TOKEN_KEY } from '../../../src/engines/kubernetes/files/protocol.js';
import { WaitTimeoutError } from '../../../src/engines/labels.js';
import type { Engine, RunSpec } from '../../../src/engines/types.js';
import { FakeKubeApi } from '../../support/fake-kube-api.js';
import { eventually } from '../../support/wait.js';

const PROMPT = 'Investigate pod api-7f9 in CrashLoopBackOff. <incident>{"incidentId":"inc-1"}</incident>';
const API_KEY = 'sk-ant-test-0123456789abcdef';
const FILES_TOKEN = 'run-files-token-0123456789abcdefghijklmnop';
const DAEMON_URL = 'http://triage-runner.triage-runner.svc:8081';
const PARTS = { jobName: 'triage-x', bootstrap: '/* bootstrap */', daemonUrl: DAEMON_URL };

let api: FakeKubeApi;
let root: string;
let config: Config;
let engine: Engine;

const until = <T>(what: string, probe: () => T | undefined | false, timeoutMs = 5000): Promise<T> =>
  eventually(what, probe, timeoutMs, 10);

function spec(overrides: Partial<RunSpec> = {}): RunSpec {
  const incident = path.join(root, 'workspaces', 'inc-1');
  return {
    runId: '20261122T023000Z-abc123',
    incidentId: 'inc-1',
    labels: {
      'io.triage-runner/daemon': 'pod-a:7',
      'io.triage-runner/incident': 'inc-1',
      'io.triage-runner/run': '20261122T023000Z-abc123',
    },
    image: 'triage-agent:latest',
    command: 'claude',
    args: ['-p', '--output-format', 'json'],
    env: { HOME: '/home/agent', GOOSE_MODE: 'auto' },
    secretEnv: { ANTHROPIC_API_KEY: API_KEY },
    stdin: PROMPT,
    workdir: '/workspace',
    mounts: [
      { source: incident, target: '/workspace', readOnly: false },
      { source: path.join(incident, 'incident.json'), target: '/workspace/incident.json', readOnly: true },
    ],
    tmpfs: ['/home/agent', '/tmp'],
    stateDir: path.join(incident, '.triage', 'runs', '20261122T023000Z-abc123'),
    timeoutMs: 900_000,
    filesToken: FILES_TOKEN,
    onStdout: () => {},
    onStderr: () => {},
    ...overrides,
  };
}

function agentContainer(job: unknown) {
  const j = job as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } };
  return j.spec.template.spec.containers[0] as PodContainer;
}

function fetchContainer(job: unknown) {
  const j = job as { spec: { template: { spec: { initContainers: Record<string, unknown>[] } } } };
  return j.spec.template.spec.initContainers[0] as PodContainer;
}

type PodContainer = {
  name: string;
  image: string;
  command: string[];
  args: string[];
  env: { name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }[];
  volumeMounts: { name: string; mountPath: string; subPath?: string; readOnly?: boolean }[];
  securityContext: Record<string, unknown>;
  resources: Record<string, Record<string, string>>;
};

beforeEach(async () => {
  api = await new FakeKubeApi().start();
  root = await mkdtemp(path.join(tmpdir(), 'k8s-engine-'));
  config = configSchema.parse({
    workspaces_root: path.join(root, 'workspaces'),
    kubernetes: {
      namespace: 'triage',
      ttl_seconds_after_finished: 600,
      broker: { port: 8081, url: DAEMON_URL },
    },
    agent: { stop_grace: '7s' },
  });
  engine = createKubernetesEngine(config, silentLogger(), {
    kubeConfig: api.kubeConfig(),
    pollIntervalMs: 20,
    logDrainMs: 2000,
  });
});

afterEach(async () => {
  await engine.close();
  await api.close();
  await rm(root, { recursive: true, force: true });
});

describe('kubernetes engine: the Job it creates', () => {
  it("mounts no PersistentVolumeClaim and has no affinity to the daemon's node; places the pod by node_selector and tolerations", () => {
    const placed = configSchema.parse({
      workspaces_root: path.join(root, 'workspaces'),
      kubernetes: {
        broker: { port: 8081, url: DAEMON_URL },
        node_selector: { 'triage-runner.io/pool': 'agents' },
        tolerations: [{ key: 'dedicated', value: 'agents', effect: 'NoSchedule' }],
      },
    });
    const job = buildJob(placed, spec(), PARTS);
    const pod = job.spec!.template.spec!;
    expect(pod.volumes?.some((v) => v.persistentVolumeClaim !== undefined)).toBe(false);
    expect(pod.affinity).toBeUndefined();
    expect(pod.nodeSelector).toEqual({ 'triage-runner.io/pool': 'agents' });
    expect(pod.tolerations).toEqual([
      { key: 'dedicated', operator: 'Equal', value: 'agents', effect: 'NoSchedule' },
    ]);
    // With the kubectl guard the agent holds no ServiceAccount token: its kubectl goes through the daemon.
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(() => new Job(job as never).validate()).not.toThrow();
    // Without a selector the scheduler puts it on any node.
    const anywhere = buildJob(config, spec(), PARTS).spec!.template.spec!;
    expect(anywhere.nodeSelector).toBeUndefined();
    expect(anywhere.tolerations).toBeUndefined();
  });

  it('refuses old placement keys (same_node_as, workspaces_claim, volume_root) with what replaces them', () => {
    for (const key of ['same_node_as', 'workspaces_claim', 'volume_root']) {
      const r = configSchema.safeParse({ kubernetes: { [key]: key === 'same_node_as' ? { a: 'b' } : 'x' } });
      expect(r.success, key).toBe(false);
    }
  });

  it('refuses a broker port without the URL pods reach it by', () => {
    const r = configSchema.safeParse({ kubernetes: { broker: { port: 8081 } } });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain('kubernetes.broker.url is required');
  });

  it('creates a schema-valid Job with backoffLimit 0, the agent deadline, the TTL and the agent ServiceAccount', async () => {
    const handle = await engine.start(spec());
    expect(handle).toEqual({
      engine: 'kubernetes',
      id: jobNameFor('20261122T023000Z-abc123'),
      runId: '20261122T023000Z-abc123',
    });
    const [create] = api.requestsTo('POST', '/apis/batch/v1/namespaces/triage/jobs');
    const job = create!.body as Record<string, never>;
    expect(() => new Job(job).validate()).not.toThrow();
    expect(job).toMatchObject({
      metadata: { name: handle.id, namespace: 'triage' },
      spec: {
        backoffLimit: 0,
        activeDeadlineSeconds: 900,
        ttlSecondsAfterFinished: 600,
        template: {
          spec: {
            restartPolicy: 'Never',
            serviceAccountName: 'triage-agent',
          },
        },
      },
    });
  });

  it('hardens the pod and container: non-root uid 1000, read-only root, no privilege escalation, no capabilities, RuntimeDefault seccomp', async () => {
    await engine.start(spec());
    const job = api.requestsTo('POST', '/jobs')[0]!.body as {
      spec: { template: { spec: Record<string, unknown> } };
    };
    expect(job.spec.template.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 1000,
      seccompProfile: { type: 'RuntimeDefault' },
      fsGroup: 10001,
      // A Job start must not re-chown every file on the shared claim.
      fsGroupChangePolicy: 'OnRootMismatch',
    });
    expect(agentContainer(job).securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(agentContainer(job).resources).toEqual({
      requests: { cpu: '250m', memory: '512Mi' },
      limits: { cpu: '2', memory: '2Gi' },
    });
  });

  it('turns run labels into valid label values and keeps the originals in an annotation', async () => {
    await engine.start(spec());
    const job = api.requestsTo('POST', '/jobs')[0]!.body as {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
    };
    expect(job.metadata.labels).toEqual({
      'io.triage-runner/daemon': 'pod-a_7',
      'io.triage-runner/incident': 'inc-1',
      'io.triage-runner/run': '20261122T023000Z-abc123',
      'app.kubernetes.io/managed-by': 'triage-runner',
    });
    expect(JSON.parse(job.metadata.annotations['io.triage-runner/labels']!)).toEqual(spec().labels);
  });

  it("mounts the run's mounts by subPath of an emptyDir the init container fills from the daemon, and tmpfs paths as memory emptyDirs", async () => {
    await engine.start(spec());
    const job = api.requestsTo('POST', '/jobs')[0]!.body as {
      spec: { template: { spec: { volumes: unknown[] } } };
    };
    const mounts = agentContainer(job).volumeMounts;
    expect(mounts).toContainEqual({
      name: 'run-files',
      mountPath: '/workspace',
      subPath: 'workspace',
      readOnly: false,
    });
    expect(mounts).toContainEqual({
      name: 'run-files',
      mountPath: '/workspace/incident.json',
      subPath: 'workspace/incident.json',
      readOnly: true,
    });
    expect(mounts).toContainEqual({ name: 'tmpfs-0', mountPath: '/home/agent' });
    expect(mounts).toContainEqual({ name: 'tmpfs-1', mountPath: '/tmp' });
    expect(job.spec.template.spec.volumes).toEqual([
      { name: 'run-files', emptyDir: { sizeLimit: '1Gi' } },
      { name: 'run-token', secret: { secretName: jobNameFor(spec().runId), defaultMode: 0o440 } },
      { name: 'tmpfs-0', emptyDir: { medium: 'Memory', sizeLimit: '256Mi' } },
      { name: 'tmpfs-1', emptyDir: { medium: 'Memory', sizeLimit: '256Mi' } },
    ]);
    const init = fetchContainer(job);
    expect(init.name).toBe('fetch-run-files');
    expect(init.image).toBe('triage-agent:latest');
    expect(init.env).toContainEqual({ name: 'TRIAGE_RUN_FILES_URL', value: DAEMON_URL });
    expect(init.securityContext).toEqual(agentContainer(job).securityContext);
  });

  it("keeps the run's files token in a Secret of its own: never in the Job; the prompt comes from the daemon as a file", async () => {
    const handle = await engine.start(spec());
    const job = api.requestsTo('POST', '/jobs')[0]!.body;
    const text = JSON.stringify(job);
    expect(text).not.toContain('Investigate pod');
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain(FILES_TOKEN);
    expect(api.secretValue('triage', handle.id, TOKEN_KEY)).toBe(FILES_TOKEN);
    const container = agentContainer(job);
    // The returning program in front of a shell that feeds the CLI the stdin file.
    expect(container.command).toEqual(['node', '/opt/triage/run-files/sync.js', '--']);
    expect(container.args).toEqual([
      '/bin/sh',
      '-c',
      `exec "$0" "$@" < ${STDIN_PATH}`,
      'claude',
      '-p',
      '--output-format',
      'json',
    ]);
    expect(container.volumeMounts).toContainEqual({
      name: 'run-files',
      mountPath: STDIN_PATH,
      subPath: STDIN_PATH.slice(1),
      readOnly: true,
    });
    expect(container.env).toContainEqual({
      name: 'ANTHROPIC_API_KEY',
      valueFrom: {
        secretKeyRef: { name: 'triage-runner-api-keys', key: 'ANTHROPIC_API_KEY', optional: true },
      },
    });
    expect(container.env).toContainEqual({ name: 'GOOSE_MODE', value: 'auto' });
    // Only the agent's writable folders go back.
    expect(container.env).toContainEqual({ name: 'TRIAGE_RUN_FILES_OUTPUTS', value: '["/workspace"]' });
  });

  it('runs the command with no shell wrapper when there is no stdin', async () => {
    await engine.start(spec({ stdin: '' }));
    const container = agentContainer(api.requestsTo('POST', '/jobs')[0]!.body);
    expect(container.args).toEqual(['claude', '-p', '--output-format', 'json']);
    expect(container.volumeMounts.some((m) => m.mountPath === STDIN_PATH)).toBe(false);
  });

  it('refuses a run without a files token or without the daemon URL, and creates nothing', async () => {
    await expect(engine.start(spec({ filesToken: undefined }))).rejects.toThrow(/has no files token/);
    const noUrl = createKubernetesEngine(
      configSchema.parse({ workspaces_root: path.join(root, 'workspaces') }),
      silentLogger(),
      { kubeConfig: api.kubeConfig() },
    );
    await expect(noUrl.start(spec())).rejects.toThrow(/set kubernetes.broker.port and kubernetes.broker.url/);
    await noUrl.close();
    expect(api.requestsTo('POST', '/jobs')).toHaveLength(0);
    expect(api.secrets.size).toBe(0);
  });

  it('deletes the Secret again when the Job cannot be created', async () => {
    api.failNext('/jobs', 403, 1, 'POST');
    await expect(engine.start(spec())).rejects.toThrow();
    expect(api.secrets.size).toBe(0);
  });

  it('refuses to mount a container engine socket into the agent', async () => {
    const bad = spec({
      mounts: [{ source: '/var/run/docker.sock', target: '/var/run/docker.sock', readOnly: true }],
    });
    await expect(engine.start(bad)).rejects.toThrow(/container engine socket/);
    expect(api.requestsTo('POST', '/jobs')).toHaveLength(0);
  });

  it('says the Job already exists when a run id is reused', async () => {
    await engine.start(spec());
    await expect(engine.start(spec())).rejects.toThrow(/already exists in namespace triage/);
  });
});

describe('kubernetes engine: supervising a run', () => {
  it("wait resolves with the agent container's exit code once the watch reports the Job finished", async () => {
    const handle = await engine.start(spec());
    const exit = engine.wait(handle, 10_000);
    await until('a Job watch', () => api.openWatches > 0);
    api.finishJob(handle.id, 3);
    await expect(exit).resolves.toEqual({ exitCode: 3, signal: null, oomKilled: false });
    const [watch] = api
      .requestsTo('GET', '/apis/batch/v1/namespaces/triage/jobs')
      .filter((r) => r.query.watch === 'true');
    expect(watch!.query.fieldSelector).toBe(`metadata.name=${handle.id}`);
  });

  it('wait reports an OOM kill from the terminated state', async () => {
    const handle = await engine.start(spec());
    const exit = engine.wait(handle, 10_000);
    await until('a Job watch', () => api.openWatches > 0);
    api.finishJob(handle.id, 137, { reason: 'OOMKilled' });
    await expect(exit).resolves.toMatchObject({ exitCode: 137, oomKilled: true });
  });

  it('wait with a timeout beyond 24.8 days (a 30d agent.timeout) waits for the Job instead of timing out at once', async () => {
    const handle = await engine.start(spec());
    const exit = engine.wait(handle, 30 * 24 * 3600 * 1000);
    await until('a Job watch', () => api.openWatches > 0);
    api.finishJob(handle.id, 3);
    await expect(exit).resolves.toMatchObject({ exitCode: 3 });
  });

  it('wait resolves at once for a Job that had already finished, without watching', async () => {
    const handle = await engine.start(spec());
    api.finishJob(handle.id, 0);
    await expect(engine.wait(handle, 10_000)).resolves.toEqual({
      exitCode: 0,
      signal: null,
      oomKilled: false,
    });
  });

  it('wait re-establishes a watch the server closed and still sees the end', async () => {
    const handle = await engine.start(spec());
    const exit = engine.wait(handle, 10_000);
    await until('a Job watch', () => api.openWatches > 0);
    api.closeWatches();
    const watches = () => api.requestsTo('GET', '/jobs').filter((r) => r.query.watch === 'true').length;
    await until('a second Job watch', () => watches() >= 2 && api.openWatches > 0);
    api.finishJob(handle.id, 1);
    await expect(exit).resolves.toMatchObject({ exitCode: 1 });
  });

  it('wait reports a Job stopped by its activeDeadlineSeconds as killed, naming the deadline', async () => {
    const handle = await engine.start(spec());
    const exit = engine.wait(handle, 10_000);
    await until('a Job watch', () => api.openWatches > 0);
    api.updateJob(handle.id, {
      conditions: [{ type: 'Failed', status: 'True', reason: 'DeadlineExceeded' }],
    });
    const result = await exit;
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGKILL', oomKilled: false });
    expect(result.error).toContain('activeDeadlineSeconds=900');
  });

  it('wait rejects with a timeout that names the milliseconds, leaving the Job alone', async () => {
    const handle = await engine.start(spec());
    const err = await engine.wait(handle, 150).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WaitTimeoutError);
    expect((err as Error).message).toContain('150 ms');
    expect(api.jobs.has(handle.id)).toBe(true);
    await until('the watch to be closed', () => api.openWatches === 0);
  });

  it('wait ends with an error when the agent image cannot be pulled instead of idling to the deadline', async () => {
    const handle = await engine.start(spec());
    api.setPod(
      handle.id,
      { waiting: { reason: 'ErrImagePull', message: 'pull access denied for triage-agent' } },
      'Pending',
    );
    const exit = await engine.wait(handle, 10_000);
    expect(exit.exitCode).toBeNull();
    expect(exit.error).toContain('ErrImagePull: pull access denied');
  });

  it("streams the pod's log to onStdout as it arrives and drains it before wait resolves", async () => {
    const out: Buffer[] = [];
    const handle = await engine.start(spec({ onStdout: (c) => out.push(c) }));
    const exit = engine.wait(handle, 10_000);
    const pod = api.setPod(handle.id, { running: { startedAt: new Date().toISOString() } });
    api.appendLog(pod, 'line 1\n');
    await until('the first log line', () => Buffer.concat(out).toString().includes('line 1'));
    api.appendLog(pod, 'line 2\n');
    api.finishJob(handle.id, 0);
    await expect(exit).resolves.toMatchObject({ exitCode: 0 });
    expect(Buffer.concat(out).toString()).toBe('line 1\nline 2\n');
    expect(api.requestsTo('GET', `/pods/${pod}/log`)[0]!.query).toMatchObject({
      follow: 'true',
      container: 'agent',
    });
  });

  it('reconnects a log stream that closed while the container runs, without repeating output', async () => {
    const out: Buffer[] = [];
    const handle = await engine.start(spec({ onStdout: (c) => out.push(c) }));
    const pod = api.setPod(handle.id, { running: { startedAt: new Date().toISOString() } });
    api.appendLog(pod, 'before\n');
    await until('the first line', () => Buffer.concat(out).toString() === 'before\n');
    api.dropLogFollowers(pod);
    api.appendLog(pod, 'after\n');
    await until('the second line', () => Buffer.concat(out).toString() === 'before\nafter\n');
    expect(api.requestsTo('GET', `/pods/${pod}/log`).length).toBeGreaterThanOrEqual(2);
  });

  it('attach re-streams the log of a run found after a restart', async () => {
    const handle = await engine.start(spec({ stdin: '' }));
    const pod = api.setPod(handle.id, { terminated: { exitCode: 0 } }, 'Succeeded');
    api.appendLog(pod, 'whole log\n');
    api.endLog(pod);
    const other = createKubernetesEngine(config, silentLogger(), {
      kubeConfig: api.kubeConfig(),
      pollIntervalMs: 20,
    });
    const out: Buffer[] = [];
    await other.attach(
      handle,
      (c) => out.push(c),
      () => {},
    );
    await until('the re-streamed log', () => Buffer.concat(out).toString() === 'whole log\n');
    await other.close();
  });
});

describe('kubernetes engine: stopping and cleaning up', () => {
  it('SIGTERM deletes the Job with Foreground propagation and the stop grace; wait reports the signal', async () => {
    const handle = await engine.start(spec());
    const exit = engine.wait(handle, 10_000);
    await until('a Job watch', () => api.openWatches > 0);
    await engine.signal(handle, 'SIGTERM');
    const [del] = api.requestsTo('DELETE', `/jobs/${handle.id}`);
    expect(del!.query).toMatchObject({ propagationPolicy: 'Foreground', gracePeriodSeconds: '7' });
    await expect(exit).resolves.toMatchObject({ exitCode: null, signal: 'SIGTERM' });
  });

  it('SIGKILL deletes with a zero grace period, and a second stop of a gone Job is fine', async () => {
    const handle = await engine.start(spec());
    await engine.signal(handle, 'SIGKILL');
    await engine.signal(handle, 'SIGKILL');
    const dels = api.requestsTo('DELETE', `/jobs/${handle.id}`);
    expect(dels).toHaveLength(2);
    expect(dels[0]!.query).toMatchObject({ propagationPolicy: 'Foreground', gracePeriodSeconds: '0' });
  });

  it("remove deletes the Job and the run's token Secret and is idempotent", async () => {
    const handle = await engine.start(spec());
    expect(api.secrets.size).toBe(1);
    await engine.remove(handle);
    await engine.remove(handle);
    expect(api.jobs.has(handle.id)).toBe(false);
    expect(api.secrets.size).toBe(0);
  });

  it("remove deletes the token's Secret even when the API server fails the Job delete", async () => {
    const handle = await engine.start(spec());
    api.failNext(`/jobs/${handle.id}`, 503, 1, 'DELETE');
    await expect(engine.remove(handle)).rejects.toBeInstanceOf(TransientError);
    expect(api.secrets.size).toBe(0);
    await engine.remove(handle);
    expect(api.jobs.has(handle.id)).toBe(false);
  });

  it('close ends a pending wait and its watch, so nothing keeps the process alive after shutdown', async () => {
    const handle = await engine.start(spec());
    const exit = engine.wait(handle, 600_000).catch((e: unknown) => e);
    await until('a Job watch', () => api.openWatches > 0);
    await engine.close();
    expect(await exit).toMatchObject({ message: expect.stringContaining('engine was closed') });
    await until('the watch to close', () => api.openWatches === 0);
    expect(api.jobs.has(handle.id)).toBe(true);
  });

  it('list finds runs by label — running and finished — with their original label values', async () => {
    const a = await engine.start(spec());
    const b = await engine.start(
      spec({ runId: 'run-b', labels: { ...spec().labels, 'io.triage-runner/run': 'run-b' } }),
    );
    await engine.start(spec({ runId: 'run-c', labels: { 'io.triage-runner/daemon': 'pod-b:9' } }));
    api.finishJob(b.id, 0);
    const runs = await engine.list({ 'io.triage-runner/daemon': 'pod-a:7' });
    expect(runs.map((r) => [r.handle.id, r.handle.runId, r.running]).sort()).toEqual(
      [
        [a.id, a.runId, true],
        [b.id, 'run-b', false],
      ].sort(),
    );
    expect(runs[0]!.labels['io.triage-runner/daemon']).toBe('pod-a:7');
    const [listReq] = api
      .requestsTo('GET', '/apis/batch/v1/namespaces/triage/jobs')
      .filter((r) => r.query.labelSelector);
    expect(listReq!.query.labelSelector).toBe(
      'io.triage-runner/daemon=pod-a_7,app.kubernetes.io/managed-by=triage-runner',
    );
  });
});

describe('kubernetes engine: API server failures', () => {
  it('ping, start and list throw a TransientError when the API server is unreachable', async () => {
    await api.close();
    const down = createKubernetesEngine(config, silentLogger(), {
      kubeConfig: api.kubeConfig(),
      pollIntervalMs: 20,
    });
    for (const attempt of [() => down.ping(), () => down.start(spec()), () => down.list({ a: 'b' })]) {
      const err = await attempt().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransientError);
      expect((err as Error).message).toMatch(/unreachable/);
      expect(isTransient(err)).toBe(true);
    }
    await down.close();
  });

  it('says how to configure access when there is no cluster, kubeconfig or ~/.kube/config', async () => {
    const none = createKubernetesEngine(config, silentLogger(), { env: { HOME: root } });
    for (const attempt of [() => none.ping(), () => none.start(spec()), () => none.list({})]) {
      await expect(attempt()).rejects.toThrow(/no Kubernetes configuration found.*set KUBECONFIG/);
    }
    await none.close();
  });

  it('treats HTTP 500 as transient and HTTP 403 as a configuration error naming RBAC', async () => {
    api.failNext('/jobs', 500, 1, 'POST');
    const err500 = await engine.start(spec()).catch((e: unknown) => e);
    expect(err500).toBeInstanceOf(TransientError);
    expect((err500 as Error).message).toContain('HTTP 500');
    api.failNext('/jobs', 403, 1, 'GET');
    const err403 = await engine.ping().catch((e: unknown) => e);
    expect(isTransient(err403)).toBe(false);
    expect((err403 as Error).message).toMatch(/HTTP 403.*ServiceAccount and Role/);
  });

  it('wait gives up with a TransientError after repeated watch failures', async () => {
    const handle = await engine.start(spec());
    api.failNext(`/jobs/${handle.id}`, 503, 10, 'GET');
    const err = await engine.wait(handle, 10_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransientError);
    expect((err as Error).message).toContain('HTTP 503');
  });
});
