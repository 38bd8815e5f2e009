import type { AuditEvent } from '../audit/log.js';
import type { IncidentState, StateFile } from '../workspace/state.js';
import { arrowFor, IllegalTransitionError, type Arrow, type EventType, type RunEnding } from './lifecycle.js';
import { isFirstJudgement } from './queries.js';
import { finished, withRunStatus } from './run-end.js';
import type { EventOf, IncidentEvent, MachineContext, Next, Step, Transition } from './types.js';

export type {
  IncidentEvent,
  IncidentMetric,
  LogLine,
  MachineContext,
  RetryPolicy,
  RunOutcome,
  RunOutcomeStatus,
  Transition,
} from './types.js';
export { IllegalTransitionError, isAllowed } from './lifecycle.js';

// The incident state machine: every change of `.triage/state.json` is `transition(record, event)`,
// a pure function returning the next record and what to emit (audit events, a metric, a log line).
// Whether the event may happen and the state it leads to are the lifecycle's table (lifecycle.ts);
// what the move records and emits is the event's effect below. The store (store.ts) applies it;
// nothing else writes state.json. Lifecycle: docs/architecture.md.

/** The next record for `event`, or IllegalTransitionError. Pure. */
export function transition(
  record: StateFile | undefined,
  event: IncidentEvent,
  ctx: MachineContext,
): Transition {
  const arrow = arrowFor(record, event.type);
  if (arrow instanceof IllegalTransitionError) throw arrow;
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
  const next: Next = (state, extra = {}) => ({ ...kept, state, updatedAt, ...extra });
  return effect({ record, base, id: base.incidentId, updatedAt, next }, event, arrow, ctx);
}

/** The table's state for an event that leads to one. */
function target(arrow: Arrow): IncidentState {
  if (typeof arrow.to !== 'string') throw new TypeError('this arrow leads by how a run ended');
  return arrow.to;
}

/** The table's states for a run's end, by how it ended. */
function byEnding(arrow: Arrow): Readonly<Record<RunEnding, IncidentState>> {
  if (typeof arrow.to === 'string') throw new TypeError('this arrow leads to one state');
  return arrow.to;
}

/** An event's effect: what the move records and emits, in the state the table says. */
type Effect<T extends EventType> = (step: Step, event: EventOf<T>, to: IncidentState) => Transition;

/** Every event's effect but a run's end, which is judged first (run-end.ts). */
const EFFECTS: { readonly [T in Exclude<EventType, 'Finished'>]: Effect<T> } = {
  Invalid: invalid,
  Duplicate: duplicate,
  QueueFull: queueFull,
  Validated: validated,
  Claimed: claimed,
  Launched: launched,
  Progress: progress,
  Gone: gone,
  Interrupted: interrupted,
  Adopted: adopted,
  RetryRequested: retryRequested,
  IncidentChanged: incidentChanged,
  Resolved: resolved,
};

function effect(step: Step, event: IncidentEvent, arrow: Arrow, ctx: MachineContext): Transition {
  if (event.type === 'Finished') return finished(step, event, byEnding(arrow), ctx);
  // TypeScript does not tie an event to its own entry of EFFECTS; each entry is checked against its
  // event's type where EFFECTS is written.
  const apply = EFFECTS[event.type] as Effect<typeof event.type>;
  return apply(step, event, target(arrow));
}

function progress({ base, updatedAt }: Step, event: EventOf<'Progress'>, to: IncidentState): Transition {
  return { record: { ...base, state: to, updatedAt, progress: event.progress }, audit: [] };
}

function invalid({ record, id, next }: Step, event: EventOf<'Invalid'>, to: IncidentState): Transition {
  return {
    record: {
      ...next(to, { reason: event.reason, incidentId: record?.incidentId ?? event.incidentId }),
      ...(event.sha256 ? { incidentSha256: event.sha256 } : {}),
    },
    audit: [{ type: 'rejected', incidentId: id || event.incidentId, reason: event.reason }],
    metric: 'rejected',
    log: { level: 'warn', msg: 'incident rejected', fields: { reason: event.reason } },
  };
}

function duplicate({ record, next }: Step, event: EventOf<'Duplicate'>, to: IncidentState): Transition {
  return {
    record: next(to, {
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
}

function queueFull({ record, next }: Step, event: EventOf<'QueueFull'>, to: IncidentState): Transition {
  // Already deferred with these bytes: nothing to write.
  if (record?.state === to && record.incidentSha256 === event.sha256)
    return { record, audit: [], unchanged: true };
  return {
    record: next(to, {
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
}

/** `validated` is recorded when an incident is first judged valid (new, or fixed after a rejection). */
function validatedOnce(
  record: StateFile | undefined,
  event: { incidentId: string; sha256: string },
): AuditEvent[] {
  return isFirstJudgement(record)
    ? [{ type: 'validated', incidentId: event.incidentId, sha256: event.sha256 }]
    : [];
}

function validated({ record, next }: Step, event: EventOf<'Validated'>, to: IncidentState): Transition {
  // Already queued with these bytes (a restart, another replica): keep its retry time.
  if (record?.state === to && record.incidentSha256 === event.sha256)
    return { record, audit: [], unchanged: true };
  const fresh = isFirstJudgement(record);
  const { duplicateOf: _d, ...rest } = next(to, {
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

function claimed({ base, id, next }: Step, event: EventOf<'Claimed'>, to: IncidentState): Transition {
  const attempt = base.attempts + 1;
  return {
    record: next(to, { attempts: attempt, runs: [...base.runs, { id: event.runId, status: 'running' }] }),
    audit: [{ type: 'claimed', incidentId: id, runId: event.runId, holder: event.holder, attempt }],
    log: { level: 'info', msg: 'run started', fields: { attempt } },
  };
}

function launched({ id, next }: Step, event: EventOf<'Launched'>, to: IncidentState): Transition {
  return {
    record: next(to),
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
}

function gone({ base, id, next }: Step, event: EventOf<'Gone'>, to: IncidentState): Transition {
  return {
    record: next(to, { runs: withRunStatus(base, event.runId, 'interrupted'), reason: event.reason }),
    audit: [{ type: 'requeued', incidentId: id, runId: event.runId, reason: event.reason }],
    log: { level: 'info', msg: 'orphaned run was gone, re-queued', fields: { reason: event.reason } },
  };
}

function interrupted({ base, id, next }: Step, event: EventOf<'Interrupted'>, to: IncidentState): Transition {
  return {
    record: next(to, {
      runs: withRunStatus(base, event.runId, 'interrupted'),
      reason: event.reason,
      ...(event.unstopped ? { unstopped: true as const } : {}),
    }),
    audit: [{ type: 'interrupted', incidentId: id, runId: event.runId, reason: event.reason }],
    metric: 'interrupted',
    log: { level: 'warn', msg: 'run interrupted', fields: { reason: event.reason } },
  };
}

function adopted({ base, id, next }: Step, event: EventOf<'Adopted'>, to: IncidentState): Transition {
  return {
    record: next(to, {
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
    log: { level: 'info', msg: 'adopting orphaned run', fields: { previousHolder: event.previousHolder } },
  };
}

function retryRequested(
  { base, id, next }: Step,
  event: EventOf<'RetryRequested'>,
  to: IncidentState,
): Transition {
  const { duplicateOf: _d, ...rest } = next(to, { attemptBase: base.attempts });
  return {
    record: rest,
    audit: [{ type: 'retry_requested', incidentId: id, by: event.by, previousState: base.state }],
    log: { level: 'info', msg: 'retry requested', fields: { by: event.by, previousState: base.state } },
  };
}

function incidentChanged(
  { base, next }: Step,
  event: EventOf<'IncidentChanged'>,
  to: IncidentState,
): Transition {
  return {
    record: next(to, {
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
}

/** Before a run starts, the incident ends resolved; a run under way goes on (the table keeps its state). */
function resolved(
  { record, base, id, updatedAt, next }: Step,
  event: EventOf<'Resolved'>,
  to: IncidentState,
): Transition {
  if (to === record?.state) {
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
    record: next(to, {
      reason: event.reason,
      resolvedAt: event.at,
      ...(event.incidentId && !record ? { incidentId: event.incidentId } : {}),
      ...(event.sha256 ? { incidentSha256: event.sha256 } : {}),
    }),
    audit: [{ type: 'resolved', incidentId: id || event.incidentId, at: event.at, reason: event.reason }],
    metric: 'resolved',
    log: { level: 'info', msg: 'alert resolved before the run started; not run', fields: { at: event.at } },
  };
}
