import type { PathMapping } from './paths.js';

export type { PromptParts, PreloadPlacement } from '../shared/types.js';
export type { PathMapping } from './paths.js';
// Shapes shared by the context pipeline (skills cache, triage, budget, disclosure, prompt) and its callers.

export type SectionTag =
  | 'incident'
  | 'kubernetes_cluster_access_permissions'
  | 'initial_triage_report'
  | 'previous_investigations'
  | 'alert_metrics';

/** The alert's expression evaluated when the run began (src/daemon/run/alert-metrics.ts), for its section. */
export interface AlertMetrics {
  /** The section's body (not yet escaped): the calls as `promql` prints them, bounded. */
  text: string;
  /** Where the agent reads every value (the run folder's alert-metrics/values.md), as the agent sees it. */
  fullPath: string;
  /** Expressions evaluated. */
  expressions: number;
}

/** One row of `context.json` sections (brief): tokens after and before truncation. */
export interface SectionReport {
  tag: string;
  tokens: number;
  originalTokens: number;
  truncated: boolean;
}

/** The resolved commit of one skills source that a run used. */
export interface SkillSourceCommit {
  source: string;
  commit: string;
}

export type TriageStatus =
  'ok' | 'disabled' | 'missing' | 'not_executable' | 'failed' | 'timed_out' | 'reused';

export interface TriageSummary {
  status: TriageStatus;
  /** Why the context is incomplete, in words a user can act on (absent when status is ok). */
  reason?: string;
  exitCode?: number | null;
  signal?: string | null;
  durationMs?: number;
  /** Bytes the script printed (stdout + stderr), before any cap. */
  bytes?: number;
  /** Lines the script printed, before any cap. */
  lines?: number;
  /** Path of the full output inside the run bundle (host path). */
  logPath?: string;
  /** Files the script wrote into its output folder (listed in the prompt). */
  products?: number;
  /** The script's triage-report.md joined the triage section. */
  reportPreloaded?: boolean;
}

/** Level-1 cost of one progressive-disclosure part (persona, workflows index, skills index, said briefs). */
export interface DisclosurePartCost {
  part: string;
  tokens: number;
}

/** `context.json`: the fixed fields first, then our extensions. */
export interface ContextReport {
  estimator: 'o200k' | 'chars4';
  budget: { warn: number; truncate: number };
  totalTokens: number;
  sections: SectionReport[];
  skills: SkillSourceCommit[];
  agent: string;
  safetyFactor: number;
  /** True when something the agent would normally get is missing (triage failed, skills unavailable, …). */
  incomplete: boolean;
  incompleteReasons: string[];
  /** Tokens over the truncate budget that could not be cut (incident and permissions are never cut). */
  overBudgetBy: number;
  triage: TriageSummary;
  disclosure: {
    persona?: string;
    subjects: string[];
    bootMode: 'none' | 'simple' | 'subject';
    parts: DisclosurePartCost[];
    /** Said briefs degraded to references to fit the budget, lowest priority first. */
    degraded: string[];
    /**
     * The skills laid out for a CLI that lists them itself (the prompt does not repeat them): name,
     * description and the path the agent reads, so that "what the agent was told" stays complete.
     */
    listedByCli?: { name: string; description: string; path: string }[];
  };
  /** sha256 of the prompt sent (both parts; see promptDigest), as written to context.json. */
  promptSha256?: string;
}

/** Where the agent sees things (container paths for docker/kubernetes, host paths for process). */
export interface AgentView {
  /** The incident workspace, e.g. `/workspace`. */
  workspaceDir: string;
  /** This run's bundle, e.g. `/workspace/.triage/runs/<run-id>`. */
  runDir: string;
  /** This run's triage output folder (`--output-dir` of the script), e.g. `<runDir>/triage`. */
  triageDir: string;
  /** Where the agent writes its report, e.g. `/workspace/output/investigation.md`. */
  reportPath: string;
  /** Folder holding one folder per skill, `<skillsDir>/<name>/SKILL.md`, e.g. `/home/agent/.claude/skills`. */
  skillsDir: string;
  /** The agent's CLI discovers the skills in `skillsDir` and lists them itself (our index then does not). */
  skillsListedByCli: boolean;
  /** Host folders the agent sees elsewhere (its mounts); host paths in text it reads are rewritten with these. */
  hostPaths: PathMapping[];
  /** Persona folders, e.g. `/opt/triage/personas`. */
  personasDir: string;
  /** Briefs folder, e.g. `/opt/triage/briefs`. */
  briefsDir: string;
}

/** One skills source as a run sees it: an immutable checkout that stays put while the run holds it. */
export interface SkillsSourceSnapshot {
  name: string;
  scope: 'user' | 'project';
  /** Host path of the checkout (never changes under a running agent). */
  dir: string;
  /** Resolved git commit, or `local:<sha256 of the tree listing>` for a path source. */
  commit: string;
}

/** The skills a run uses, acquired from the cache at run start and released at the end. */
export interface SkillsSnapshot {
  sources: SkillsSourceSnapshot[];
  /** Sources that could not be made available, with the reason (the run goes on without them). */
  unavailable: { name: string; reason: string }[];
  release(): void;
}
