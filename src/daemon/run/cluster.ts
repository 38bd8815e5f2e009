import { kubeconfigFor } from '../../clusters/access.js';
import {
  clusterRecord,
  clusterRegistry,
  type ClusterEntry,
  type ClusterRecord,
} from '../../clusters/registry.js';
import type { PipelineEnv, RunContext } from './context.js';

// Which cluster a run investigates: the registry entry its incident's cluster (or alias) names, or the
// one a replay points it at. The triage script and the run's kubectl broker are given that entry's
// KUBECONFIG (and context) and nothing else; result.json and the audit name the entry, never its
// credentials. Decided once while preparing and carried on the run as data.

export interface RunCluster {
  entry: ClusterEntry;
  /** False without `clusters:` (the single kubeconfig): call records then name no entry, as before. */
  configured: boolean;
  /** What result.json and the audit record. */
  record: ClusterRecord & { unreachable?: string };
  /** KUBECONFIG for the triage script and the broker's kubectl; undefined: kubectl's default. */
  kubeconfig?: string;
}

/** The incident's cluster (or the override) is not in the registry: the run fails with the known names. */
export class ClusterRouteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClusterRouteError';
  }
}

/**
 * Routes the run in `ctx` to its registry entry and writes the entry's context file into `dir` (the
 * run bundle). With a health tracker, an entry that cannot be reached is noted: the run goes on (its
 * report will say what it could not see) and result.json carries the gap.
 */
export async function routeRun(env: PipelineEnv, ctx: RunContext, dir: string): Promise<RunCluster> {
  const { incident } = ctx.request.workspace;
  const override = ctx.request.overrides?.cluster;
  const registry = env.clusters ?? clusterRegistry(env.config);
  const own = registry.resolveCluster(incident.cluster);
  const route = override === undefined ? own : registry.resolveCluster(override);
  if ('rejected' in route)
    throw new ClusterRouteError(override ? `the run's chosen cluster: ${route.rejected}` : route.rejected);
  // A replay on the entry the incident routes to anyway records how it got there; another is an override.
  const moved = !('entry' in own) || own.entry.name !== route.entry.name;
  const record: RunCluster['record'] = moved
    ? { ...clusterRecord(route, incident.cluster), routedBy: 'override' }
    : clusterRecord(own, incident.cluster);
  const kubeconfig = await kubeconfigFor(route.entry, dir, env.env.HOME);
  if (registry.configured && env.clusterHealth) {
    const state = await env.clusterHealth.of(route.entry.name);
    if (!state.reachable) record.unreachable = env.redactor.redact(state.detail ?? 'unreachable');
  }
  return {
    entry: route.entry,
    configured: registry.configured,
    record,
    ...(kubeconfig ? { kubeconfig } : {}),
  };
}
