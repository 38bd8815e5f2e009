import type { AgentAdapter } from '../../agents/types.js';
import type { RunBundle } from '../../audit/bundle.js';
import type { AuditEventType } from '../../audit/log.js';
import type { AgentName, Config, EngineName } from '../../config/schema.js';
import type { ValidatorLookup } from '../../context/report-validator.js';
import type { SkillsSnapshot } from '../../context/types.js';
import type { Engine } from '../../engines/types.js';
import type { Logger } from '../../log/logger.js';
import type { Redactor } from '../../log/redact.js';
import type { PipelineMetrics } from '../../shared/types.js';
import type { RunRequest } from '../types.js';
import type { GatewayHost } from '../../gateway/host.js';
import type { RunGateway } from '../../gateway/run.js';
import type { RunGuard } from './kubectl-guard.js';

// What every stage of the run pipeline shares: the pipeline's dependencies (PipelineEnv, one per
// executor) and the run in progress (RunContext, one per run).

/** The part of the skills cache the pipeline uses (src/context/skills-cache.ts `SkillsCache`). */
export interface SkillsCacheLike {
  acquire(): Promise<SkillsSnapshot>;
  readiness(): Promise<{ ready: boolean; sources: { name: string; available: boolean; detail?: string }[] }>;
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
}

export type AuditFn = (type: AuditEventType, fields?: Record<string, unknown>) => Promise<void>;

export interface RunContext {
  request: Omit<RunRequest, 'attempt'> & { attempt?: number };
  log: Logger;
  startedAt: Date;
  agent: AgentName;
  engineName: EngineName;
  model?: string;
  audit: AuditFn;
  /** Set as the stages create them (cleanup and early failures use what exists). */
  bundle?: RunBundle;
  engine?: Engine;
  adapter?: AgentAdapter;
  snapshot?: SkillsSnapshot;
  hostHome?: string;
  /** The triage skill's report validator, looked up while preparing; run after the agent. */
  reportValidator?: ValidatorLookup;
  /** The persona's tool policy and the run's kubectl broker (src/daemon/run/kubectl-guard.ts). */
  guard?: RunGuard;
  /** The run's identity at the model gateway (src/daemon/run/model-gateway.ts). */
  gateway?: RunGateway;
}
