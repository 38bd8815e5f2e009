import type {
  V1Container,
  V1EnvVar,
  V1Job,
  V1PodSpec,
  V1SecurityContext,
  V1Toleration,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import type { Config } from '../../config/schema.js';
import type { RunSpec } from '../types.js';
import {
  ENV,
  POD_FILES_ROOT,
  PROGRAM_MOUNT,
  PROGRAM_SUBPATH,
  STDIN_PATH,
  TOKEN_KEY,
  TOKEN_MOUNT,
} from './files/protocol.js';
import {
  AGENT_CONTAINER,
  FETCH_CONTAINER,
  LABELS_ANNOTATION,
  MANAGED_BY,
  RUN_ID_ANNOTATION,
  sanitizeLabels,
} from './names.js';

// The Job manifest of a run (pure). The pod mounts no volume of the daemon's, so it runs on any node
// the configuration allows: an init container fetches the run's files from the daemon (its Service
// port, the run's files token from a Secret of the run's own) into an emptyDir, and the agent container
// mounts each of the run's mounts from there by subPath (its target's path), read-only but for the
// folders the agent writes, whose contents the program in front of the CLI returns to the daemon.
// Stdin is a file there too. No credential is in the spec.

export const FILES_VOLUME = 'run-files';
const TOKEN_VOLUME = 'run-token';

export interface JobParts {
  jobName: string;
  /** The init container's script (files/program.ts `podBootstrap`). */
  bootstrap: string;
  /** The daemon as the pod reaches it (kubernetes.broker.url). */
  daemonUrl: string;
}

/** The Secret holding the run's files token; named like its Job. */
export const tokenSecretName = (jobName: string): string => jobName;

/** A path of the pod's as a subPath of the files emptyDir (a target, without its leading `/`). */
export const filesSubPath = (target: string): string => target.replace(/^\/+/, '');

const HARDENED = (config: Config): V1SecurityContext => ({
  runAsNonRoot: true,
  runAsUser: config.kubernetes.run_as_user,
  runAsGroup: config.kubernetes.run_as_user,
  allowPrivilegeEscalation: false,
  privileged: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
});

/** The spec's mounts as subPaths of the files emptyDir, its tmpfs folders as memory-backed emptyDirs. */
function storage(
  config: Config,
  spec: RunSpec,
  jobName: string,
): { mounts: V1VolumeMount[]; volumes: V1Volume[] } {
  const k = config.kubernetes;
  const mounts: V1VolumeMount[] = spec.mounts.map((m) => ({
    name: FILES_VOLUME,
    mountPath: m.target,
    subPath: filesSubPath(m.target),
    readOnly: m.readOnly,
  }));
  mounts.push(
    { name: FILES_VOLUME, mountPath: PROGRAM_MOUNT, subPath: PROGRAM_SUBPATH, readOnly: true },
    { name: TOKEN_VOLUME, mountPath: TOKEN_MOUNT, readOnly: true },
  );
  if (spec.stdin.length > 0)
    mounts.push({
      name: FILES_VOLUME,
      mountPath: STDIN_PATH,
      subPath: filesSubPath(STDIN_PATH),
      readOnly: true,
    });
  const volumes: V1Volume[] = [
    { name: FILES_VOLUME, emptyDir: { sizeLimit: k.run_files.size_limit } },
    // Group-readable: the pod runs with fsGroup, which the kubelet gives the Secret's files.
    { name: TOKEN_VOLUME, secret: { secretName: tokenSecretName(jobName), defaultMode: 0o440 } },
  ];
  spec.tmpfs.forEach((target, i) => {
    const name = `tmpfs-${i}`;
    volumes.push({ name, emptyDir: { medium: 'Memory', sizeLimit: k.tmpfs_size } });
    mounts.push({ name, mountPath: target });
  });
  return { mounts, volumes };
}

const tokenFile = `${TOKEN_MOUNT}/${TOKEN_KEY}`;

/** The init container: fetches the run's files into the emptyDir. */
function fetchContainer(config: Config, spec: RunSpec, parts: JobParts): V1Container {
  const k = config.kubernetes;
  return {
    name: FETCH_CONTAINER,
    image: spec.image,
    imagePullPolicy: k.image_pull_policy,
    command: ['node', '--input-type=module', '-e', parts.bootstrap],
    env: [
      { name: ENV.url, value: parts.daemonUrl },
      { name: ENV.tokenFile, value: tokenFile },
      { name: ENV.root, value: POD_FILES_ROOT },
    ],
    resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: k.cpu, memory: '256Mi' } },
    securityContext: HARDENED(config),
    volumeMounts: [
      { name: FILES_VOLUME, mountPath: POD_FILES_ROOT },
      { name: TOKEN_VOLUME, mountPath: TOKEN_MOUNT, readOnly: true },
    ],
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
}

/**
 * The agent container's command: the returning program in front of the spec's own, which, with stdin,
 * is fed the stdin file by a shell (the wrapper only names that file, never the prompt).
 */
function commandOf(spec: RunSpec): { command: string[]; args: string[] } {
  const cli =
    spec.stdin.length === 0
      ? [spec.command, ...spec.args]
      : ['/bin/sh', '-c', `exec "$0" "$@" < ${STDIN_PATH}`, spec.command, ...spec.args];
  return { command: ['node', `${PROGRAM_MOUNT}/sync.js`, '--'], args: cli };
}

/** The spec's env as values; its secretEnv as references to kubernetes.secret_name, never values. */
function envOf(config: Config, spec: RunSpec, parts: JobParts): V1EnvVar[] {
  const k = config.kubernetes;
  return [
    ...Object.entries(spec.env).map(([name, value]) => ({ name, value })),
    ...Object.keys(spec.secretEnv).map((name) => ({
      name,
      valueFrom: { secretKeyRef: { name: k.secret_name, key: name, optional: true } },
    })),
    { name: ENV.url, value: parts.daemonUrl },
    { name: ENV.tokenFile, value: tokenFile },
    { name: ENV.outputs, value: JSON.stringify(spec.mounts.filter((m) => !m.readOnly).map((m) => m.target)) },
    { name: ENV.intervalMs, value: String(k.run_files.sync_interval) },
    { name: ENV.maxOutputBytes, value: String(k.run_files.max_output_bytes) },
    // The last upload fits in the stop's grace period (the kubelet's SIGKILL comes after it).
    { name: ENV.finalMs, value: String(Math.max(1000, config.agent.stop_grace - 1000)) },
  ];
}

function agentContainer(
  config: Config,
  spec: RunSpec,
  parts: JobParts,
  mounts: V1VolumeMount[],
): V1Container {
  const k = config.kubernetes;
  return {
    name: AGENT_CONTAINER,
    image: spec.image,
    imagePullPolicy: k.image_pull_policy,
    ...commandOf(spec),
    workingDir: spec.workdir,
    env: envOf(config, spec, parts),
    resources: {
      requests: { cpu: k.cpu_request, memory: k.memory_request },
      limits: { cpu: k.cpu, memory: k.memory },
    },
    securityContext: HARDENED(config),
    volumeMounts: mounts,
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
}

const tolerationsOf = (config: Config): V1Toleration[] =>
  config.kubernetes.tolerations.map((t) => ({
    ...(t.key !== undefined ? { key: t.key } : {}),
    operator: t.operator,
    ...(t.value !== undefined ? { value: t.value } : {}),
    ...(t.effect !== undefined ? { effect: t.effect } : {}),
    ...(t.toleration_seconds !== undefined ? { tolerationSeconds: t.toleration_seconds } : {}),
  }));

function podSpecOf(
  config: Config,
  containers: { init: V1Container; agent: V1Container },
  volumes: V1Volume[],
): V1PodSpec {
  const k = config.kubernetes;
  return {
    restartPolicy: 'Never',
    serviceAccountName: k.service_account,
    // With the kubectl guard the agent holds no credentials: its kubectl goes through the daemon. Without
    // it the agent investigates with its own token and the read-only view role.
    automountServiceAccountToken: !config.kubectl.guard,
    ...(Object.keys(k.node_selector).length > 0 ? { nodeSelector: k.node_selector } : {}),
    ...(k.tolerations.length > 0 ? { tolerations: tolerationsOf(config) } : {}),
    enableServiceLinks: false,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: k.run_as_user,
      runAsGroup: k.run_as_user,
      fsGroup: k.fs_group,
      fsGroupChangePolicy: 'OnRootMismatch',
      supplementalGroups: [k.fs_group],
      seccompProfile: { type: 'RuntimeDefault' },
    },
    initContainers: [containers.init],
    containers: [containers.agent],
    volumes,
  };
}

/** Builds the Job for a run. Secret values never appear in it: secretEnv becomes secretKeyRefs, the token a Secret volume. */
export function buildJob(config: Config, spec: RunSpec, parts: JobParts): V1Job {
  const k = config.kubernetes;
  const labels = { ...sanitizeLabels(spec.labels), [MANAGED_BY.key]: MANAGED_BY.value };
  const { mounts, volumes } = storage(config, spec, parts.jobName);
  const init = fetchContainer(config, spec, parts);
  const agent = agentContainer(config, spec, parts, mounts);
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
      template: { metadata: { labels }, spec: podSpecOf(config, { init, agent }, volumes) },
    },
  };
}

/** The Secret of a run's files token (the token's value only here: never in the Job). */
export function buildTokenSecret(config: Config, spec: RunSpec, jobName: string, token: string) {
  const labels = { ...sanitizeLabels(spec.labels), [MANAGED_BY.key]: MANAGED_BY.value };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name: tokenSecretName(jobName),
      namespace: config.kubernetes.namespace,
      labels,
      annotations: { [RUN_ID_ANNOTATION]: spec.runId },
    },
    data: { [TOKEN_KEY]: Buffer.from(token, 'utf8').toString('base64') },
  };
}
