import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ModelUsage, PipelineMetrics, Readiness } from '../shared/types.js';
import { readinessWithin } from './readiness.js';

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
  /** A run's report was checked against what the run recorded (result.json `evidence.verdict`). */
  evidence(verdict: string): void;
  /** Alerts (and incidents) that reached HTTP intake, and those of them it refused, by why. */
  readonly intake: IntakeMetrics;
  /**
   * Where `triage_runner_ready{check}` comes from: asked at each scrape (the same checks as /readyz),
   * within `timeoutMs`; a scrape while no source is set reports no checks.
   */
  readinessFrom(source: () => Promise<Readiness>, timeoutMs?: number): void;
  /** The exposition text for GET /metrics. */
  render(): Promise<string>;
  readonly contentType: string;
}

/** What HTTP intake counts: `source` is alertmanager, pagerduty or incident (POST /v1/incidents). */
export interface IntakeMetrics {
  received(source: string, count?: number): void;
  /** `reason`: a short fixed word (invalid_payload, invalid_signature, missing_<label>…), never free text. */
  refused(source: string, reason: string): void;
}

const READINESS_SCRAPE_TIMEOUT_MS = 5000;

const DURATION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600];
/** A first model call's input tokens: the prompt an agent starts from, its CLI's own part included. */
const PROMPT_BUCKETS = [2000, 4000, 6000, 8000, 10_000, 12_000, 16_000, 24_000, 32_000, 64_000];
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
  const usage = modelUsageMetrics(prefix, registry);
  const health = healthMetrics(prefix, registry);
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
    modelUsage: usage,
    ...health,
    render: () => registry.metrics(),
  };
}

/** What runs' model calls cost: tokens by kind and model, calls, and each run's first call. */
function modelUsageMetrics(prefix: string, registry: Registry): (u: ModelUsage) => void {
  const tokens = new Counter({
    name: `${prefix}model_tokens_total`,
    help: "Tokens of runs' model calls as the gateway counted them, by kind (input, output, cache_read, cache_write; input includes the cached) and model",
    labelNames: ['kind', 'model'],
    registers: [registry],
  });
  const calls = new Counter({
    name: `${prefix}model_calls_total`,
    help: "Runs' model calls through the gateway, by the run's model",
    labelNames: ['model'],
    registers: [registry],
  });
  const firstInput = new Histogram({
    name: `${prefix}first_call_input_tokens`,
    help: "Input tokens of a run's first model call (the prompt its agent starts from)",
    labelNames: ['model'],
    buckets: PROMPT_BUCKETS,
    registers: [registry],
  });
  const firstCall = new Histogram({
    name: `${prefix}time_to_first_model_call_seconds`,
    help: "From a run's start to its first model call",
    buckets: STAGE_BUCKETS,
    registers: [registry],
  });
  const firstToken = new Histogram({
    name: `${prefix}time_to_first_token_seconds`,
    help: "From a run's start to the first token of its first model call's answer",
    buckets: STAGE_BUCKETS,
    registers: [registry],
  });
  return (u) => {
    const model = u.model;
    tokens.inc({ kind: 'input', model }, u.input);
    tokens.inc({ kind: 'output', model }, u.output);
    tokens.inc({ kind: 'cache_read', model }, u.cacheRead);
    tokens.inc({ kind: 'cache_write', model }, u.cacheWrite);
    calls.inc({ model }, u.calls);
    if (u.firstCallInputTokens !== undefined) firstInput.observe({ model }, u.firstCallInputTokens);
    if (u.firstModelCallMs !== undefined) firstCall.observe(u.firstModelCallMs / 1000);
    if (u.firstTokenMs !== undefined) firstToken.observe(u.firstTokenMs / 1000);
  };
}

/** What Prometheus pages on: readiness checks, cluster reachability, evidence verdicts, alerts in. */
function healthMetrics(
  prefix: string,
  registry: Registry,
): Pick<DaemonMetrics, 'clusterReachable' | 'evidence' | 'intake' | 'readinessFrom'> {
  let source: { read: () => Promise<Readiness>; timeoutMs: number } | undefined;
  new Gauge({
    name: `${prefix}ready`,
    help: 'Each /readyz check at the scrape: 1 ok (degraded included), 0 not ready',
    labelNames: ['check'],
    registers: [registry],
    async collect() {
      if (!source) return;
      const r = await readinessWithin(source.read, source.timeoutMs);
      this.reset();
      for (const c of r.checks) this.set({ check: c.name }, c.ok ? 1 : 0);
    },
  });
  const reachable = new Gauge({
    name: `${prefix}cluster_reachable`,
    help: "1 when the cluster registry entry's last access check reached its API server, else 0",
    labelNames: ['cluster'],
    registers: [registry],
  });
  const evidence = new Counter({
    name: `${prefix}evidence_total`,
    help: "Runs' reports checked against their recorded calls, by verdict (grounded, partial, ungrounded)",
    labelNames: ['verdict'],
    registers: [registry],
  });
  const received = new Counter({
    name: `${prefix}alerts_received_total`,
    help: 'Alerts (and incidents) that reached HTTP intake, by source',
    labelNames: ['source'],
    registers: [registry],
  });
  const refused = new Counter({
    name: `${prefix}alerts_refused_total`,
    help: 'Alerts (and incidents) HTTP intake refused, by source and reason',
    labelNames: ['source', 'reason'],
    registers: [registry],
  });
  return {
    clusterReachable: (cluster, ok) => reachable.set({ cluster }, ok ? 1 : 0),
    evidence: (verdict) => evidence.inc({ verdict }),
    intake: {
      received: (s, count = 1) => received.inc({ source: s }, count),
      refused: (s, reason) => refused.inc({ source: s, reason }),
    },
    readinessFrom: (read, timeoutMs = READINESS_SCRAPE_TIMEOUT_MS) => (source = { read, timeoutMs }),
  };
}
