import type { AuditEvent } from '../audit/log.js';
import { backoffDelay } from '../util/backoff.js';
import type { IncidentState, RunProgress, RunStatus, StateFile } from '../workspace/state.js';

// The incident state machine: every change of `.triage/state.json` is `transition(record, event)`,
// a pure function returning the next record and what to emit (audit events, a metric, a log line).
// The store (store.ts) applies it; nothing else writes state.json. Lifecycle: docs/architecture.md.

export type RunOutcomeStatus = 'succeeded' | 'failed' | 'timed_out' | 'interrupted';

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

/** from → the events allowed. Absent record = 'new'. */
const ALLOWED: Record<IncidentState | 'new', readonly IncidentEvent['type'][]> = {
  new: ['Invalid', 'Duplicate', 'QueueFull', 'Validated', 'Resolved'],
  rejected: ['Invalid', 'Duplicate', 'QueueFull', 'Validated', 'RetryRequested'],
  deferred: ['Invalid', 'QueueFull', 'Validated', 'Claimed', 'Resolved'],
  queued: ['Invalid', 'QueueFull', 'Validated', 'Claimed', 'Resolved', 'Interrupted'],
  preparing: ['Launched', 'Finished', 'Gone', 'Interrupted', 'Adopted', 'Progress', 'Resolved'],
  running: ['Progress', 'Finished', 'Gone', 'Interrupted', 'Adopted', 'Resolved'],
  interrupted: [
    'Invalid',
    'QueueFull',
    'Validated',
    'Claimed',
    'Adopted',
    'Interrupted',
    'RetryRequested',
    'Resolved',
  ],
  succeeded: ['IncidentChanged'],
  failed: ['IncidentChanged', 'RetryRequested'],
  // Retried on request: a responder who wants the investigation its alert's resolution skipped (the
  // state's reason says `triage-runner retry` runs it). The record keeps `resolvedAt`, so the run is
  // not ended again by the same resolution (daemon/alert-hooks.ts: resolvedBeforeRun).
  resolved: ['IncidentChanged', 'RetryRequested'],
};

/**
 * Guards: a transition the table allows that the record still refuses, with the reason people read.
 * A run interrupted at shutdown that did not stop (`unstopped`) may still be running: nothing starts
 * it again (a claim, a retry) until the next start adopts it.
 */
const GUARDS: Partial<Record<IncidentEvent['type'], (record: StateFile) => string | undefined>> = {
  Claimed: (r) => (ignoredItsStop(r) ? UNSTOPPED_REASON : undefined),
  RetryRequested: (r) => (ignoredItsStop(r) ? UNSTOPPED_REASON : undefined),
};
/** Interrupted, but its run did not stop at shutdown (the only record that carries `unstopped`). */
export const ignoredItsStop = (record: StateFile): boolean => record.unstopped === true;
const UNSTOPPED_REASON =
  'its last run did not stop at shutdown and may still be running: the next daemon start takes that run over; retry it if it then fails';

export class IllegalTransitionError extends Error {
  constructor(
    readonly from: IncidentState | undefined,
    readonly event: IncidentEvent['type'],
    /** Set when the table allows the event but a guard refuses it for this record. */
    readonly guard?: string,
  ) {
    super(
      guard
        ? `refused transition: ${event} in state ${from ?? '(none)'}: ${guard}`
        : `illegal transition: ${event} in state ${from ?? '(none)'}; allowed there: ${ALLOWED[from ?? 'new'].join(', ') || 'nothing'}`,
    );
    this.name = 'IllegalTransitionError';
  }
}

/** Where a run's successful `Finished` leads: the incident has an answer, the run's report. */
export const ANSWERED_STATE = 'succeeded' satisfies IncidentState;

/** A run may exist on an engine: the record can still be told how its run finished. */
export const inEngine = (state: IncidentState): boolean => isAllowed(state, 'Finished');

/**
 * The first judgement of an incident's file (new, or fixed after a rejection): `validated` is recorded
 * and the dedup window is asked — exactly the records a `Duplicate` may still be recorded for.
 */
export const isFirstJudgement = (record: StateFile | undefined): boolean =>
  isAllowed(record?.state, 'Duplicate');

/** Whether the transition table has an arrow for `event` from `from` (guards aside). */
export const isAllowed = (from: IncidentState | undefined, event: IncidentEvent['type']): boolean =>
  ALLOWED[from ?? 'new'].includes(event);

/** Why `record` refuses `event` (the table or a guard), or undefined when the transition may happen. */
export function refusal(
  record: StateFile | undefined,
  event: IncidentEvent['type'],
): IllegalTransitionError | undefined {
  if (!isAllowed(record?.state, event)) return new IllegalTransitionError(record?.state, event);
  const guard = record ? GUARDS[event]?.(record) : undefined;
  return guard ? new IllegalTransitionError(record?.state, event, guard) : undefined;
}

/** The next record for `event`, or IllegalTransitionError. Pure. */
export function transition(
  record: StateFile | undefined,
  event: IncidentEvent,
  ctx: MachineContext,
): Transition {
  const refused = refusal(record, event.type);
  if (refused) throw refused;
  const updatedAt = new Date(ctx.now).toISOString();
  const base: StateFile = record ?? {
    incidentId: ('incidentId' in event ? event.incidentId : undefined) ?? '',
    state: 'queued',
    attempts: 0,
    updatedAt,
    runs: [],
  };
  // Fields that describe a state only while in it are dropped on every move.
  const { reason: _r, retryAt: _ra, waitingFor: _w, progress: _p, unstopped: _u, ...kept } = base;
  const next = (state: IncidentState, extra: Partial<StateFile> = {}): StateFile => ({
    ...kept,
    state,
    updatedAt,
    ...extra,
  });
  const id = base.incidentId;
  switch (event.type) {
    case 'Invalid':
      return {
        record: {
          ...next('rejected', { reason: event.reason, incidentId: record?.incidentId ?? event.incidentId }),
          ...(event.sha256 ? { incidentSha256: event.sha256 } : {}),
        },
        audit: [{ type: 'rejected', incidentId: id || event.incidentId, reason: event.reason }],
        metric: 'rejected',
        log: { level: 'warn', msg: 'incident rejected', fields: { reason: event.reason } },
      };
    case 'Duplicate':
      return {
        record: next('rejected', {
          incidentId: event.incidentId,
          reason: event.reason,
          duplicateOf: event.duplicateOf,
          incidentSha256: event.sha256,
          attempts: 0,
        }),
        audit: [
          ...validatedOnce(record, event),
          { type: 'duplicate', incidentId: event.incidentId, duplicateOf: event.duplicateOf },
        ],
        metric: 'duplicate',
        log: { level: 'info', msg: 'incident is a duplicate', fields: { duplicateOf: event.duplicateOf } },
      };
    case 'QueueFull':
      if (record?.state === 'deferred' && record.incidentSha256 === event.sha256)
        return { record, audit: [], unchanged: true };
      return {
        record: next('deferred', {
          incidentId: event.incidentId,
          reason: event.reason,
          incidentSha256: event.sha256,
          ...(record?.state === 'rejected' ? { attempts: 0 } : {}),
        }),
        audit: [
          ...validatedOnce(record, event),
          { type: 'deferred', incidentId: event.incidentId, reason: event.reason },
        ],
        metric: 'deferred',
        log: { level: 'info', msg: 'queue full, incident deferred' },
      };
    case 'Validated':
      return validated(record, event, next);
    case 'Claimed': {
      const attempt = base.attempts + 1;
      return {
        record: next('preparing', {
          attempts: attempt,
          runs: [...base.runs, { id: event.runId, status: 'running' }],
        }),
        audit: [{ type: 'claimed', incidentId: id, runId: event.runId, holder: event.holder, attempt }],
        log: { level: 'info', msg: 'run started', fields: { attempt } },
      };
    }
    case 'Launched':
      return {
        record: next('running'),
        audit: [
          {
            type: 'launched',
            incidentId: id,
            runId: event.runId,
            engine: event.engine,
            id: event.id,
            ...(event.image ? { image: event.image } : {}),
          },
        ],
        log: { level: 'info', msg: 'agent launched', fields: { engineId: event.id } },
      };
    case 'Progress':
      return { record: { ...base, updatedAt, progress: event.progress }, audit: [] };
    case 'Finished':
      return finished(base, event, next, ctx);
    case 'Gone':
      return {
        record: next('queued', {
          runs: withRunStatus(base, event.runId, 'interrupted'),
          reason: event.reason,
        }),
        audit: [{ type: 'requeued', incidentId: id, runId: event.runId, reason: event.reason }],
        log: { level: 'info', msg: 'orphaned run was gone, re-queued', fields: { reason: event.reason } },
      };
    case 'Interrupted':
      return {
        record: next('interrupted', {
          runs: withRunStatus(base, event.runId, 'interrupted'),
          reason: event.reason,
          ...(event.unstopped ? { unstopped: true as const } : {}),
        }),
        audit: [{ type: 'interrupted', incidentId: id, runId: event.runId, reason: event.reason }],
        metric: 'interrupted',
        log: { level: 'warn', msg: 'run interrupted', fields: { reason: event.reason } },
      };
    case 'Adopted':
      return {
        record: next('running', {
          runs: withRunStatus(base, event.runId, 'running'),
          ...(base.progress ? { progress: base.progress } : {}),
        }),
        audit: [
          {
            type: 'adopted',
            incidentId: id,
            runId: event.runId,
            holder: event.holder,
            ...(event.previousHolder ? { previousHolder: event.previousHolder } : {}),
          },
        ],
        log: {
          level: 'info',
          msg: 'adopting orphaned run',
          fields: { previousHolder: event.previousHolder },
        },
      };
    case 'RetryRequested': {
      const { duplicateOf: _d, ...rest } = kept;
      return {
        record: { ...rest, state: 'queued', updatedAt, attemptBase: base.attempts },
        audit: [{ type: 'retry_requested', incidentId: id, by: event.by, previousState: base.state }],
        log: { level: 'info', msg: 'retry requested', fields: { by: event.by, previousState: base.state } },
      };
    }
    case 'IncidentChanged':
      return {
        record: next('queued', {
          incidentId: event.incidentId,
          incidentSha256: event.sha256,
          attemptBase: base.attempts,
        }),
        audit: [
          {
            type: 'incident_changed',
            incidentId: event.incidentId,
            sha256: event.sha256,
            previousSha256: base.incidentSha256,
            previousState: base.state,
          },
        ],
        log: { level: 'info', msg: 'incident.json changed after the incident finished; queued again' },
      };
    case 'Resolved':
      if (inEngine(base.state)) {
        if (base.resolvedAt) return { record: base, audit: [], unchanged: true };
        return {
          record: { ...base, updatedAt, resolvedAt: event.at },
          audit: [{ type: 'resolved', incidentId: id, at: event.at, running: true }],
          log: {
            level: 'info',
            msg: 'alert resolved while the investigation runs; it goes on',
            fields: { at: event.at },
          },
        };
      }
      return {
        record: next('resolved', {
          reason: event.reason,
          resolvedAt: event.at,
          ...(event.incidentId && !record ? { incidentId: event.incidentId } : {}),
          ...(event.sha256 ? { incidentSha256: event.sha256 } : {}),
        }),
        audit: [{ type: 'resolved', incidentId: id || event.incidentId, at: event.at, reason: event.reason }],
        metric: 'resolved',
        log: {
          level: 'info',
          msg: 'alert resolved before the run started; not run',
          fields: { at: event.at },
        },
      };
  }
}

type Next = (state: IncidentState, extra?: Partial<StateFile>) => StateFile;

/** `validated` is recorded when an incident is first judged valid (new, or fixed after a rejection). */
function validatedOnce(
  record: StateFile | undefined,
  event: { incidentId: string; sha256: string },
): AuditEvent[] {
  return isFirstJudgement(record)
    ? [{ type: 'validated', incidentId: event.incidentId, sha256: event.sha256 }]
    : [];
}

function validated(
  record: StateFile | undefined,
  event: { incidentId: string; sha256: string },
  next: Next,
): Transition {
  // Already queued with these bytes (a restart, another replica): keep its retry time.
  if (record?.state === 'queued' && record.incidentSha256 === event.sha256)
    return { record, audit: [], unchanged: true };
  const fresh = isFirstJudgement(record);
  const { duplicateOf: _d, ...rest } = next('queued', {
    incidentId: event.incidentId,
    incidentSha256: event.sha256,
    ...(fresh ? { attempts: 0 } : {}),
  });
  const type = record?.state === 'interrupted' ? 'requeued' : 'queued';
  return {
    record: rest,
    audit: [...validatedOnce(record, event), { type, incidentId: event.incidentId }],
    log: {
      level: 'info',
      msg: type === 'requeued' ? 'interrupted incident queued again' : 'incident queued',
    },
  };
}

const withRunStatus = (record: StateFile, runId: string, status: RunStatus): StateFile['runs'] =>
  record.runs.map((r) => (r.id === runId ? { ...r, status } : r));

/** A finished run: success, a retry after a transient failure, a wait for the engine, or failure. */
function finished(
  base: StateFile,
  event: { runId: string; outcome: RunOutcome },
  next: Next,
  ctx: MachineContext,
): Transition {
  const { outcome, runId } = event;
  const id = base.incidentId;
  const runStatus: RunStatus = outcome.status;
  const runs = withRunStatus(base, runId, runStatus);
  if (outcome.status === 'succeeded')
    return {
      record: next(ANSWERED_STATE, { runs }),
      audit: [{ type: 'outcome', incidentId: id, runId, state: ANSWERED_STATE }],
      metric: 'succeeded',
      log: { level: 'info', msg: 'run succeeded' },
    };
  if (outcome.status === 'interrupted') {
    const reason = outcome.reason ?? 'interrupted by daemon shutdown; re-queued at the next start';
    return {
      record: next('interrupted', { runs, reason }),
      audit: [{ type: 'interrupted', incidentId: id, runId, reason }],
      metric: 'interrupted',
      log: { level: 'warn', msg: 'run interrupted', fields: { reason } },
    };
  }
  if (outcome.waitFor) {
    // The attempt never reached the agent: it does not count.
    const reason = `waiting for ${outcome.waitFor}: ${outcome.reason ?? 'unavailable'}; runs once it answers`;
    return {
      record: next('queued', {
        runs,
        attempts: Math.max(0, base.attempts - 1),
        reason,
        waitingFor: outcome.waitFor,
      }),
      audit: [{ type: 'waiting', incidentId: id, runId, for: outcome.waitFor, reason: outcome.reason }],
      log: {
        level: 'warn',
        msg: `${outcome.waitFor} unavailable; the incident waits for it`,
        fields: { reason: outcome.reason },
      },
    };
  }
  const attempt = base.attempts - (base.attemptBase ?? 0);
  const { policy } = ctx;
  if (outcome.transient && attempt < policy.max_attempts) {
    const delayMs = backoffDelay(
      attempt,
      { baseMs: policy.retry_base_delay, maxMs: policy.retry_max_delay },
      ctx.random,
    );
    const reason = `attempt ${attempt} of ${policy.max_attempts} failed transiently (${outcome.reason ?? outcome.status}); retrying in ${delayMs} ms`;
    const retryAt = ctx.now + delayMs;
    return {
      record: next('queued', { runs, reason, retryAt: new Date(retryAt).toISOString() }),
      audit: [{ type: 'retry_scheduled', incidentId: id, runId, attempt, delayMs, reason }],
      metric: 'retried',
      log: { level: 'warn', msg: 'transient failure, retry scheduled', fields: { reason, delayMs } },
      retryAt,
    };
  }
  const why =
    outcome.reason ??
    (outcome.status === 'timed_out'
      ? 'the agent timed out'
      : `the run failed (exit code ${String(outcome.exitCode)})`);
  const reason = outcome.transient
    ? `gave up after ${attempt} attempts (scheduling.max_attempts): ${why}`
    : why;
  return {
    record: next('failed', { runs, reason }),
    audit: [{ type: 'outcome', incidentId: id, runId, state: 'failed', reason }],
    metric: 'failed',
    log: { level: 'warn', msg: 'run failed', fields: { reason } },
  };
}
