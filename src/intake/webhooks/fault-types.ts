// alertname -> faultType for the kube-prometheus (kubernetes-mixin) rules and the common community
// rules, onto the faultTypes the built-in `subjects:` rules know (CrashLoop, OOMKilled,
// ImagePullBackOff, Pending, FailedScheduling, FailedRollout, ProgressDeadlineExceeded). Alerts not
// listed keep their alertname as faultType. intake.webhooks.fault_types is merged over this table.

export const DEFAULT_FAULT_TYPES: Readonly<Record<string, string>> = {
  // Pods and containers
  KubePodCrashLooping: 'CrashLoop',
  KubernetesPodCrashLooping: 'CrashLoop',
  KubePodNotReady: 'Pending',
  KubernetesPodNotHealthy: 'Pending',
  KubeContainerWaiting: 'ContainerWaiting',
  KubeContainerOOMKilled: 'OOMKilled',
  KubePodOOMKilled: 'OOMKilled',
  ContainerOOMKilled: 'OOMKilled',
  KubernetesContainerOomKiller: 'OOMKilled',
  KubeContainerImagePullBackOff: 'ImagePullBackOff',
  // Workloads
  KubeDeploymentReplicasMismatch: 'FailedRollout',
  KubeDeploymentGenerationMismatch: 'FailedRollout',
  KubeDeploymentRolloutStuck: 'ProgressDeadlineExceeded',
  KubeStatefulSetReplicasMismatch: 'FailedRollout',
  KubeStatefulSetGenerationMismatch: 'FailedRollout',
  KubeStatefulSetUpdateNotRolledOut: 'FailedRollout',
  KubeDaemonSetRolloutStuck: 'FailedRollout',
  KubeDaemonSetNotScheduled: 'FailedScheduling',
  KubeDaemonSetMisScheduled: 'FailedScheduling',
  KubeJobFailed: 'JobFailed',
  KubernetesJobFailed: 'JobFailed',
  KubeJobNotCompleted: 'JobNotCompleted',
  KubeHpaMaxedOut: 'HPAMaxedOut',
  KubeHpaReplicasMismatch: 'HPAMaxedOut',
  // Storage
  KubePersistentVolumeFillingUp: 'VolumeFillingUp',
  KubePersistentVolumeInodesFillingUp: 'VolumeFillingUp',
  KubernetesVolumeOutOfDiskSpace: 'VolumeFillingUp',
  KubePersistentVolumeErrors: 'VolumeErrors',
  KubernetesPersistentvolumeclaimPending: 'Pending',
  // Nodes
  KubeNodeNotReady: 'NodeNotReady',
  KubeNodeUnreachable: 'NodeNotReady',
  KubeNodeReadinessFlapping: 'NodeNotReady',
  KubernetesNodeNotReady: 'NodeNotReady',
  KubeletDown: 'NodeNotReady',
  NodeFilesystemSpaceFillingUp: 'NodeDiskPressure',
  NodeFilesystemAlmostOutOfSpace: 'NodeDiskPressure',
  NodeMemoryMajorPagesFaults: 'NodeMemoryPressure',
  // Resources
  CPUThrottlingHigh: 'CPUThrottling',
  KubeQuotaExceeded: 'QuotaExceeded',
};

/**
 * Container waiting/termination reasons (the `reason` label of KubeContainerWaiting and friends) that
 * say more than the alertname: they become the faultType.
 */
const REASON_FAULT_TYPES: Readonly<Record<string, string>> = {
  CrashLoopBackOff: 'CrashLoop',
  ImagePullBackOff: 'ImagePullBackOff',
  ErrImagePull: 'ErrImagePull',
  InvalidImageName: 'ErrImagePull',
  CreateContainerConfigError: 'CreateContainerConfigError',
  CreateContainerError: 'CreateContainerError',
  ContainerCreating: 'Pending',
  OOMKilled: 'OOMKilled',
};

/** The faultType of an alert: the configured table, then a telling `reason` label, then the built-ins. */
export function faultTypeOf(
  alertname: string,
  labels: Readonly<Record<string, string>>,
  configured: Readonly<Record<string, string>>,
): string {
  const reason = labels.reason;
  return (
    lookup(configured, alertname) ??
    (reason !== undefined ? lookup(REASON_FAULT_TYPES, reason) : undefined) ??
    lookup(DEFAULT_FAULT_TYPES, alertname) ??
    alertname
  );
}

/** Own keys only: an alertname such as "constructor" must not find Object.prototype's. */
export const lookup = (table: Readonly<Record<string, string>>, key: string): string | undefined =>
  Object.hasOwn(table, key) ? table[key] : undefined;
