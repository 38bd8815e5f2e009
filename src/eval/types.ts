import type { AgentName, EngineName } from '../config/schema.js';
import type { Variant } from '../replay/compare.js';
import type { CaseScore } from './score/score.js';

// Shared shapes of an eval: one cell (a case run once by one agent × model × variant), its metrics,
// the optional judge verdict, and the scorecard written as scorecard.json.

export interface CellMetrics {
  durationMs?: number;
  tokens?: { input: number; output: number };
  costUsd?: number;
  turns?: number;
  /** kubectl calls the agent made. */
  kubectlCalls: number;
  /** kubectl calls the triage script made (preload variant). */
  triageKubectlCalls: number;
  /** Agent calls the recordings could not answer (not recorded or unsupported): gaps in the case. */
  unanswered: number;
  /** promql calls the agent made (the case's recorded Prometheus answered them, or said not recorded). */
  promqlCalls?: number;
  /** The run's model calls as the gateway counted them (result.json `measures`), when any went through it. */
  modelCalls?: CellModelCalls;
}

/** What one cell's model calls cost: the first call, the tokens by kind, the cache's share, the model. */
export interface CellModelCalls {
  calls: number;
  model?: string;
  firstCallInputTokens?: number;
  firstModelCallMs?: number;
  firstTokenMs?: number;
  input: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** The share of the input the provider's prompt cache served (0–1). */
  cacheReadShare?: number;
}

export interface JudgeVerdict {
  verdict: 'correct' | 'partially_correct' | 'incorrect';
  /** 0–1. */
  score: number;
  rationale: string;
  provider: string;
  model: string;
}

export interface EvalCell {
  case: string;
  agent: AgentName;
  /** The model passed to the CLI, or `default` (the CLI's own). */
  model: string;
  variant: Variant;
  /** 1-based repeat number. */
  repeat: number;
  workspace: string;
  runDir?: string;
  /** The run's status (result.json), or `error` when the cell could not run. */
  status: string;
  error?: string;
  score?: CaseScore;
  /** The run's evidence verdict (result.json `evidence.verdict`), when the report was checked. */
  evidence?: 'grounded' | 'partial' | 'ungrounded';
  /**
   * Whether the kubectl call records the score read were out of the agent's reach (`daemon`: the
   * guard's broker ran the shim for an agent in a container) or not (`agent-writable`: the guard off or
   * unavailable, the process engine, or calls the agent ran around the guard: records the agent could
   * edit or delete, so their violations and call counts are the agent's word). See kubectlRecordOf.
   */
  kubectlRecord?: 'daemon' | 'agent-writable';
  judge?: JudgeVerdict;
  /** Why the judge gave no verdict (provider error, unreadable answer). */
  judgeError?: string;
  metrics: CellMetrics;
}

export interface Spread {
  stdev: number;
  min: number;
  max: number;
}

/** One agent × model × variant over every case and repeat. */
export interface ScorecardGroup {
  agent: AgentName;
  model: string;
  variant: Variant;
  runs: number;
  errors: number;
  passRate: number;
  meanScore: number;
  /** Over repeats: each repeat's mean score across the cases. */
  spread: Spread;
  meanJudgeScore?: number;
  violations: number;
  /** Runs whose answer is wrong: a true cause missed, the cause below half found, or the judge's incorrect. */
  wrong: number;
  /** Wrong runs that stated high confidence (each scored 0). */
  confidentWrong: number;
  /** Runs by evidence verdict. */
  evidence: { grounded: number; partial: number; ungrounded: number };
  /** Runs the evidence check called grounded whose answer is wrong: supported by the cluster, yet wrong. */
  groundedWrong: number;
  /** Of the grounded runs, the share whose answer is not wrong: P(correct | grounded); null with none grounded. */
  correctGivenGrounded: number | null;
  medianTokens?: number;
  medianCostUsd?: number;
  medianDurationMs?: number;
  medianTurns?: number;
  medianKubectlCalls: number;
  /** Agent kubectl calls the recordings could not answer, summed: gaps in the cases. */
  unanswered: number;
}

export interface ScorecardRow {
  case: string;
  agent: AgentName;
  model: string;
  variant: Variant;
  runs: number;
  passes: number;
  meanScore: number;
  violations: number;
  meanJudgeScore?: number;
  /** The first failing run's reasons, to see at a glance what went wrong. */
  reasons: string[];
}

export interface Scorecard {
  suite: string;
  outDir: string;
  createdAt: string;
  engine?: EngineName;
  cases: string[];
  repeat: number;
  judge: boolean;
  groups: ScorecardGroup[];
  rows: ScorecardRow[];
  /** "Which was best and by how much", in one or two sentences. */
  summary: string;
  minScore?: number;
  /** Groups whose mean score is below minScore (`agent/model/variant`). */
  belowMinScore: string[];
  /** Every cell produced a result.json. */
  complete: boolean;
  cells: EvalCell[];
}
