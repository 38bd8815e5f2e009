import type { AgentAdapter } from '../agents/types.js';
import type { ClusterRegistry } from '../clusters/registry.js';
import type { ClusterAccessMonitor } from '../clusters/monitor.js';
import type { AuditEventType } from '../audit/log.js';
import type { AgentName, Config, EngineName } from '../config/schema.js';
import type { SkillsSnapshot } from '../context/types.js';
import type { Engine } from '../engines/types.js';
import type { GatewayHost } from '../gateway/host.js';
import type { Redactor } from '../log/redact.js';
import type { PipelineMetrics } from '../shared/types.js';
import type { PodBroker } from '../kubectl/broker/pod-broker.js';
import type { EndpointResolution } from '../prometheus/endpoint.js';
import type { PrometheusMonitor } from '../prometheus/monitor.js';

// What every stage of the run pipeline is given: the pipeline's dependencies, one per executor.

/** The part of the skills cache the pipeline uses (src/context/skills-cache.ts `SkillsCache`). */
export interface SkillsCacheLike {
  acquire(): Promise<SkillsSnapshot>;
  readiness(): Promise<{
    ready: boolean;
    sources: { name: string; available: boolean; detail?: string }[];
    /** Why the cache folder cannot be written, when it cannot. */
    cacheProblem?: string;
  }>;
  stop?(): Promise<void> | void;
}

export interface PipelineEnv {
  config: Config;
  redactor: Redactor;
  secrets: Record<string, string>;
  env: Record<string, string | undefined>;
  metrics?: PipelineMetrics;
  now: () => Date;
  /** Goes into the daemon label of every run. */
  daemonId: string;
  agents: (name: AgentName) => AgentAdapter | Promise<AgentAdapter>;
  skills: SkillsCacheLike;
  engineFor: (name: EngineName) => Promise<Engine>;
  /** The daemon's model gateway (absent with gateway.enabled false). */
  gateway?: GatewayHost;
  /** The cluster registry (default: built from config). */
  clusters?: ClusterRegistry;
  /**
   * The one reachability probe and cache of the daemon's clusters (every registry entry), and their
   * probed permissions (kubectl.access_check); absent when the check is off.
   */
  clusterAccess?: ClusterAccessMonitor;
  /** The kubectl broker agent pods reach over HTTP (kubernetes.broker), started with the first run that needs it. */
  podBroker?: { url: string; open: () => Promise<PodBroker> };
  /** Each cluster's Prometheus endpoint with its credentials (the daemon's own), by registry entry name. */
  prometheus?: ReadonlyMap<string, EndpointResolution>;
  /** The endpoints' reachability for /readyz (`prometheus:<cluster>`); absent without endpoints. */
  prometheusAccess?: PrometheusMonitor;
}

/** Appends one of the run's audit events (incident and run ids added). */
export type AuditFn = (type: AuditEventType, fields?: Record<string, unknown>) => Promise<void>;
