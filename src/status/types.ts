import type { Evidence } from '../workspace/run-record.js';
import type { IncidentState } from '../workspace/state.js';
import type { AnswerStanding } from '../evidence/standing.js';

/** The evidence record without its per-claim list. */
export type EvidenceBrief = Omit<Evidence, 'claims'>;

// What `status`, the status API and the status page show of an incident. Type-only.

/** Live progress of a running incident (state.json `progress`), without its own timestamp. */
export interface ViewProgress {
  turns: number;
  tokens: { input: number; output: number };
  lastTool?: string;
  /** The CLI is retrying the model API: what and which attempt. */
  retrying?: string;
  elapsedMs: number;
}

/**
 * One incident as `status --json` and `GET /v1/incidents` show it: the fixed fields (`folder` …
 * `reason`), then `updatedAt`, `age`, `progress` and `resolvedAt`. Fields of the latest run (agent,
 * duration, tokens, cost, answer, report) are null until a run has ended.
 */
export interface IncidentView {
  /** The workspace folder's name under the root (the id in `/v1/incidents/{id}`). */
  folder: string;
  incidentId: string;
  state: IncidentState;
  attempts: number;
  agent: string | null;
  durationMs: number | null;
  tokens: { input: number; output: number } | null;
  costUsd: number | null;
  /** The agent's one-line answer (hypothesis, confidence, first action), when it gave one. */
  answer: string | null;
  /** Absolute path of the report on the daemon's host; null when there is none (see `reason`, `state`). */
  reportPath: string | null;
  /** Why the incident is in its state (state.json `reason`), or why the run's result could not be read. */
  reason: string | null;
  /** When the state last changed (ISO-8601): the list is newest first by this. */
  updatedAt: string;
  /** Milliseconds since incident.json was written (the incident's age), at the time of the answer. */
  age: number;
  progress: ViewProgress | null;
  /** When the alert behind the incident resolved (ISO-8601), if it did. */
  resolvedAt: string | null;
  /**
   * How far the latest run's report holds against its recorded cluster calls (result.json `evidence`):
   * in a listing without its `claims` (the counts, the headline and the reason are kept); the detail of
   * one incident (`GET /v1/incidents/{id}`) carries them.
   */
  evidence: EvidenceBrief | Evidence | null;
  /**
   * What an answered incident's answer amounts to (src/evidence/standing.ts): `grounded` only when the
   * cluster output it cites supports it; else `partial`, `unverified`, `no-access` or `contradicted`.
   * Null until the incident has an answer (state succeeded). Shown instead of "succeeded".
   */
  outcome: AnswerStanding | null;
  /** What responders said of the answer (`.triage/feedback.json`), when they said anything. */
  feedback: ViewFeedback | null;
  /** What broke and where, from incident.json (null when it cannot be read: a folder kept as unsafe). */
  subject: ViewSubject | null;
  /** The incidentId this one duplicates (state.json `duplicateOf`), when it was not run for that. */
  duplicateOf: string | null;
  /**
   * The latest run's measures from its model calls, as the model gateway counted them (result.json
   * `measures`): time to the first model call, to its first token, to the first investigation turn
   * (first tool call), to the last call; the first call's input tokens; input, output, cache-read and
   * cache-write tokens and the cache's share of the input; the model.
   */
  measures: ViewMeasures | null;
}

/** A field a result written before it was measured does not have is null. */
export interface ViewMeasures {
  firstModelCallMs: number | null;
  firstTokenMs: number | null;
  firstToolCallMs: number | null;
  investigationMs: number | null;
  firstCallInputTokens: number | null;
  inputTokens: number;
  outputTokens: number | null;
  cacheReadTokens: number | null;
  cacheWriteTokens: number | null;
  /** cacheReadTokens / inputTokens (0–1). */
  cacheReadShare: number | null;
  modelCalls: number;
  model: string | null;
}

/** incident.json's what and where, and a short title for people (an alert's summary, else fault and resource). */
export interface ViewSubject {
  title: string;
  cluster: string;
  namespace: string;
  resource: { kind: string; name: string };
  faultType: string;
  severity: string;
  /**
   * Every workload behind the incident, first to alert first (a storm joins many into one incident),
   * at most VIEW_WORKLOADS: from alerts.json, else incident.json's workload (or its resource) alone.
   */
  workloads: ViewWorkload[];
  /** Workloads behind the incident left out of `workloads` (over the bound). */
  moreWorkloads: number;
}

export interface ViewWorkload {
  kind: string;
  name: string;
  namespace: string | null;
  /** Its alerts received; null when no alerts.json counts them (an incident.json dropped by hand). */
  alerts: number | null;
}

export interface ViewFeedback {
  verdict: 'correct' | 'partly' | 'wrong';
  cause?: string;
  by?: string;
  at: string;
}

export type StatusTotals = Record<IncidentState, number>;

/** `status --json` and the body of `GET /v1/incidents`. */
export interface StatusList {
  incidents: IncidentView[];
  /** By state, over every incident (not only the page or the filter). */
  totals: StatusTotals;
}

export interface ListPage extends StatusList {
  /** Pass as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
  /** How many incidents match the filter in all pages. */
  matched: number;
}

/** What changed in the index, for live views (server-sent events). */
export type IndexEvent = { type: 'upsert'; view: IncidentView } | { type: 'remove'; folder: string };
