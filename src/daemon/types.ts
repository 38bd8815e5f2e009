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
  /**
   * Start-up clean-up: removes runs that carry our labels, are no longer running and whose run id is
   * neither in `activeRunIds` nor handled by this executor (e.g. containers whose removal failed while
   * the engine was down). Running runs are never touched. Never throws: problems are in the result.
   */
  sweep?(activeRunIds: Iterable<string>): Promise<SweepResult>;
}

export interface SweepResult {
  /** Engine ids removed. */
  removed: string[];
  /** Runs that could not be removed, or the listing that failed (`id` empty). */
  failed: { id: string; error: string }[];
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
  /**
   * Folders put first on PATH for the triage script and the agent (e.g. a kubectl shim). Under a
   * container engine each is mounted read-only and its mount point prepended.
   */
  pathPrepend?: string[];
}
