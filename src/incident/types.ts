import type { AuditEvent } from '../audit/log.js';
import type { RunOutcomeStatus } from '../shared/status.js';
import type { IncidentState, RunProgress, StateFile } from '../workspace/state.js';

// What happens to an incident (the events its state machine, machine.ts, is told of) and what a
// transition returns.

/** How a run ended (the one status vocabulary, shared/status.ts). */
export type { RunOutcomeStatus } from '../shared/status.js';

/** How a run ended, as the run pipeline reports it. */
export interface RunOutcome {
  status: RunOutcomeStatus;
  /** A failure worth retrying (disk full, API server down); permanent failures leave it unset. */
  transient?: boolean;
  /** The run could not start because this is unavailable (the engine): wait for it, burn no attempt. */
  waitFor?: string;
  reason?: string;
  exitCode?: number | null;
}

export type IncidentEvent =
  /** incident.json cannot be run as it is (invalid, unsafe folder, bad names). */
  | { type: 'Invalid'; incidentId: string; reason: string; sha256?: string }
  | { type: 'Duplicate'; incidentId: string; sha256: string; duplicateOf: string; reason: string }
  | { type: 'QueueFull'; incidentId: string; sha256: string; reason: string }
  /** A valid incident.json: queue it. */
  | { type: 'Validated'; incidentId: string; sha256: string }
  /** A run took the lease: preparation (skills, triage script, context) begins. */
  | { type: 'Claimed'; runId: string; holder: string }
  | { type: 'Launched'; runId: string; engine: string; id: string; image?: string }
  | { type: 'Progress'; runId: string; progress: RunProgress }
  | { type: 'Finished'; runId: string; outcome: RunOutcome }
  /** A run recorded in the engine was not found there after a restart. */
  | { type: 'Gone'; runId: string; reason: string }
  /** Shutdown stopped (or could not stop) the run. */
  | { type: 'Interrupted'; runId: string; reason: string; unstopped?: boolean }
  /** A daemon took over a run another (dead) daemon launched. */
  | { type: 'Adopted'; runId: string; holder: string; previousHolder?: string }
  | { type: 'RetryRequested'; by: string }
  /** incident.json changed after the incident finished (a new sha256): a new series of attempts. */
  | { type: 'IncidentChanged'; incidentId: string; sha256: string }
  /**
   * Every alert behind the incident resolved: one that has not started ends `resolved` (never runs);
   * one that is running goes on, and its record notes when.
   */
  | { type: 'Resolved'; at: string; reason: string; incidentId?: string; sha256?: string };

export type IncidentMetric =
  'succeeded' | 'failed' | 'rejected' | 'duplicate' | 'deferred' | 'interrupted' | 'retried' | 'resolved';

export interface LogLine {
  level: 'info' | 'warn';
  msg: string;
  fields?: Record<string, unknown>;
}

export interface Transition {
  record: StateFile;
  /** Events for `.triage/audit.jsonl`, appended after the state is written. */
  audit: AuditEvent[];
  metric?: IncidentMetric;
  log?: LogLine;
  /** Epoch ms before which a retry must not start (a transient failure). */
  retryAt?: number;
  /** Nothing changed: the store writes nothing (e.g. deferred again while deferred). */
  unchanged?: boolean;
}

export interface RetryPolicy {
  max_attempts: number;
  retry_base_delay: number;
  retry_max_delay: number;
}

export interface MachineContext {
  now: number;
  policy: RetryPolicy;
  /** For retry jitter (injected in tests). */
  random: () => number;
}

export type Next = (state: IncidentState, extra?: Partial<StateFile>) => StateFile;

/** What an effect is given: the record (undefined: new), the one it builds on, and how to move it. */
export interface Step {
  record: StateFile | undefined;
  base: StateFile;
  /** The incident's id as recorded (empty for a new record). */
  id: string;
  updatedAt: string;
  /** The next record in `state`: the fields that describe a state only while in it dropped. */
  next: Next;
}

/** The event of one type. */
export type EventOf<T extends IncidentEvent['type']> = Extract<IncidentEvent, { type: T }>;
