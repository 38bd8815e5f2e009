import type { ClusterAccessMonitor } from '../../clusters/access.js';
import type { Readiness } from '../types.js';
import type { PipelineEnv, RunContext } from './context.js';

// Cluster access, joined to the pipeline: a /readyz check per cluster, and a run marked unreachable
// from its start when its cluster cannot be reached (it still runs: the preloaded data may be enough).

/** One readiness check per cluster, named `cluster:<name>`; an unreachable cluster degrades the daemon, runs go on. */
export async function clusterChecks(monitor: ClusterAccessMonitor | undefined): Promise<Readiness['checks']> {
  if (!monitor) return [];
  const all = await monitor.readiness();
  return all.map((access) => ({
    name: `cluster:${access.name}`,
    ok: true,
    ...(access.reachable
      ? {}
      : { degraded: true, detail: `${access.detail ?? 'unreachable'}; runs go on, marked unreachable` }),
  }));
}

/** Records on the run whether its cluster can be reached; an unreachable one is a known gap. */
export async function markClusterAccess(env: PipelineEnv, ctx: RunContext): Promise<void> {
  if (!env.clusters) return;
  const access = await env.clusters.forRun(ctx.request.workspace.incident.cluster);
  ctx.cluster = {
    name: access.name,
    reachable: access.reachable,
    ...(access.detail ? { detail: access.detail } : {}),
  };
  if (access.reachable) return;
  ctx.knownGaps = [
    ...(ctx.knownGaps ?? []),
    `${access.detail ?? `cluster ${access.name} cannot be reached`} (checked ${access.checkedAt})`,
  ];
  ctx.log.warn(
    { cluster: access.name, detail: access.detail },
    'the cluster cannot be reached; the run goes on, marked',
  );
}

/** What the agent is told in the permissions section when its cluster cannot be reached. */
export function clusterNotice(ctx: RunContext): string | undefined {
  if (!ctx.cluster || ctx.cluster.reachable) return undefined;
  return `CLUSTER UNREACHABLE: the daemon could not reach cluster ${ctx.cluster.name} when this run started (${ctx.cluster.detail ?? 'no detail'}). kubectl calls are expected to fail: reason from the preloaded data, and say in the report that the cluster could not be reached and what could not be checked.`;
}
