import {
  runToolCall,
  type BrokeredTool,
  type ToolCall,
  type ToolResult,
} from '../kubectl/broker/tool-call.js';
import type { ToolPolicy } from '../kubectl/policy/policy.js';
import type { ClusterCallRecord } from '../kubectl/broker/calls.js';
import type { CapturedOutput } from '../kubectl/broker/outputs.js';
import type { EndpointResolution } from '../prometheus/endpoint.js';
import { limitsOf, promqlTool } from '../prometheus/tool.js';
import type { PromqlLimits } from '../prometheus/types.js';
import type { RunRequest } from './types.js';
import { routedCluster, type ClusterChoice } from './cluster.js';
import type { PipelineEnv } from './env.js';

// The run's Prometheus, joined to the pipeline: its own cluster's endpoint (credentials resolved by the
// daemon, never the agent's), or the stand-in an eval points it at (RunOverrides.prometheus, with the
// frozen clock); the `promql` its broker serves, and what the triage step preloads for an alert.

/** What the triage step's promql needs of the run's guard (its policy, Prometheus and call record). */
export interface PromqlGuard {
  policy: ToolPolicy;
  prometheus?: RunPrometheus;
  record(record: ClusterCallRecord, output?: CapturedOutput): Promise<void>;
}

export interface RunPrometheus {
  /** The run's cluster (registry entry name). */
  cluster: string;
  /** Its endpoint; undefined when none is configured. */
  endpoint: EndpointResolution | undefined;
  limits: PromqlLimits;
  /** The clock the calls' relative times resolve against (an eval's frozen time). */
  now: () => Date;
}

type RunOf = { cluster?: ClusterChoice; request: Pick<RunRequest, 'workspace' | 'overrides'> };

/** The clock of a stand-in frozen at `at`: every call asks at that time (its answers were recorded then). */
const frozenClock =
  (at: string): (() => Date) =>
  () =>
    new Date(at);

/** The run's Prometheus (the run's cluster must route; throws ClusterRouteError as the guard does). */
export function runPrometheus(env: PipelineEnv, run: RunOf): RunPrometheus {
  const cluster = routedCluster(env, run).entry.name;
  const limits = limitsOf(env.config.promql);
  const override = run.request.overrides?.prometheus;
  if (override)
    return {
      cluster,
      endpoint: { ok: true, endpoint: { cluster, url: new URL(override.url), tls: {} } },
      limits,
      now: override.now ? frozenClock(override.now) : env.now,
    };
  return { cluster, endpoint: env.prometheus?.get(cluster), limits, now: env.now };
}

/** The `promql` the run's broker serves. */
export function runPromqlTool(prometheus: RunPrometheus): BrokeredTool {
  return promqlTool({
    endpoint: prometheus.endpoint,
    cluster: prometheus.cluster,
    limits: prometheus.limits,
    now: prometheus.now,
  });
}

/** One promql call made by the daemon itself (not the agent's), decided by the persona's policy. */
export function daemonPromqlCall(
  prometheus: RunPrometheus | undefined,
  policy: ToolPolicy,
  argv: string[],
  signal: AbortSignal,
  now: () => Date,
): Promise<ToolCall> {
  return runToolCall(
    {
      tool: prometheus ? runPromqlTool(prometheus) : undefined,
      policy,
      by: 'triage',
      now,
      acquire: async () => true,
      release: () => undefined,
    },
    argv,
    signal,
  );
}

/**
 * One promql call of the triage step (the alert's expression preloaded), decided by the persona's
 * policy and run by the daemon as the broker would, recorded `by: triage` beside the agent's calls.
 */
export async function triagePromql(
  guard: PromqlGuard,
  argv: string[],
  signal: AbortSignal,
  now: () => Date,
): Promise<ToolResult> {
  const call = await daemonPromqlCall(guard.prometheus, guard.policy, argv, signal, now);
  await guard.record(call.record, call.output);
  return call.result;
}
