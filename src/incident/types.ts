// The incident record (`.triage/state.json`) and its states. See docs/architecture.md for the lifecycle.

/**
 * The states of `.triage/state.json`. `resolved` (the alert behind the incident resolved before its run
 * started) extends the fixed list; it is final like succeeded and failed.
 */
export const INCIDENT_STATES = [
  'queued',
  'preparing',
  'running',
  'succeeded',
  'failed',
  'rejected',
  'deferred',
  'interrupted',
  'resolved',
] as const;
export type IncidentState = (typeof INCIDENT_STATES)[number];

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'timed_out' | 'interrupted';

/** What a running agent has done so far (from its streamed events), for status and the API. */
export interface RunProgress {
  turns: number;
  tokens: { input: number; output: number };
  lastTool?: string;
  /** The CLI is retrying the model API (cleared by the next turn). */
  retrying?: string;
  elapsedMs: number;
  updatedAt: string;
}

/** `.triage/state.json`: `{incidentId, state, attempts, reason?, updatedAt, runs:[{id, status}]}` (+ extensions). */
export interface StateFile {
  incidentId: string;
  state: IncidentState;
  attempts: number;
  reason?: string;
  updatedAt: string;
  runs: { id: string; status: RunStatus }[];
  /** Set when the incident was recorded as a duplicate of an earlier one inside the dedup window. */
  duplicateOf?: string;
  /** sha256 of the incident.json bytes that this state describes; a changed file re-queues. */
  incidentSha256?: string;
  /** When a transient failure is retried, not before this time (ISO-8601). */
  retryAt?: string;
  /** Interrupted because its run did not stop at shutdown: the next start adopts it before any re-run. */
  unstopped?: true;
  /** `attempts` when the current series began (a retry or a changed incident starts a new series). */
  attemptBase?: number;
  /** What the daemon waits for before the next attempt (an engine that does not answer). */
  waitingFor?: string;
  /** Live progress of the current run (running only). */
  progress?: RunProgress;
  /** When the alert behind the incident resolved (ISO-8601). */
  resolvedAt?: string;
}
