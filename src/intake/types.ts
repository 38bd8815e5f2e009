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
}

/** The incident as the producer wrote it (nightcrier's shape); unknown fields are kept. */
export interface Incident {
  incidentId: string;
  faultId?: string;
  cluster: string;
  namespace: string;
  resource: { apiVersion?: string; kind: string; name: string; namespace?: string; uid?: string };
  faultType: string;
  severity: string;
  context?: unknown;
  timestamp: string;
  [field: string]: unknown;
}

/** A validated incident folder, as read once from disk. */
export interface Workspace {
  /** Absolute path of `<workspaces_root>/<folder>`. */
  dir: string;
  /** The folder name. */
  name: string;
  incident: Incident;
  /** The exact bytes of incident.json (preloaded verbatim, hashed for replay). */
  incidentText: string;
  /** The exact bytes of incident_cluster_permissions.json, when present and valid JSON. */
  permissionsText?: string;
}
