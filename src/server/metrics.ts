import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PipelineMetrics } from '../shared/types.js';

// The daemon's Prometheus metrics on a registry of its own (never prom-client's global one).

export type IncidentOutcome =
  'succeeded' | 'failed' | 'rejected' | 'duplicate' | 'deferred' | 'interrupted' | 'retried';

export interface DaemonMetrics extends PipelineMetrics {
  readonly registry: Registry;
  incident(outcome: IncidentOutcome): void;
  queueDepth(depth: number): void;
  inFlight(count: number): void;
  /** A run ended; `cluster` is the registry entry it used (`none` when it ended before routing). */
  runDuration(seconds: number, status: string, cluster?: string): void;
  /** A pass over the workspaces root finished (start-up or rescan); `failed` when it could not list it. */
  workspaceScan(outcome: 'ok' | 'failed'): void;
  /** The exposition text for GET /metrics. */
  render(): Promise<string>;
  readonly contentType: string;
}

const DURATION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];
const STAGE_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900];

export function createMetrics(prefix = 'triage_runner_'): DaemonMetrics {
  const registry = new Registry();
  const incidents = new Counter({
    name: `${prefix}incidents_total`,
    help: 'Incidents by outcome (succeeded, failed, rejected, duplicate, deferred, interrupted, retried)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const depth = new Gauge({
    name: `${prefix}queue_depth`,
    help: 'Incidents waiting in the run queue',
    registers: [registry],
  });
  const inFlight = new Gauge({
    name: `${prefix}runs_in_flight`,
    help: 'Runs preparing or running now',
    registers: [registry],
  });
  const runs = new Histogram({
    name: `${prefix}run_duration_seconds`,
    help: 'Wall time of a run from claim to final state',
    labelNames: ['status'],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const runsByCluster = new Counter({
    name: `${prefix}runs_total`,
    help: 'Runs ended, by status and by the cluster registry entry they investigated',
    labelNames: ['status', 'cluster'],
    registers: [registry],
  });
  const stages = new Histogram({
    name: `${prefix}stage_duration_seconds`,
    help: 'Wall time of a pipeline stage',
    labelNames: ['stage'],
    buckets: STAGE_BUCKETS,
    registers: [registry],
  });
  const scans = new Counter({
    name: `${prefix}workspace_scans_total`,
    help: 'Passes over the workspaces root (start-up and rescans), by outcome',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const triageTimeouts = new Counter({
    name: `${prefix}triage_timeouts_total`,
    help: 'Triage scripts stopped at their timeout',
    registers: [registry],
  });
  const truncations = new Counter({
    name: `${prefix}context_truncations_total`,
    help: 'Prompt sections truncated to fit the token budget',
    labelNames: ['section'],
    registers: [registry],
  });
  const modelCaps = new Counter({
    name: `${prefix}model_budget_caps_total`,
    help: 'Runs stopped by the model gateway at a spend cap',
    labelNames: ['cap'],
    registers: [registry],
  });
  const modelRetries = new Counter({
    name: `${prefix}model_retries_total`,
    help: 'Provider 429/529 answers the model gateway retried',
    labelNames: ['provider'],
    registers: [registry],
  });
  return {
    registry,
    contentType: registry.contentType,
    incident: (outcome) => incidents.inc({ outcome }),
    queueDepth: (n) => depth.set(n),
    inFlight: (n) => inFlight.set(n),
    runDuration: (seconds, status, cluster) => {
      runs.observe({ status }, seconds);
      runsByCluster.inc({ status, cluster: cluster ?? 'none' });
    },
    workspaceScan: (outcome) => scans.inc({ outcome }),
    stage: (stage, seconds) => stages.observe({ stage }, seconds),
    triageTimeout: () => triageTimeouts.inc(),
    truncation: (section) => truncations.inc({ section }),
    modelCapReached: (cap) => modelCaps.inc({ cap }),
    modelRetry: (provider) => modelRetries.inc({ provider }),
    render: () => registry.metrics(),
  };
}
