import { kubeconfigValue, writeContextFile } from '../clusters/access.js';
import {
  clusterRecord,
  clusterRegistry,
  type ClusterEntry,
  type ClusterRecord,
} from '../clusters/registry.js';
import type { RunRequest } from './types.js';
import type { PipelineEnv } from './env.js';

// Which cluster a run investigates: the registry entry its incident's cluster (or alias) names, or the
// one a replay points it at. Chosen once when the run begins and carried on it as data; the triage
// script and the run's kubectl broker get that entry's KUBECONFIG (and context) and nothing else;
// result.json and the audit name the entry, never its credentials.

/** The run's cluster as the daemon found it when the run began, and the gaps known from the start. */
export interface RunAccess {
  cluster: { name: string; reachable: boolean; detail?: string };
  knownGaps: string[];
}

export interface RunCluster {
  entry: ClusterEntry;
  /** False without `clusters:` (the single kubeconfig): nothing is recorded, as before the registry. */
  configured: boolean;
  /** What result.json and the audit record; `unreachable` is filled in while preparing. */
  record: ClusterRecord & { unreachable?: string };
}

/** The entry for the run, or why there is none (the run then fails while preparing, naming the known ones). */
export type ClusterChoice = RunCluster | { rejected: string };

/** The incident's cluster (or the chosen one) is not in the registry. */
export class ClusterRouteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClusterRouteError';
  }
}

/** Routes `request` through the registry (pure). */
export function chooseCluster(
  env: PipelineEnv,
  request: Pick<RunRequest, 'workspace' | 'overrides'>,
): ClusterChoice {
  const { incident } = request.workspace;
  const override = request.overrides?.cluster;
  const registry = env.clusters ?? clusterRegistry(env.config);
  const own = registry.resolveCluster(incident.cluster);
  const route = override === undefined ? own : registry.resolveCluster(override);
  if ('rejected' in route)
    return { rejected: override ? `the run's chosen cluster: ${route.rejected}` : route.rejected };
  // A replay on the entry the incident routes to anyway records how it got there; another is an override.
  const same = 'entry' in own && own.entry.name === route.entry.name;
  return {
    entry: route.entry,
    configured: registry.configured,
    record: same
      ? clusterRecord(own, incident.cluster)
      : { ...clusterRecord(route, incident.cluster), routedBy: 'override' },
  };
}

/** The run's entry; throws ClusterRouteError for a rejected choice. */
export function routedCluster(
  env: PipelineEnv,
  start: { cluster?: ClusterChoice; request: Pick<RunRequest, 'workspace' | 'overrides'> },
): RunCluster {
  const choice = start.cluster ?? chooseCluster(env, start.request);
  if ('rejected' in choice) throw new ClusterRouteError(choice.rejected);
  return choice;
}

/** KUBECONFIG for the run's triage script and broker (the bundle's context file first); undefined: kubectl's default. */
export function runKubeconfig(env: PipelineEnv, cluster: RunCluster, bundleDir: string): string | undefined {
  return kubeconfigValue(cluster.entry, bundleDir, env.env.HOME);
}

/**
 * Makes the run's cluster access ready in its bundle: the context file written and a registry entry
 * the access check found unreachable when the run began (`access`, src/clusters/monitor.ts) noted on
 * the record (the run goes on; result.json carries the gap). Returns the KUBECONFIG value.
 */
export async function prepareClusterAccess(
  env: PipelineEnv,
  cluster: RunCluster,
  bundleDir: string,
  access?: RunAccess,
): Promise<string | undefined> {
  await writeContextFile(cluster.entry, bundleDir);
  if (cluster.configured && access && !access.cluster.reachable)
    cluster.record.unreachable = env.redactor.redact(access.cluster.detail ?? 'unreachable');
  return runKubeconfig(env, cluster, bundleDir);
}
