export type { Incident, Workspace } from '../shared/types.js';
// Shapes shared by intake (watch, validate, claim, queue) and the daemon that drives it.

/** The states of `.triage/state.json`, fixed by the brief. */
export const INCIDENT_STATES = [
  'queued',
  'preparing',
  'running',
  'succeeded',
  'failed',
  'rejected',
  'deferred',
  'interrupted',
] as const;
export type IncidentState = (typeof INCIDENT_STATES)[number];

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'timed_out' | 'interrupted';

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
}
