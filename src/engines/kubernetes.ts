import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { Writable } from 'node:stream';
import {
  BatchV1Api,
  CoordinationV1Api,
  CoreV1Api,
  KubeConfig,
  Log,
  V1MicroTime,
  Watch,
  type V1Lease,
  type V1Container,
  type V1EnvVar,
  type V1Job,
  type V1Pod,
  type V1Volume,
  type V1VolumeMount,
} from '@kubernetes/client-node';
import type { Config } from '../config/schema.js';
import { LeaseConflictError, type LeaseRecord, type LeaseStore } from '../election/types.js';
import type { Logger } from '../log/logger.js';
import { writeFileAtomic } from '../util/fs.js';
import { TransientError, errorMessage } from '../util/errors.js';
import { assertNoEngineSocket, LABEL_PREFIX, RUN_LABELS, WaitTimeoutError } from './labels.js';
import type { Engine, RunExit, RunHandle, RunInfo, RunSpec, StopSignal } from './types.js';

// The kubernetes engine: each run is a batch/v1 Job in config.kubernetes.namespace. The workspace is
// shared through the workspaces PVC (subPath mounts), stdin is delivered as a file on that volume, logs
// are followed from the pod, and the Job's status is watched. This is the only module that imports
// @kubernetes/client-node.

/** The agent's container name inside every Job pod. */
export const AGENT_CONTAINER = 'agent';
/** Where the stdin file is mounted in the agent container (read-only). */
export const STDIN_MOUNT_PATH = '/run/triage-runner/stdin';
/** Label every Job of this engine carries; listing always selects on it. */
export const MANAGED_BY = { key: 'app.kubernetes.io/managed-by', value: 'triage-runner' } as const;
const RUN_ID_ANNOTATION = `${LABEL_PREFIX}run-id`;
const LABELS_ANNOTATION = `${LABEL_PREFIX}labels`;
const WORKSPACES_VOLUME = 'workspaces';
// Folder under the volume root holding stdin files; one file per Job, removed with the Job.
const STDIN_DIR = path.join('.triage-runner', 'stdin');

export interface KubernetesEngineOptions {
  /** Defaults to KubeConfig.loadFromDefault(): in-cluster service account, $KUBECONFIG or ~/.kube/config. */
  kubeConfig?: KubeConfig;
  /** Environment consulted to find the default configuration (KUBERNETES_SERVICE_HOST, KUBECONFIG, HOME). */
  env?: Record<string, string | undefined>;
  /** How often pods are polled while a run's pod is pending (ms). */
  pollIntervalMs?: number;
  /** After the Job ends, how long wait() lets the log stream drain before resolving (ms). */
  logDrainMs?: number;
  /** Consecutive failed watch (re)connections before wait() gives up with a TransientError. */
  maxWatchFailures?: number;
}

// ---------------------------------------------------------------------------------------------
// Names and labels

const LABEL_VALUE_MAX = 63;

/** A valid label value (≤63 chars, alphanumeric at both ends, [-_.A-Za-z0-9] inside). */
export function sanitizeLabelValue(value: string): string {
  let out = value.replace(/[^A-Za-z0-9_.-]/g, '_');
  if (out.length > LABEL_VALUE_MAX) out = `${out.slice(0, LABEL_VALUE_MAX - 9)}-${shortHash(value)}`;
  return out.replace(/^[^A-Za-z0-9]+/, '').replace(/[^A-Za-z0-9]+$/, '');
}

/** A valid label key: optional DNS-subdomain prefix + "/" + a name of ≤63 chars. */
export function sanitizeLabelKey(key: string): string {
  const slash = key.lastIndexOf('/');
  const prefix =
    slash >= 0
      ? key
          .slice(0, slash)
          .toLowerCase()
          .replace(/[^a-z0-9.-]/g, '-')
      : '';
  const name = sanitizeLabelValue(slash >= 0 ? key.slice(slash + 1) : key) || 'label';
  return prefix ? `${prefix.slice(0, 253)}/${name}` : name;
}

/** The Job name for a run: a DNS-1123 label (lowercase, ≤63 chars) derived from the run id. */
export function jobNameFor(runId: string): string {
  const base = `triage-${runId.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`
    .replace(/-+/g, '-')
    .replace(/-$/, '');
  return base.length <= LABEL_VALUE_MAX ? base : `${base.slice(0, LABEL_VALUE_MAX - 9)}-${shortHash(runId)}`;
}

function shortHash(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 8);
}

function labelSelector(labels: Record<string, string>): string {
  const all = { ...sanitizeLabels(labels), [MANAGED_BY.key]: MANAGED_BY.value };
  return Object.entries(all)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

function sanitizeLabels(labels: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(labels).map(([k, v]) => [sanitizeLabelKey(k), sanitizeLabelValue(v)]),
  );
}

// ---------------------------------------------------------------------------------------------
// The Job manifest (pure)

export interface JobParts {
  jobName: string;
  /** subPath (relative to the volume root) of the stdin file, when there is stdin. */
  stdinSubPath?: string;
}

/** Maps a mount source (a daemon-side path under the volume root) to its subPath; throws otherwise. */
export function subPathFor(volumeRoot: string, source: string): string {
  const rel = path.relative(volumeRoot, path.resolve(source));
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
    throw new Error(
      `mount source ${source} is not inside the workspaces volume ${volumeRoot}: the kubernetes engine can only ` +
        'share paths on the workspaces claim; put it under workspaces_root or set kubernetes.volume_root',
    );
  }
  return rel.split(path.sep).join('/');
}

/** The daemon-side path where the workspaces claim is mounted. */
export function volumeRootOf(config: Config): string {
  return path.resolve(config.kubernetes.volume_root ?? config.workspaces_root);
}

/** Builds the Job for a run. Secret values never appear in it: secretEnv becomes secretKeyRefs. */
export function buildJob(config: Config, spec: RunSpec, parts: JobParts): V1Job {
  const k = config.kubernetes;
  const volumeRoot = volumeRootOf(config);
  const labels = { ...sanitizeLabels(spec.labels), [MANAGED_BY.key]: MANAGED_BY.value };
  const mounts: V1VolumeMount[] = spec.mounts.map((m) => ({
    name: WORKSPACES_VOLUME,
    mountPath: m.target,
    subPath: subPathFor(volumeRoot, m.source),
    readOnly: m.readOnly,
  }));
  const volumes: V1Volume[] = [
    { name: WORKSPACES_VOLUME, persistentVolumeClaim: { claimName: k.workspaces_claim } },
  ];
  spec.tmpfs.forEach((target, i) => {
    const name = `tmpfs-${i}`;
    volumes.push({ name, emptyDir: { medium: 'Memory', sizeLimit: k.tmpfs_size } });
    mounts.push({ name, mountPath: target });
  });
  // stdin: the prompt lives in a file; the wrapper script only names that file, never the prompt.
  let command = [spec.command];
  let args = spec.args;
  if (parts.stdinSubPath !== undefined) {
    mounts.push({
      name: WORKSPACES_VOLUME,
      mountPath: STDIN_MOUNT_PATH,
      subPath: parts.stdinSubPath,
      readOnly: true,
    });
    command = ['/bin/sh', '-c', `exec "$0" "$@" < ${STDIN_MOUNT_PATH}`];
    args = [spec.command, ...spec.args];
  }
  const env: V1EnvVar[] = [
    ...Object.entries(spec.env).map(([name, value]) => ({ name, value })),
    ...Object.keys(spec.secretEnv).map((name) => ({
      name,
      valueFrom: { secretKeyRef: { name: k.secret_name, key: name, optional: true } },
    })),
  ];
  const container: V1Container = {
    name: AGENT_CONTAINER,
    image: spec.image,
    imagePullPolicy: k.image_pull_policy,
    command,
    args,
    workingDir: spec.workdir,
    env,
    resources: {
      requests: { cpu: k.cpu_request, memory: k.memory_request },
      limits: { cpu: k.cpu, memory: k.memory },
    },
    securityContext: {
      runAsNonRoot: true,
      runAsUser: k.run_as_user,
      runAsGroup: k.run_as_user,
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    volumeMounts: mounts,
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
  const activeDeadlineSeconds =
    spec.timeoutMs !== undefined && spec.timeoutMs > 0 ? Math.ceil(spec.timeoutMs / 1000) : undefined;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: parts.jobName,
      namespace: k.namespace,
      labels,
      annotations: { [RUN_ID_ANNOTATION]: spec.runId, [LABELS_ANNOTATION]: JSON.stringify(spec.labels) },
    },
    spec: {
      backoffLimit: 0,
      ...(activeDeadlineSeconds !== undefined ? { activeDeadlineSeconds } : {}),
      ttlSecondsAfterFinished: k.ttl_seconds_after_finished,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          serviceAccountName: k.service_account,
          // With the pod broker the agent holds no credentials: its kubectl goes through the daemon. Without
          // it the agent investigates with its own token and the read-only view role.
          automountServiceAccountToken: k.broker.port === 0,
          // A ReadWriteOnce claim is attached to one node: the Job goes where the daemon (and the claim) is.
          ...(k.same_node_as
            ? {
                affinity: {
                  podAffinity: {
                    requiredDuringSchedulingIgnoredDuringExecution: [
                      {
                        labelSelector: { matchLabels: k.same_node_as },
                        topologyKey: 'kubernetes.io/hostname',
                      },
                    ],
                  },
                },
              }
            : {}),
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: k.run_as_user,
            runAsGroup: k.run_as_user,
            fsGroup: k.fs_group,
            // Without it the kubelet re-chowns the whole workspaces claim (every incident) on each Job start.
            fsGroupChangePolicy: 'OnRootMismatch',
            supplementalGroups: [k.fs_group],
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [container],
          volumes,
        },
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Errors

function httpCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown; statusCode?: unknown } | undefined)?.code;
  if (typeof code === 'number') return code;
  const status = (err as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

function apiMessage(err: unknown): string {
  const body = (err as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as { message?: string };
      if (parsed.message) return parsed.message;
    } catch {
      return body.slice(0, 500);
    }
  }
  if (body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') {
    return (body as { message: string }).message;
  }
  return errorMessage(err).split('\n')[0] ?? '';
}

/** API server unreachable, overloaded or failing (5xx, 429, network) → TransientError; else a plain Error. */
function classify(err: unknown, what: string, server: string): Error {
  const code = httpCode(err);
  if (code === undefined) {
    const sys = (err as { code?: unknown }).code;
    return new TransientError(
      `Kubernetes API server ${server} unreachable while trying to ${what}: ${errorMessage(err)}; ` +
        'the run will be retried — check the server address and that the API server is up',
      { cause: err, code: typeof sys === 'string' ? sys : undefined },
    );
  }
  if (code >= 500 || code === 429) {
    return new TransientError(
      `Kubernetes API server ${server} failed to ${what}: HTTP ${code} ${apiMessage(err)}; it will be retried`,
      { cause: err, code: `HTTP_${code}` },
    );
  }
  const hint =
    code === 401 || code === 403
      ? "check the daemon's ServiceAccount and Role (deploy/kubernetes/rbac.yaml)"
      : 'check the engine configuration under kubernetes:';
  return Object.assign(
    new Error(`Kubernetes API refused to ${what}: HTTP ${code} ${apiMessage(err)}; ${hint}`, { cause: err }),
    {
      statusCode: code,
    },
  );
}

// ---------------------------------------------------------------------------------------------
// Job and pod status

function finishedCondition(job: V1Job): 'Complete' | 'Failed' | undefined {
  for (const c of job.status?.conditions ?? []) {
    if (c.status === 'True' && (c.type === 'Complete' || c.type === 'Failed')) return c.type;
  }
  return undefined;
}

function failedReason(job: V1Job): string | undefined {
  return job.status?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True')?.reason;
}

// A container that can never start: the Job would sit pending until its deadline.
const FATAL_WAITING = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'CreateContainerConfigError',
  'CreateContainerError',
]);

function agentStatus(pod: V1Pod) {
  return pod.status?.containerStatuses?.find((s) => s.name === AGENT_CONTAINER);
}

const SIGNALS: Record<number, string> = { 2: 'SIGINT', 9: 'SIGKILL', 15: 'SIGTERM' };

function newestPod(pods: V1Pod[]): V1Pod | undefined {
  return [...pods].sort(
    (a, b) =>
      new Date(b.metadata?.creationTimestamp ?? 0).getTime() -
      new Date(a.metadata?.creationTimestamp ?? 0).getTime(),
  )[0];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const MAX_TIMER_MS = 2 ** 31 - 1;

// ---------------------------------------------------------------------------------------------
// The engine

interface RunState {
  pump?: LogPump;
  signal?: StopSignal;
  fatal?: string;
}

/** A Kubernetes-Job engine bound to config.kubernetes.namespace. */
export function createKubernetesEngine(
  config: Config,
  log: Logger,
  options: KubernetesEngineOptions = {},
): Engine {
  const found = options.kubeConfig
    ? { kc: options.kubeConfig }
    : defaultKubeConfig(options.env ?? process.env);
  const kc = found.kc;
  const server = kc.getCurrentCluster()?.server ?? '(no current cluster)';
  const batch = kc.makeApiClient(BatchV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const watcher = new Watch(kc);
  const logs = new Log(kc);
  const namespace = config.kubernetes.namespace;
  const volumeRoot = volumeRootOf(config);
  const pollMs = options.pollIntervalMs ?? 1000;
  const drainMs = options.logDrainMs ?? 5000;
  const maxWatchFailures = options.maxWatchFailures ?? 5;
  const graceSeconds = Math.max(1, Math.ceil(config.agent.stop_grace / 1000));
  const runs = new Map<string, RunState>();
  // Pending wait() calls: close() ends them so that their watch connections and timers do not keep
  // the process alive after shutdown.
  const waiting = new Set<(err: Error) => void>();
  let closed = false;

  const stateOf = (id: string): RunState => {
    let s = runs.get(id);
    if (!s) runs.set(id, (s = {}));
    return s;
  };
  const stdinFile = (jobName: string) => path.join(volumeRoot, STDIN_DIR, jobName);

  async function podsOf(jobName: string): Promise<V1Pod[]> {
    try {
      const list = await core.listNamespacedPod({ namespace, labelSelector: `job-name=${jobName}` });
      return list.items;
    } catch (err) {
      throw classify(err, `list the pods of Job ${jobName} in namespace ${namespace}`, server);
    }
  }

  function startPump(handle: RunHandle, onStdout: (c: Buffer) => void): void {
    const state = stateOf(handle.id);
    state.pump?.stop();
    state.pump = new LogPump({
      jobName: handle.id,
      namespace,
      logs,
      podsOf,
      pollMs,
      log,
      onStdout,
      onFatal: (reason) => {
        state.fatal = reason;
      },
    });
    state.pump.start();
  }

  async function exitOf(job: V1Job | undefined, jobName: string, deleted: boolean): Promise<RunExit> {
    const state = stateOf(jobName);
    const pods = await podsOf(jobName).catch(() => [] as V1Pod[]);
    const pod = newestPod(pods);
    const terminated = pod ? agentStatus(pod)?.state?.terminated : undefined;
    if (terminated) {
      return {
        exitCode: terminated.exitCode,
        signal:
          terminated.signal !== undefined
            ? (SIGNALS[terminated.signal] ?? String(terminated.signal))
            : (state.signal ?? null),
        oomKilled: terminated.reason === 'OOMKilled',
      };
    }
    const reason = job ? failedReason(job) : undefined;
    if (reason === 'DeadlineExceeded') {
      return {
        exitCode: null,
        signal: 'SIGKILL',
        oomKilled: false,
        error: `Job ${jobName} exceeded activeDeadlineSeconds=${job?.spec?.activeDeadlineSeconds ?? '?'} and was stopped by Kubernetes`,
      };
    }
    return {
      exitCode: null,
      signal: state.signal ?? null,
      oomKilled: false,
      error: deleted
        ? `Job ${jobName} was deleted before its agent container reported an exit code`
        : `Job ${jobName} ended (${reason ?? finishedCondition(job ?? {}) ?? 'unknown'}) without a terminated agent container`,
    };
  }

  async function wait(handle: RunHandle, timeoutMs: number): Promise<RunExit> {
    const jobName = handle.id;
    const state = stateOf(jobName);
    return new Promise<RunExit>((resolve, reject) => {
      let settled = false;
      let ending = false;
      let failures = 0;
      let controller: AbortController | undefined;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        waiting.delete(onClose);
        clearTimeout(timer);
        clearInterval(fatalTimer);
        controller?.abort();
        fn();
      };
      const onClose = (err: Error) => finish(() => reject(err));
      waiting.add(onClose);
      // setTimeout fires at once for delays above 2^31-1 ms (~24.8 days): a `timeout: 30d` would
      // otherwise end every wait immediately.
      const timer = setTimeout(
        () => finish(() => reject(new WaitTimeoutError(jobName, timeoutMs))),
        Math.min(timeoutMs, MAX_TIMER_MS),
      );
      const end = (job: V1Job | undefined, deleted: boolean) => {
        if (ending || settled) return;
        ending = true;
        controller?.abort();
        void (async () => {
          const exit = await exitOf(job, jobName, deleted);
          await state.pump?.drain(drainMs);
          finish(() => resolve(exit));
        })().catch((err: unknown) => finish(() => reject(err)));
      };
      // A pod that can never start is reported as the run's end instead of idling to the deadline.
      const fatalTimer = setInterval(() => {
        if (state.fatal && !ending) {
          ending = true;
          finish(() =>
            resolve({
              exitCode: null,
              signal: null,
              oomKilled: false,
              error: `agent container cannot start: ${state.fatal}`,
            }),
          );
        }
      }, pollMs);
      const retry = (err: unknown) => {
        if (settled || ending) return;
        failures += 1;
        if (failures >= maxWatchFailures) {
          finish(() => reject(classify(err, `watch Job ${jobName} (${failures} attempts)`, server)));
          return;
        }
        log.warn(
          { jobName, attempt: failures, err: errorMessage(err) },
          'kubernetes job watch failed; reconnecting',
        );
        setTimeout(connect, Math.min(pollMs * 2 ** failures, 5000));
      };
      const connect = () => {
        if (settled || ending) return;
        void (async () => {
          let job: V1Job;
          try {
            job = await batch.readNamespacedJob({ name: jobName, namespace });
          } catch (err) {
            if (httpCode(err) === 404) return end(undefined, true);
            return retry(err);
          }
          if (finishedCondition(job)) return end(job, false);
          const params = {
            fieldSelector: `metadata.name=${jobName}`,
            resourceVersion: job.metadata?.resourceVersion,
            allowWatchBookmarks: true,
          };
          try {
            controller = await watcher.watch(
              `/apis/batch/v1/namespaces/${namespace}/jobs`,
              params,
              (type: string, obj: V1Job) => {
                if (type === 'DELETED') return end(obj, true);
                if (type === 'ERROR') return; // e.g. 410 Gone: the watch closes and connect() re-reads
                if (type === 'BOOKMARK') return;
                failures = 0;
                if (finishedCondition(obj)) end(obj, false);
              },
              (err: unknown) => {
                if (err) return retry(err);
                setTimeout(connect, Math.min(pollMs, 1000)); // the server closed the watch: re-read, watch again
              },
            );
            if (settled || ending) controller.abort(); // ended (or timed out) while the watch was opening
          } catch (err) {
            retry(err);
          }
        })();
      };
      connect();
    });
  }

  async function deleteJob(
    jobName: string,
    gracePeriodSeconds: number,
    propagationPolicy: string,
  ): Promise<void> {
    try {
      await batch.deleteNamespacedJob({ name: jobName, namespace, gracePeriodSeconds, propagationPolicy });
    } catch (err) {
      if (httpCode(err) === 404) return;
      throw classify(err, `delete Job ${jobName} in namespace ${namespace}`, server);
    }
  }

  const engine: Engine = {
    name: 'kubernetes',
    placement: 'container',
    // A Job has no signal API: stopping it deletes its pod (SIGTERM, then SIGKILL after the grace).
    capabilities: {
      reattachOutput: true,
      reportsOom: true,
      signals: ['SIGTERM', 'SIGKILL'],
      networkBroker: true,
    },

    async ping() {
      if (found.missing) throw new Error(found.missing);
      try {
        await batch.listNamespacedJob({ namespace, limit: 1 });
      } catch (err) {
        throw classify(err, `list Jobs in namespace ${namespace}`, server);
      }
    },

    async start(spec) {
      if (closed) throw new Error('the kubernetes engine is closed; create a new one');
      if (found.missing) throw new Error(found.missing);
      assertNoEngineSocket(spec.mounts);
      const jobName = jobNameFor(spec.runId);
      let stdinSubPath: string | undefined;
      if (spec.stdin.length > 0) {
        const file = stdinFile(jobName);
        await mkdir(path.dirname(file), { recursive: true, mode: 0o750 });
        await writeFileAtomic(file, spec.stdin, 0o640);
        stdinSubPath = subPathFor(volumeRoot, file);
      }
      let body: V1Job;
      try {
        body = buildJob(config, spec, { jobName, stdinSubPath });
      } catch (err) {
        await rm(stdinFile(jobName), { force: true });
        throw err;
      }
      try {
        await batch.createNamespacedJob({ namespace, body });
      } catch (err) {
        await rm(stdinFile(jobName), { force: true });
        if (httpCode(err) === 409) {
          throw new Error(
            `Job ${jobName} already exists in namespace ${namespace}: run ids must be unique; remove it first`,
            {
              cause: err,
            },
          );
        }
        throw classify(err, `create Job ${jobName} in namespace ${namespace}`, server);
      }
      const handle: RunHandle = { engine: 'kubernetes', id: jobName, runId: spec.runId };
      log.info({ jobName, namespace, runId: spec.runId, image: spec.image }, 'kubernetes job created');
      startPump(handle, spec.onStdout);
      return handle;
    },

    wait,

    async signal(handle, signal) {
      const state = stateOf(handle.id);
      state.signal = signal;
      // A Job has no signal API: deleting it (pods first) makes the kubelet send SIGTERM, then SIGKILL
      // after the grace period. SIGKILL asks for no grace at all.
      const grace = signal === 'SIGKILL' ? 0 : graceSeconds;
      log.info(
        { jobName: handle.id, signal, gracePeriodSeconds: grace },
        'deleting kubernetes job to stop it',
      );
      await deleteJob(handle.id, grace, 'Foreground');
    },

    async remove(handle) {
      const state = runs.get(handle.id);
      state?.pump?.stop();
      runs.delete(handle.id);
      try {
        await deleteJob(handle.id, graceSeconds, 'Background');
      } finally {
        // The prompt must not outlive the run on the shared volume, even when the API server is down.
        await rm(stdinFile(handle.id), { force: true });
      }
    },

    async list(labels) {
      if (found.missing) throw new Error(found.missing);
      let items: V1Job[];
      try {
        items = (await batch.listNamespacedJob({ namespace, labelSelector: labelSelector(labels) })).items;
      } catch (err) {
        throw classify(err, `list Jobs in namespace ${namespace}`, server);
      }
      const out: RunInfo[] = [];
      for (const job of items) {
        const name = job.metadata?.name;
        if (!name) continue;
        const original = parseLabels(job.metadata?.annotations?.[LABELS_ANNOTATION]);
        // Sanitizing may map two values to one label: the annotation holds the exact originals.
        if (Object.entries(labels).some(([k, v]) => original[k] !== undefined && original[k] !== v)) continue;
        out.push({
          handle: {
            engine: 'kubernetes',
            id: name,
            runId: job.metadata?.annotations?.[RUN_ID_ANNOTATION] ?? name,
          },
          labels: Object.keys(original).length > 0 ? original : (job.metadata?.labels ?? {}),
          running: !finishedCondition(job) && !job.metadata?.deletionTimestamp,
          started: true,
          ...(job.metadata?.creationTimestamp ? { createdAt: new Date(job.metadata.creationTimestamp) } : {}),
        });
      }
      return out;
    },

    async find(runId) {
      return (await engine.list({ [RUN_LABELS.run]: runId }))[0];
    },

    async attach(handle, onStdout) {
      // Kubernetes merges stdout and stderr into one log stream: everything goes to onStdout.
      startPump(handle, onStdout);
    },

    async close() {
      closed = true;
      for (const state of runs.values()) state.pump?.stop();
      runs.clear();
      for (const end of [...waiting]) {
        end(new Error('the kubernetes engine was closed while waiting for a Job; the Job keeps running'));
      }
    },
  };
  return engine;
}

function parseLabels(raw: string | undefined): Record<string, string> {
  if (!raw) return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return Object.fromEntries(Object.entries(parsed).filter(([, v]) => typeof v === 'string')) as Record<
        string,
        string
      >;
    }
  } catch {
    // a hand-edited annotation: fall back to the labels
  }
  return {};
}

/**
 * In-cluster service account, else $KUBECONFIG, else ~/.kube/config. Without any of them the client
 * would silently aim at http://localhost:8080, so that case is reported instead (on first use).
 */
function defaultKubeConfig(env: Record<string, string | undefined>): { kc: KubeConfig; missing?: string } {
  const kc = new KubeConfig();
  const home = env.HOME ?? homedir();
  const candidates = [env.KUBECONFIG, home ? path.join(home, '.kube', 'config') : undefined];
  if (
    !env.KUBERNETES_SERVICE_HOST &&
    !candidates.some((f) => f && f.split(path.delimiter).some((p) => existsSync(p)))
  ) {
    // A placeholder cluster so that clients can be built; ping/start/list refuse before using it.
    kc.loadFromClusterAndUser(
      { name: 'none', server: 'http://127.0.0.1:1', skipTLSVerify: false },
      { name: 'none' },
    );
    return {
      kc,
      missing:
        'no Kubernetes configuration found: not inside a pod (KUBERNETES_SERVICE_HOST unset), KUBECONFIG unset or ' +
        'missing, and no ~/.kube/config; run the daemon in the cluster or set KUBECONFIG',
    };
  }
  kc.loadFromDefault();
  return { kc };
}

// ---------------------------------------------------------------------------------------------
// Log streaming

interface LogPumpOptions {
  jobName: string;
  namespace: string;
  logs: Log;
  podsOf: (jobName: string) => Promise<V1Pod[]>;
  pollMs: number;
  log: Logger;
  onStdout: (c: Buffer) => void;
  onFatal: (reason: string) => void;
}

// Follows the agent container's log. Waits for the pod to start; if the follow stream closes while
// the container still runs, it reconnects and skips the bytes already delivered.
class LogPump {
  private stopped = false;
  // Set once the Job has ended: a pod that is gone or never started has no more output to wait for.
  private draining = false;
  private delivered = 0;
  private current?: { controller?: AbortController; sink: Writable };
  private finished!: Promise<void>;

  constructor(private readonly o: LogPumpOptions) {}

  start(): void {
    this.finished = this.run().catch((err: unknown) => {
      this.o.log.warn(
        { jobName: this.o.jobName, err: errorMessage(err) },
        'kubernetes log stream ended with an error',
      );
    });
  }

  stop(): void {
    this.stopped = true;
    this.current?.controller?.abort();
    this.current?.sink.end();
  }

  /** Lets the stream finish on its own for up to `ms`, then stops it. */
  async drain(ms: number): Promise<void> {
    this.draining = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.finished, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
    this.stop();
    await this.finished;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const pod = newestPod(await this.o.podsOf(this.o.jobName).catch(() => []));
      const status = pod ? agentStatus(pod) : undefined;
      const waiting = status?.state?.waiting;
      if (waiting?.reason && FATAL_WAITING.has(waiting.reason)) {
        this.o.onFatal(`${waiting.reason}: ${waiting.message ?? ''}`.trim());
      }
      if (!pod?.metadata?.name || !status || (!status.state?.running && !status.state?.terminated)) {
        if (this.draining) return;
        await sleep(this.o.pollMs);
        continue;
      }
      try {
        await this.follow(pod.metadata.name);
      } catch (err) {
        this.o.log.debug(
          { jobName: this.o.jobName, err: errorMessage(err) },
          'kubernetes log request failed; retrying',
        );
        await sleep(this.o.pollMs);
        continue;
      }
      if (status.state?.terminated) return;
      const after = newestPod(await this.o.podsOf(this.o.jobName).catch(() => []));
      const st = after ? agentStatus(after)?.state : undefined;
      if (!after || !st || st.terminated) return;
      await sleep(this.o.pollMs);
    }
  }

  private follow(podName: string): Promise<void> {
    let skip = this.delivered;
    return new Promise<void>((resolve, reject) => {
      const sink = new Writable({
        write: (chunk: Buffer, _enc, cb) => {
          let data = chunk;
          if (skip > 0) {
            const n = Math.min(skip, data.length);
            skip -= n;
            data = data.subarray(n);
          }
          if (data.length > 0) {
            this.delivered += data.length;
            this.o.onStdout(data);
          }
          cb();
        },
      });
      sink.on('finish', () => resolve());
      sink.on('error', reject);
      this.current = { sink };
      if (this.stopped) return void sink.end();
      this.o.logs
        .log(this.o.namespace, podName, AGENT_CONTAINER, sink, { follow: true })
        .then((controller) => {
          if (this.current?.sink === sink) this.current.controller = controller;
          if (this.stopped) controller.abort();
        })
        .catch((err: unknown) => {
          sink.destroy();
          reject(err);
        });
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The leader election's Lease (coordination.k8s.io/v1), kept here so that one module imports the client

export interface KubeLeaseStoreOptions {
  name: string;
  namespace: string;
  kubeConfig?: KubeConfig;
  env?: Record<string, string | undefined>;
}

/** The election's Lease on the API server; a 409 (stale resourceVersion, exists already) is a LeaseConflictError. */
export function createLeaseStore(options: KubeLeaseStoreOptions): LeaseStore {
  const found = options.kubeConfig
    ? { kc: options.kubeConfig }
    : defaultKubeConfig(options.env ?? process.env);
  const api = found.kc.makeApiClient(CoordinationV1Api);
  const server = found.kc.getCurrentCluster()?.server ?? 'unknown';
  const { name, namespace } = options;
  const where = `Lease ${namespace}/${name} on ${server}`;
  const toRecord = (lease: V1Lease): LeaseRecord => ({
    ...(lease.spec?.holderIdentity !== undefined ? { holderIdentity: lease.spec.holderIdentity } : {}),
    ...(lease.spec?.leaseDurationSeconds !== undefined
      ? { leaseDurationSeconds: lease.spec.leaseDurationSeconds }
      : {}),
    ...(lease.spec?.acquireTime ? { acquireTime: new Date(lease.spec.acquireTime).toISOString() } : {}),
    ...(lease.spec?.renewTime ? { renewTime: new Date(lease.spec.renewTime).toISOString() } : {}),
    ...(lease.spec?.leaseTransitions !== undefined ? { leaseTransitions: lease.spec.leaseTransitions } : {}),
    ...(lease.metadata?.resourceVersion ? { resourceVersion: lease.metadata.resourceVersion } : {}),
  });
  const toLease = (r: LeaseRecord): V1Lease => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name,
      namespace,
      labels: { [MANAGED_BY.key]: MANAGED_BY.value },
      ...(r.resourceVersion ? { resourceVersion: r.resourceVersion } : {}),
    },
    spec: {
      holderIdentity: r.holderIdentity ?? '',
      ...(r.leaseDurationSeconds !== undefined ? { leaseDurationSeconds: r.leaseDurationSeconds } : {}),
      // MicroTime: RFC 3339 with microseconds, as the API server expects for these fields.
      ...(r.acquireTime ? { acquireTime: new V1MicroTime(r.acquireTime) } : {}),
      ...(r.renewTime ? { renewTime: new V1MicroTime(r.renewTime) } : {}),
      ...(r.leaseTransitions !== undefined ? { leaseTransitions: r.leaseTransitions } : {}),
    },
  });
  const failed = (err: unknown, what: string): Error => {
    if (httpCode(err) === 409)
      return new LeaseConflictError(`${where}: ${what} lost a race (HTTP 409 ${apiMessage(err)})`, {
        cause: err,
      });
    return classify(err, `${what} ${where}`, server);
  };
  return {
    where,
    async get() {
      if (found.missing) throw new Error(found.missing);
      try {
        return toRecord(await api.readNamespacedLease({ name, namespace }));
      } catch (err) {
        if (httpCode(err) === 404) return undefined;
        throw failed(err, 'read');
      }
    },
    async create(record) {
      try {
        return toRecord(await api.createNamespacedLease({ namespace, body: toLease(record) }));
      } catch (err) {
        throw failed(err, 'create');
      }
    },
    async update(record) {
      try {
        return toRecord(await api.replaceNamespacedLease({ name, namespace, body: toLease(record) }));
      } catch (err) {
        throw failed(err, 'update');
      }
    },
  };
}

/** The label the leader election keeps on the daemon's own pod: the Service selects `leader`. */
export const ROLE_LABEL = 'triage-runner.io/role';

export interface PodLabeler {
  /** Sets ROLE_LABEL on the daemon's pod to `role`. */
  label(role: 'leader' | 'standby'): Promise<void>;
}

/** Labels the daemon's own pod (POD_NAME in POD_NAMESPACE, from the downward API) with its role. */
export function createPodLabeler(options: {
  podName: string;
  namespace: string;
  kubeConfig?: KubeConfig;
  env?: Record<string, string | undefined>;
}): PodLabeler {
  const found = options.kubeConfig
    ? { kc: options.kubeConfig }
    : defaultKubeConfig(options.env ?? process.env);
  const core = found.kc.makeApiClient(CoreV1Api);
  const server = found.kc.getCurrentCluster()?.server ?? 'unknown';
  const { podName: name, namespace } = options;
  return {
    async label(role) {
      if (found.missing) throw new Error(found.missing);
      // A JSON patch (the client's default for patch): `add` sets the label whether or not it exists.
      const body = [{ op: 'add', path: `/metadata/labels/${ROLE_LABEL.replace('/', '~1')}`, value: role }];
      try {
        await core.patchNamespacedPod({ name, namespace, body });
      } catch (err) {
        throw classify(err, `label pod ${namespace}/${name} ${ROLE_LABEL}=${role}`, server);
      }
    },
  };
}
