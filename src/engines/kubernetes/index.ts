// The kubernetes engine (engine.ts) and the leader election's Lease store (lease.ts): the only modules
// that import @kubernetes/client-node. Job manifest in job.ts, names and labels in names.ts.

export { createKubernetesEngine, type KubernetesEngineOptions } from './engine.js';
export { buildJob, subPathFor, volumeRootOf, STDIN_MOUNT_PATH, type JobParts } from './job.js';
export { AGENT_CONTAINER, MANAGED_BY, jobNameFor, sanitizeLabelKey, sanitizeLabelValue } from './names.js';
export {
  createLeaseStore,
  createPodLabeler,
  ROLE_LABEL,
  type KubeLeaseStoreOptions,
  type PodLabeler,
} from './lease.js';
