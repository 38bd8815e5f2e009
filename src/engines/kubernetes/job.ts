import path from 'node:path';
import type {
  V1Container,
  V1EnvVar,
  V1Job,
  V1PodSpec,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import type { Config } from '../../config/schema.js';
import type { RunSpec } from '../types.js';
import {
  AGENT_CONTAINER,
  LABELS_ANNOTATION,
  MANAGED_BY,
  RUN_ID_ANNOTATION,
  sanitizeLabels,
} from './names.js';

// The Job manifest of a run (pure): the workspace shared through the workspaces claim by subPath,
// stdin as a file on that claim, the hardened agent container, and no credentials in the pod.

/** Where the stdin file is mounted in the agent container (read-only). */
export const STDIN_MOUNT_PATH = '/run/triage-runner/stdin';
export const WORKSPACES_VOLUME = 'workspaces';

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

/** The spec's mounts as subPaths of the claim, its tmpfs folders as memory-backed emptyDirs. */
function storage(config: Config, spec: RunSpec): { mounts: V1VolumeMount[]; volumes: V1Volume[] } {
  const k = config.kubernetes;
  const volumeRoot = volumeRootOf(config);
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
  return { mounts, volumes };
}

/**
 * The container's command: the spec's own, or, with stdin, a shell that feeds it the stdin file (the
 * wrapper only names that file, never the prompt). Adds the stdin file's mount to `mounts`.
 */
function commandOf(spec: RunSpec, parts: JobParts, mounts: V1VolumeMount[]) {
  if (parts.stdinSubPath === undefined) return { command: [spec.command], args: spec.args };
  mounts.push({
    name: WORKSPACES_VOLUME,
    mountPath: STDIN_MOUNT_PATH,
    subPath: parts.stdinSubPath,
    readOnly: true,
  });
  return {
    command: ['/bin/sh', '-c', `exec "$0" "$@" < ${STDIN_MOUNT_PATH}`],
    args: [spec.command, ...spec.args],
  };
}

/** The spec's env as values; its secretEnv as references to kubernetes.secret_name, never values. */
function envOf(config: Config, spec: RunSpec): V1EnvVar[] {
  return [
    ...Object.entries(spec.env).map(([name, value]) => ({ name, value })),
    ...Object.keys(spec.secretEnv).map((name) => ({
      name,
      valueFrom: { secretKeyRef: { name: config.kubernetes.secret_name, key: name, optional: true } },
    })),
  ];
}

function agentContainer(
  config: Config,
  spec: RunSpec,
  parts: JobParts,
  mounts: V1VolumeMount[],
): V1Container {
  const k = config.kubernetes;
  const { command, args } = commandOf(spec, parts, mounts);
  return {
    name: AGENT_CONTAINER,
    image: spec.image,
    imagePullPolicy: k.image_pull_policy,
    command,
    args,
    workingDir: spec.workdir,
    env: envOf(config, spec),
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
}

function podSpecOf(config: Config, container: V1Container, volumes: V1Volume[]): V1PodSpec {
  const k = config.kubernetes;
  return {
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
                { labelSelector: { matchLabels: k.same_node_as }, topologyKey: 'kubernetes.io/hostname' },
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
  };
}

/** Builds the Job for a run. Secret values never appear in it: secretEnv becomes secretKeyRefs. */
export function buildJob(config: Config, spec: RunSpec, parts: JobParts): V1Job {
  const k = config.kubernetes;
  const labels = { ...sanitizeLabels(spec.labels), [MANAGED_BY.key]: MANAGED_BY.value };
  const { mounts, volumes } = storage(config, spec);
  const container = agentContainer(config, spec, parts, mounts);
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
      template: { metadata: { labels }, spec: podSpecOf(config, container, volumes) },
    },
  };
}
