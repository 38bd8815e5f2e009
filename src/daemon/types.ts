import type { AgentName, EngineName } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { Workspace } from '../intake/types.js';
import type { Readiness } from '../shared/types.js';
export type { Readiness, PipelineMetrics } from '../shared/types.js';

// The seam between the intake backbone (scheduling, claiming, state) and the run pipeline
// (prepare → launch → supervise → collect → record). Intake tests fake a RunExecutor.

export interface RunRequest {
  workspace: Workspace;
  runId: string;
  /** 1 for the first try. */
  attempt: number;
  /** Aborted on daemon shutdown: the executor stops the agent and reports `interrupted`. */
  signal: AbortSignal;
  log: Logger;
  overrides?: RunOverrides;
}

export type RunOutcomeStatus = 'succeeded' | 'failed' | 'timed_out' | 'interrupted';

export interface RunOutcome {
  status: RunOutcomeStatus;
  /** A failure worth retrying (engine unreachable, disk full); permanent failures leave it unset. */
  transient?: boolean;
  reason?: string;
  exitCode?: number | null;
}

export interface RunExecutor {
  run(request: RunRequest): Promise<RunOutcome>;
  /**
   * For a run recorded as `running` by a daemon that died: if the engine still has it, wait for it
   * and collect its result; if the engine has no trace of it, answer 'gone' so the incident is re-queued.
   */
  adopt(request: Omit<RunRequest, 'attempt'>): Promise<RunOutcome | 'gone'>;
  /** Engine reachable, skills ready: feeds /readyz. */
  readiness(): Promise<Readiness>;
}

/** Per-run choices that differ from the configuration (replay, compare, `context`). */
export interface RunOverrides {
  agent?: AgentName;
  engine?: EngineName;
  model?: string;
  /** run: execute the triage script (default); reuse: take a saved output file; skip: no triage. */
  triage?: { mode: 'run' } | { mode: 'reuse'; logPath: string } | { mode: 'skip' };
  subjects?: string[];
  /** Prepare the context and write the bundle, but do not launch the agent. */
  dryRun?: boolean;
}
