import { hasAnswer, inEngine } from '../incident/queries.js';
import { STANDING_WORDS, standingOf } from '../evidence/standing.js';
import { INCIDENT_STATES, type StateFile } from '../workspace/state.js';
import { reportPath } from '../workspace/layout.js';
import type { Evidence, RunResult } from '../workspace/run-record.js';
import { type IncidentFacts } from './read.js';
import type { EvidenceBrief, IncidentView, StatusTotals, ViewMeasures, ViewProgress } from './types.js';

// From what is on disk (or what the store just applied) to what status shows. Pure.

/** A listing holds every incident's view: the evidence without its claims (the detail has them). */
function briefEvidence(evidence: Evidence): EvidenceBrief {
  const { claims: _claims, ...brief } = evidence;
  return brief;
}

/** The view without `age`, which depends on when it is shown. */
export type StoredView = Omit<IncidentView, 'age'>;

const progressOf = (state: StateFile): ViewProgress | null => {
  const p = state.progress;
  if (!p || !inEngine(state.state)) return null;
  return {
    turns: p.turns,
    tokens: { input: p.tokens.input, output: p.tokens.output },
    ...(p.lastTool !== undefined ? { lastTool: p.lastTool } : {}),
    ...(p.retrying !== undefined ? { retrying: p.retrying } : {}),
    elapsedMs: p.elapsedMs,
  };
};

export function viewOf(facts: IncidentFacts): StoredView {
  const { state, result, manifest } = facts;
  const progress = progressOf(state);
  const reason = state.reason ?? facts.resultProblem ?? null;
  return {
    folder: facts.folder,
    incidentId: state.incidentId,
    state: state.state,
    attempts: state.attempts,
    agent: result?.agent ?? manifest?.agent ?? null,
    durationMs: result?.durationMs ?? progress?.elapsedMs ?? null,
    tokens: result
      ? { input: result.tokens.input, output: result.tokens.output }
      : (progress?.tokens ?? null),
    costUsd: result?.costUsd ?? null,
    answer: result?.answer ?? null,
    reportPath: facts.reportExists ? reportPath(facts.dir) : null,
    reason,
    updatedAt: state.updatedAt,
    progress,
    resolvedAt: state.resolvedAt ?? facts.alertsResolvedAt ?? null,
    feedback: facts.feedback
      ? {
          verdict: facts.feedback.verdict,
          ...(facts.feedback.cause ? { cause: facts.feedback.cause } : {}),
          ...(facts.feedback.by ? { by: facts.feedback.by } : {}),
          at: facts.feedback.at,
        }
      : null,
    evidence: result?.evidence ? briefEvidence(result.evidence) : null,
    outcome: hasAnswer(state.state) ? standingOf(result) : null,
    subject: facts.subject ?? null,
    duplicateOf: state.duplicateOf ?? null,
    measures: result?.measures ? measuresView(result.measures) : null,
  };
}

function measuresView(m: NonNullable<RunResult['measures']>): ViewMeasures {
  return {
    firstModelCallMs: m.firstModelCallMs ?? null,
    firstTokenMs: m.firstTokenMs ?? null,
    firstToolCallMs: m.firstToolCallMs ?? null,
    investigationMs: m.investigationMs ?? null,
    firstCallInputTokens: m.firstCallInputTokens ?? null,
    inputTokens: m.inputTokens,
    outputTokens: m.outputTokens ?? null,
    cacheReadTokens: m.cacheReadTokens ?? null,
    cacheWriteTokens: m.cacheWriteTokens ?? null,
    cacheReadShare: m.cacheReadShare ?? null,
    modelCalls: m.modelCalls,
    model: m.model ?? null,
  };
}

/**
 * The view as shown at `now`, `age` after `updatedAt` as the fields are documented. Written out field
 * by field: a listing makes 10,000 of these, and a literal of one shape is several times faster to
 * build than a spread or a rest pattern.
 */
export function withAge(v: StoredView, arrivedAtMs: number, now: number): IncidentView {
  return {
    folder: v.folder,
    incidentId: v.incidentId,
    state: v.state,
    attempts: v.attempts,
    agent: v.agent,
    durationMs: v.durationMs,
    tokens: v.tokens,
    costUsd: v.costUsd,
    answer: v.answer,
    reportPath: v.reportPath,
    reason: v.reason,
    updatedAt: v.updatedAt,
    age: Math.max(0, Math.round(now - arrivedAtMs)),
    progress: v.progress,
    resolvedAt: v.resolvedAt,
    feedback: v.feedback,
    evidence: v.evidence,
    outcome: v.outcome,
    subject: v.subject,
    duplicateOf: v.duplicateOf,
    measures: v.measures,
  };
}

export function emptyTotals(): StatusTotals {
  return Object.fromEntries(INCIDENT_STATES.map((s) => [s, 0])) as StatusTotals;
}

export function totalsOf(views: Iterable<{ state: IncidentView['state'] }>): StatusTotals {
  const totals = emptyTotals();
  for (const v of views) totals[v.state]++;
  return totals;
}

/** Why an incident has no report, in a few words (for the text listing and the page). */
export function noReportWhy(view: Pick<IncidentView, 'state' | 'reason' | 'reportPath'>): string {
  switch (view.state) {
    case 'queued':
    case 'deferred':
      return view.reason ?? 'not run yet';
    case 'preparing':
    case 'running':
      return 'running';
    case 'succeeded':
      return 'the report file is missing';
    case 'resolved':
      return view.reason ?? 'the alert resolved before the run; not run';
    case 'rejected':
      return view.reason ?? 'rejected; not run';
    case 'failed':
    case 'interrupted':
      return view.reason ?? `${view.state} without a report`;
  }
}

/**
 * The state as people read it: an answered incident by what its answer amounts to ("grounded", "not
 * verified", "no cluster access"), never "succeeded"; every other state as it is.
 */
export const stateLabel = (view: Pick<IncidentView, 'state' | 'outcome'>): string =>
  view.outcome ? STANDING_WORDS[view.outcome].short : view.state;

/** A state's name in totals: `succeeded` counts answers, whatever they amount to. */
export const totalLabel = (state: IncidentView['state']): string =>
  state === 'succeeded' ? 'answered' : state;
