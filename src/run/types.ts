import type { RunResult } from '../workspace/run-record.js';
import type { AgentName, EngineName } from '../config/schema.js';
import type { RunOutcome as MachineOutcome } from '../incident/machine.js';
import type { RunProgress } from '../workspace/state.js';
import type { Logger } from '../log/logger.js';
import type { Workspace } from '../workspace/incident.js';
import type { Readiness } from '../shared/types.js';
export type { Readiness, PipelineMetrics } from '../shared/types.js';
export type { RunOutcomeStatus } from '../incident/machine.js';

// The seam between the daemon (claiming, state, scheduling) and the run pipeline (prepare → launch →
// supervise → collect). Daemon tests fake a RunExecutor.

/** How a run ended; the real pipeline adds the run record it wrote (result.json) and the report it checked. */
export interface RunOutcome extends MachineOutcome {
  result?: RunResult;
  /** The report as collect read it (scrubbed), whole; absent when the agent wrote none. */
  report?: string;
}

/** What the pipeline reports while it works, so that the daemon can record it as it happens. */
export type RunStage =
  | { type: 'launched'; engine: EngineName; id: string; image?: string }
  | { type: 'progress'; progress: RunProgress };

export interface RunRequest {
  workspace: Workspace;
  runId: string;
  /** 1 for the first try. */
  attempt: number;
  /** Aborted on daemon shutdown: the executor stops the agent and reports `interrupted`. */
  signal: AbortSignal;
  log: Logger;
  overrides?: RunOverrides;
  /** Called (and awaited) at each stage: the agent launched, progress while it runs. */
  onStage?: (stage: RunStage) => Promise<void>;
}

export interface RunExecutor {
  run(request: RunRequest): Promise<RunOutcome>;
  /**
   * For a run recorded as `running` by a daemon that died: if the engine still has it, wait for it
   * and collect its result; if the engine has no trace of it (or it never started), answer 'gone' so the
   * incident is re-queued.
   */
  adopt(request: Omit<RunRequest, 'attempt'>): Promise<RunOutcome | 'gone'>;
  /** Engine reachable, skills ready, agent runnable: feeds /readyz. */
  readiness(): Promise<Readiness>;
  /**
   * Start-up clean-up: removes runs that carry our labels, are no longer running and whose run id is
   * neither in `activeRunIds` nor handled by this executor (e.g. containers whose removal failed while
   * the engine was down). Running runs are never touched. Never throws: problems are in the result.
   */
  sweep?(activeRunIds: Iterable<string>): Promise<SweepResult>;
  /** Releases what the executor opened (engines, the skills cache's timers). */
  close?(): Promise<void>;
}

export interface SweepResult {
  /** Engine ids removed. */
  removed: string[];
  /** Runs that could not be removed, or the listing that failed (`id` empty). */
  failed: { id: string; error: string }[];
}

/** Per-run choices that differ from the configuration (replay, compare, eval, `context`). */
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
  /** The cluster registry entry (or alias) to investigate instead of the incident's own (replay --cluster). */
  cluster?: string;
  /**
   * List earlier investigations of the same workload in the prompt (default: yes, for an incident
   * under the workspaces root). Replays leave them out: the original's report would be the answer.
   */
  previousInvestigations?: boolean;
  /**
   * A Prometheus the run's `promql` and its alert preload ask instead of its cluster's endpoint (an eval's
   * recorded answers), and the time it was recorded at, which every call asks at.
   */
  prometheus?: { url: string; now?: string };
}
