import { clusterRegistry, type ClusterEntry } from '../clusters/registry.js';
import type { PodBroker } from '../kubectl/broker/pod-broker.js';
import { hostname } from 'node:os';
import type { SkillsCache } from '../context/skills-cache.js';
import type { AgentAdapter } from '../agents/types.js';
import type { AuditLog } from '../audit/log.js';
import type { AgentName, Config, EngineName } from '../config/schema.js';
import { createEngine } from '../engines/index.js';
import { createGatewayHost, listenerLimits, type GatewayHost } from '../gateway/host.js';
import { PROVIDER_IDS } from '../gateway/types.js';
import { modelSpendPath } from '../workspace/layout.js';
import type { Engine } from '../engines/types.js';
import type { Logger } from '../log/logger.js';
import type { Redactor } from '../log/redact.js';
import { ACCESS_TIMEOUT_MS, ClusterAccessMonitor } from '../clusters/monitor.js';
import { errorMessage } from '../util/errors.js';
import type { PipelineMetrics, RunExecutor } from './types.js';
import type { EndpointResolution } from '../prometheus/endpoint.js';
import { PrometheusMonitor } from '../prometheus/monitor.js';
import { auditFor } from './audit.js';
import type { PipelineEnv, SkillsCacheLike } from './env.js';
import type { PreviewRequest } from './preview.js';
import type { BuiltContext } from '../context/build.js';
import { readiness } from './readiness.js';
import { adoptRun, runPipeline } from './run.js';
import { sweep } from './sweep.js';

// The run executor: the pipeline's dependencies (engines made on demand, the skills cache, the agent
// adapters) and what the daemon asks of it — run, adopt, readiness, sweep, close. The stages of a run
// are in run.ts (see stages.ts); the daemon records the state transitions from `request.onStage`.

export type { SkillsCacheLike } from './env.js';

export interface ExecutorDeps {
  config: Config;
  log: Logger;
  redactor: Redactor;
  secrets: Record<string, string>;
  audit: AuditLog;
  metrics?: PipelineMetrics;
  env: Record<string, string | undefined>;
  /** The engine for `config.engine` (others named by overrides are created on demand). */
  engine?: Engine;
  skills?: SkillsCacheLike;
  /** Goes into the daemon label of every run; default: the host name. */
  daemonId?: string;
  /** Each cluster's Prometheus endpoint, credentials resolved (src/prometheus/endpoint.ts); never an agent's. */
  prometheus?: ReadonlyMap<string, EndpointResolution>;
  /** Adapter lookup (tests inject a fake); default: the registry in src/agents/index.ts. */
  agents?: (name: AgentName) => AgentAdapter;
  now?: () => Date;
}

export { SWEEP_MIN_AGE_MS } from './sweep.js';

/** A skills cache of our own (none injected): loaded when first needed, its refresh timer stopped at close. */
function ownSkillsCache(config: Config, log: Logger): SkillsCacheLike {
  let cache: Promise<SkillsCache> | undefined;
  const open = () => {
    cache ??= import('../context/skills-cache.js').then(({ SkillsCache }) => {
      const c = new SkillsCache({ config, log });
      c.start().catch((err: unknown) => log.error({ err: errorMessage(err) }, 'skills sync failed'));
      return c;
    });
    return cache;
  };
  return {
    acquire: async () => (await open()).acquire(),
    readiness: async () => (await open()).readiness(),
    stop: async () => (await cache)?.stop(),
  };
}

/** The cluster access monitor of an executor: started with the first readiness check (the daemon's start). */
function clusterMonitor(config: Config, deps: ExecutorDeps, entries: ClusterEntry[]): ClusterAccessMonitor {
  return new ClusterAccessMonitor({
    entries,
    kubectl: {
      command: config.kubectl.command,
      env: deps.env,
      cwd: config.workspaces_root,
      timeoutMs: ACCESS_TIMEOUT_MS,
    },
    ...(deps.now ? { now: deps.now } : {}),
    onChange: (access) => {
      deps.metrics?.clusterReachable?.(access.name, access.reachable);
      if (access.reachable) deps.log.info({ cluster: access.name }, 'cluster reachable');
      else deps.log.warn({ cluster: access.name, detail: access.detail }, 'cluster cannot be reached');
    },
  });
}

/** The Prometheus endpoints' check for /readyz, its changes logged. */
function prometheusMonitor(
  deps: ExecutorDeps,
  endpoints: ReadonlyMap<string, EndpointResolution>,
): PrometheusMonitor {
  return new PrometheusMonitor(endpoints, deps.now, (access) =>
    access.reachable
      ? deps.log.info({ cluster: access.cluster }, 'prometheus reachable')
      : deps.log.warn({ cluster: access.cluster, detail: access.detail }, 'prometheus cannot be reached'),
  );
}

/**
 * The pod broker of kubernetes.broker (off at port 0): listening from the first run that needs it until
 * close. Agent pods reach the model gateway on the same port (one Service port, one NetworkPolicy rule).
 */
function podBrokerOf(config: Config, log: Logger, gateway: GatewayHost | undefined) {
  const { port, host, url } = config.kubernetes.broker;
  if (port === 0 || !url) return undefined;
  let started: Promise<PodBroker> | undefined;
  const open = () => {
    started ??= import('../kubectl/broker/pod-broker.js').then(async ({ startPodBroker }) => {
      const { RunTokens } = await import('../kubectl/broker/tokens.js');
      return startPodBroker({
        host,
        port,
        tokens: new RunTokens(),
        log: log.child({ component: 'pod-broker' }),
        ...(gateway
          ? {
              gateway: { prefixes: PROVIDER_IDS, listener: gateway.gateway.requestListener() },
              limits: listenerLimits(config),
            }
          : {}),
      });
    });
    // A failed listen (port taken) is reported by the run that asked, and tried again by the next.
    started.catch(() => (started = undefined));
    return started;
  };
  return {
    env: { url, open },
    close: async () => (await started?.catch(() => undefined))?.close(),
  };
}

export function createRunExecutor(deps: ExecutorDeps): RunExecutor {
  const { config } = deps;
  const engines = new Map<string, Promise<Engine>>();
  if (deps.engine) engines.set(deps.engine.name, Promise.resolve(deps.engine));
  /** Run ids that run() or adopt() is handling right now: the sweep never removes them. */
  const inFlight = new Set<string>();
  const gateway = gatewayHostOf(deps);
  const podBroker = podBrokerOf(config, deps.log, gateway);
  const env = pipelineEnv(deps, {
    gateway,
    podBroker: podBroker?.env,
    engineFor: (name) => engineFor(deps, engines, name),
  });
  const audit = auditFor(deps.audit);

  const tracked = async <T>(runId: string, work: () => Promise<T>): Promise<T> => {
    inFlight.add(runId);
    try {
      return await work();
    } finally {
      inFlight.delete(runId);
    }
  };

  return {
    run: (request) => tracked(request.runId, () => runPipeline(env, request, audit)),
    adopt: (request) => tracked(request.runId, () => adoptRun(env, request, audit)),
    readiness: () => readiness(env),
    sweep: (active) => sweep(env, deps.log, active, inFlight),
    close: () => closeExecutor(deps, env, { engines, gateway, podBroker }),
  };
}

/**
 * Builds contexts as runs would, in a dry run (preview.ts): `triage-runner context`. Shares the
 * executor's environment (the skills cache, the cluster access check and its probed permissions, the
 * agent adapters); engines, the model gateway and the pod broker are never made.
 */
export function createContextPreviewer(deps: ExecutorDeps): {
  preview(request: PreviewRequest): Promise<BuiltContext>;
  close(): Promise<void>;
} {
  const engines = new Map<string, Promise<Engine>>();
  const env = pipelineEnv(deps, {
    gateway: undefined,
    podBroker: undefined,
    engineFor: (name) => engineFor(deps, engines, name),
  });
  return {
    preview: async (request) => (await import('./preview.js')).previewContext(env, request),
    close: () => closeExecutor(deps, env, { engines, gateway: undefined, podBroker: undefined }),
  };
}

/** The model gateway's host when gateway.enabled, its spend and retries reported to the metrics. */
function gatewayHostOf(deps: ExecutorDeps): GatewayHost | undefined {
  const { config } = deps;
  if (!config.gateway.enabled) return undefined;
  return createGatewayHost({
    config,
    secrets: deps.secrets,
    env: deps.env,
    ...(deps.now ? { now: deps.now } : {}),
    // The day's spend outlives a restart, under the root the daemon owns.
    ...(config.budget.daily_usd !== undefined ? { spendFile: modelSpendPath(config.workspaces_root) } : {}),
    onSpendProblem: (message) => deps.log.warn({ problem: message }, 'budget.daily_usd spend file'),
    onCap: (cap) => deps.metrics?.modelCapReached?.(cap.cap),
    onRetry: (provider) => deps.metrics?.modelRetry?.(provider),
  });
}

/** The engine named `name`, created on first use and kept in `engines`. */
function engineFor(
  deps: ExecutorDeps,
  engines: Map<string, Promise<Engine>>,
  name: EngineName,
): Promise<Engine> {
  let engine = engines.get(name);
  if (!engine) {
    engine = createEngine(name, { config: deps.config, log: deps.log, env: deps.env });
    // A failed creation (bad configuration) is reported, and tried again next time.
    engine.catch(() => engines.delete(name));
    engines.set(name, engine);
  }
  return engine;
}

/** What every stage of a run reads: the configuration, the secrets and the executor's shared services. */
function pipelineEnv(
  deps: ExecutorDeps,
  shared: {
    gateway: GatewayHost | undefined;
    podBroker: PipelineEnv['podBroker'];
    engineFor: PipelineEnv['engineFor'];
  },
): PipelineEnv {
  const { config } = deps;
  const { gateway, podBroker } = shared;
  const clusters = clusterRegistry(config);
  return {
    clusters,
    ...(gateway ? { gateway } : {}),
    ...(podBroker ? { podBroker } : {}),
    ...(deps.prometheus ? { prometheus: deps.prometheus } : {}),
    ...(deps.prometheus?.size ? { prometheusAccess: prometheusMonitor(deps, deps.prometheus) } : {}),
    config,
    redactor: deps.redactor,
    secrets: deps.secrets,
    env: deps.env,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    now: deps.now ?? (() => new Date()),
    daemonId: deps.daemonId ?? hostname(),
    // The adapters (and their settings writers) load with the first run, not at start-up.
    agents: deps.agents ?? (async (name) => (await import('../agents/index.js')).getAgent(name)),
    skills: deps.skills ?? ownSkillsCache(config, deps.log),
    ...(config.kubectl.access_check
      ? { clusterAccess: clusterMonitor(config, deps, clusters.listClusters()) }
      : {}),
    engineFor: shared.engineFor,
  };
}

/** Closes the engines, the skills cache, the access monitor, the gateway and the pod broker; failures are logged. */
async function closeExecutor(
  deps: ExecutorDeps,
  env: PipelineEnv,
  owned: {
    engines: Map<string, Promise<Engine>>;
    gateway: GatewayHost | undefined;
    podBroker: ReturnType<typeof podBrokerOf>;
  },
): Promise<void> {
  const results = await Promise.allSettled([
    ...[...owned.engines.values()].map(async (e) => (await e).close()),
    Promise.resolve(env.skills.stop?.()),
    Promise.resolve(env.clusterAccess?.stop()),
    owned.gateway?.close(),
    Promise.resolve(owned.podBroker?.close()),
  ]);
  for (const r of results)
    if (r.status === 'rejected')
      deps.log.warn({ err: errorMessage(r.reason) }, 'closing the run pipeline failed');
}
