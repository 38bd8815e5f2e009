// The kubernetes engine (engine.ts) and the leader election's Lease store (lease.ts): the only modules
// that import @kubernetes/client-node. Job manifest in job.ts, names and labels in names.ts, how a pod
// gets its run's files and returns its agent's through the daemon in files/.

export { createKubernetesEngine, type KubernetesEngineOptions } from './engine.js';
export { buildJob, buildTokenSecret, filesSubPath, FILES_VOLUME, type JobParts } from './job.js';
export { podBootstrap } from './files/program.js';
export {
  AGENT_CONTAINER,
  FETCH_CONTAINER,
  MANAGED_BY,
  jobNameFor,
  sanitizeLabelKey,
  sanitizeLabelValue,
} from './names.js';
export {
  createLeaseStore,
  createPodLabeler,
  ROLE_LABEL,
  type KubeLeaseStoreOptions,
  type PodLabeler,
} from './lease.js';
