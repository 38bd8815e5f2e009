import type { AuditLog } from '../audit/log.js';
import { type AgentName, type EngineName } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { RunExecutor, RunOutcome, RunOverrides } from '../run/types.js';
import { type ReplaySource } from './source.js';
import { type PromptHash } from './prompt.js';

// What a replay is asked for, what it needs and what it answers.

export type TriageChoice = 'reuse' | 'rerun' | 'auto';

export interface ReplayOptions {
  input: string;
  /** Default: `<cwd>/replays/<folder>-<UTC timestamp>`. */
  out?: string;
  cwd: string;
  agent?: AgentName;
  engine?: EngineName;
  model?: string;
  /** auto (default): reuse when a saved triage output exists, else run the script. */
  triage?: TriageChoice;
  /** Replace reuse/rerun with no triage at all (compare's no-preload variant). */
  skipTriage?: boolean;
  subjects?: string[];
  dryRun?: boolean;
  /**
   * The replay's run id, never the original run's (two runs with one id would confuse the audit trail
   * and the run folders); by default a new one like the daemon's. It is part of the prompt (the agent
   * is told where the full triage output is), so the prompt comparison maps it like the paths.
   */
  runId?: string;
  /** Folders a replay must not write into besides the original (the daemon's workspaces root). */
  forbiddenRoots?: string[];
  maxIncidentBytes: number;
  /** Folders put first on PATH for the triage script and the agent (RunOverrides.pathPrepend). */
  pathPrepend?: string[];
  /** The cluster registry entry (or alias) to investigate; default: the one the original run used. */
  cluster?: string;
  /** A Prometheus to ask instead of the cluster's (RunOverrides.prometheus: an eval's recorded answers). */
  prometheus?: { url: string; now?: string };
}

export interface ReplayDeps {
  executor: RunExecutor;
  log: Logger;
  audit?: AuditLog;
  signal?: AbortSignal;
  now?: () => number;
}

export interface ReplayResult {
  source: ReplaySource;
  outDir: string;
  runId: string;
  runDir: string;
  overrides: RunOverrides;
  outcome: RunOutcome;
  original?: PromptHash;
  /** Why the original prompt hash is unknown (no bundle, unreadable prompt-sent.md). */
  originalUnknown?: string;
  replayed?: PromptHash;
  identical?: boolean;
  /**
   * The prompts differ only in the workspace and run-bundle paths (the process engine shows the agent
   * host paths, which differ for a new workspace; container engines show `/workspace`) and the run id
   * (a replay has its own).
   */
  identicalApartFromPaths?: boolean;
  /** The first difference, when the prompts differ: which part and which line. */
  difference?: string;
}
