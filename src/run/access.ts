import type { ClusterAccessMonitor } from '../clusters/monitor.js';
import type { PrometheusMonitor } from '../prometheus/monitor.js';
import type { Workspace } from '../workspace/incident.js';
import { errorMessage } from '../util/errors.js';
import type { Readiness } from './types.js';
import type { PipelineEnv } from './env.js';
import type { RunAccess } from './cluster.js';
import type { RunStart } from './stages.js';

// Cluster access, joined to the pipeline: a /readyz check per cluster, and a run marked unreachable
// from its start when its cluster cannot be reached (it still runs: the preloaded data may be enough).

/** A check that something the runs read can be reached: never failing, degraded while it cannot. */
function reachCheck(
  name: string,
  reachable: boolean,
  detail: string | undefined,
  down: string,
): Readiness['checks'][number] {
  if (!reachable) return { name, ok: true, degraded: true, detail: down };
  return { name, ok: true, ...(detail !== undefined ? { detail } : {}) };
}

/**
 * One readiness check per cluster (`cluster:<name>`) and per Prometheus endpoint
 * (`prometheus:<cluster>`): one that cannot be reached degrades the daemon, and runs go on.
 */
export async function accessChecks(
  clusters: ClusterAccessMonitor | undefined,
  prometheus: PrometheusMonitor | undefined,
): Promise<Readiness['checks']> {
  const down = (detail: string, what: string) => `${detail}; runs go on, ${what}`;
  return [
    ...((await clusters?.readiness()) ?? []).map((a) =>
      reachCheck(
        `cluster:${a.name}`,
        a.reachable,
        undefined,
        down(a.detail ?? 'unreachable', 'marked unreachable'),
      ),
    ),
    ...((await prometheus?.current()) ?? []).map((a) =>
      reachCheck(
        `prometheus:${a.cluster}`,
        a.reachable,
        a.detail,
        down(`${a.detail}`, 'their promql calls fail'),
      ),
    ),
  ];
}

/** Whether the run's cluster can be reached now; undefined when the check is off. */
export async function clusterAccess(env: PipelineEnv, start: RunStart): Promise<RunAccess | undefined> {
  if (!env.clusterAccess) return undefined;
  // The registry entry the run was routed to (an alias names its entry); else the incident's own name.
  const routed = start.cluster && 'entry' in start.cluster ? start.cluster.entry.name : undefined;
  const access = await env.clusterAccess.forRun(routed ?? start.request.workspace.incident.cluster);
  const cluster = {
    name: access.name,
    reachable: access.reachable,
    ...(access.detail ? { detail: access.detail } : {}),
  };
  if (access.reachable) return { cluster, knownGaps: [] };
  start.log.warn(
    { cluster: access.name, detail: access.detail },
    'the cluster cannot be reached; the run goes on, marked',
  );
  return {
    cluster,
    knownGaps: [
      `${access.detail ?? `cluster ${access.name} cannot be reached`} (checked ${access.checkedAt})`,
    ],
  };
}

/** What the agent is told in the permissions section when its cluster cannot be reached. */
export function clusterNotice(access: RunAccess | undefined): string | undefined {
  if (!access || access.cluster.reachable) return undefined;
  const { name, detail } = access.cluster;
  return `CLUSTER UNREACHABLE: the daemon could not reach cluster ${name} when this run started (${detail ?? 'no detail'}). kubectl calls are expected to fail: reason from the preloaded data, and say in the report that the cluster could not be reached and what could not be checked.`;
}

/**
 * The workspace as the context sees it: with no producer's permissions file, the permissions the daemon
 * probed (cached per cluster and namespace), marked as probed. A producer's file is used unchanged.
 */
export async function withProbedPermissions(env: PipelineEnv, start: RunStart): Promise<Workspace> {
  const { workspace } = start.request;
  if (
    workspace.permissionsText !== undefined ||
    !env.clusterAccess ||
    start.access?.cluster.reachable !== true
  )
    return workspace;
  try {
    const probed = await env.clusterAccess.permissions(
      start.access.cluster.name,
      workspace.incident.namespace,
    );
    await start.audit('permissions_probed', { cluster: probed.cluster_name, namespace: probed.namespace });
    return { ...workspace, permissionsText: `${JSON.stringify(probed, null, 2)}\n` };
  } catch (err) {
    start.log.warn({ err: errorMessage(err) }, 'could not probe the cluster permissions');
    return workspace;
  }
}
