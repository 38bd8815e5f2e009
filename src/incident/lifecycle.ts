import type { IncidentState, StateFile } from '../workspace/state.js';
import type { IncidentEvent } from './types.js';

// The incident lifecycle as one table: from a state (or no record yet, `new`), an event leads to a
// state, unless a guard refuses it for the record at hand. `transition` (machine.ts) reads it, and the
// questions of queries.ts are answered from it. An event a state has no arrow for is refused.
// docs/architecture.md draws it.

export type EventType = IncidentEvent['type'];
/** A state, or `new`: no record yet (the incident's folder was never judged). */
export type From = IncidentState | 'new';

/**
 * How a run's `Finished` is judged (machine.ts `runEnding`): it answered; it was interrupted; it never
 * reached the agent and waits for what was missing (the engine), burning no attempt; it failed
 * transiently with attempts left; it failed.
 */
export type RunEnding = 'answered' | 'interrupted' | 'waiting' | 'retrying' | 'failed';

/** A guard: why `record` refuses an arrow the table has (words for people), or undefined. */
export type Guard = (record: StateFile) => string | undefined;

export interface Arrow {
  /** The next state; for a run's end, the next state by how the run ended. */
  to: IncidentState | Readonly<Record<RunEnding, IncidentState>>;
  /** Checks of the record that may still refuse the arrow, asked in order. */
  guards?: readonly Guard[];
}

/** Interrupted, but its run did not stop at shutdown (the only record that carries `unstopped`). */
export const ignoredItsStop = (record: StateFile): boolean => record.unstopped === true;

/**
 * A run interrupted at shutdown that did not stop may still be running: nothing starts it again (a
 * claim, a retry) until the next start adopts it.
 */
export function itsRunStopped(record: StateFile): string | undefined {
  return ignoredItsStop(record)
    ? 'its last run did not stop at shutdown and may still be running: the next daemon start takes that run over; retry it if it then fails'
    : undefined;
}

/** Where a run's successful `Finished` leads: the incident has an answer, the run's report. */
export const ANSWERED_STATE = 'succeeded' satisfies IncidentState;

/** Where a run's end leads, by how it ended. */
export const RUN_ENDED = {
  answered: ANSWERED_STATE,
  interrupted: 'interrupted',
  waiting: 'queued',
  retrying: 'queued',
  failed: 'failed',
} as const satisfies Readonly<Record<RunEnding, IncidentState>>;

const to = (state: IncidentState, ...guards: Guard[]): Arrow =>
  guards.length > 0 ? { to: state, guards } : { to: state };

/** from → event → to. A state that stays itself (Progress, Resolved while a run goes on) says so. */
export const LIFECYCLE: Readonly<Record<From, Readonly<Partial<Record<EventType, Arrow>>>>> = {
  new: {
    Invalid: to('rejected'),
    Duplicate: to('rejected'),
    QueueFull: to('deferred'),
    Validated: to('queued'),
    Resolved: to('resolved'),
  },
  rejected: {
    Invalid: to('rejected'),
    Duplicate: to('rejected'),
    QueueFull: to('deferred'),
    Validated: to('queued'),
    RetryRequested: to('queued', itsRunStopped),
  },
  deferred: {
    Invalid: to('rejected'),
    QueueFull: to('deferred'),
    Validated: to('queued'),
    Claimed: to('preparing', itsRunStopped),
    Resolved: to('resolved'),
  },
  queued: {
    Invalid: to('rejected'),
    QueueFull: to('deferred'),
    Validated: to('queued'),
    Claimed: to('preparing', itsRunStopped),
    Resolved: to('resolved'),
    Interrupted: to('interrupted'),
  },
  preparing: {
    Launched: to('running'),
    Finished: { to: RUN_ENDED },
    Gone: to('queued'),
    Interrupted: to('interrupted'),
    Adopted: to('running'),
    Progress: to('preparing'),
    // The run goes on; the record notes when the alert resolved.
    Resolved: to('preparing'),
  },
  running: {
    Progress: to('running'),
    Finished: { to: RUN_ENDED },
    Gone: to('queued'),
    Interrupted: to('interrupted'),
    Adopted: to('running'),
    Resolved: to('running'),
  },
  interrupted: {
    Invalid: to('rejected'),
    QueueFull: to('deferred'),
    Validated: to('queued'),
    Claimed: to('preparing', itsRunStopped),
    Adopted: to('running'),
    Interrupted: to('interrupted'),
    RetryRequested: to('queued', itsRunStopped),
    Resolved: to('resolved'),
  },
  succeeded: { IncidentChanged: to('queued') },
  failed: { IncidentChanged: to('queued'), RetryRequested: to('queued', itsRunStopped) },
  // Retried on request: a responder who wants the investigation its alert's resolution skipped (the
  // state's reason says `triage-runner retry` runs it). The record keeps `resolvedAt`, so the run is
  // not ended again by the same resolution (daemon/alert-hooks.ts: resolvedBeforeRun).
  resolved: { IncidentChanged: to('queued'), RetryRequested: to('queued', itsRunStopped) },
};

/** Every state an arrow may lead to. */
export const targets = (arrow: Arrow): IncidentState[] =>
  typeof arrow.to === 'string' ? [arrow.to] : [...new Set(Object.values(arrow.to))];

export class IllegalTransitionError extends Error {
  constructor(
    readonly from: IncidentState | undefined,
    readonly event: EventType,
    /** Set when the table allows the event but a guard refuses it for this record. */
    readonly guard?: string,
  ) {
    super(
      guard
        ? `refused transition: ${event} in state ${from ?? '(none)'}: ${guard}`
        : `illegal transition: ${event} in state ${from ?? '(none)'}; allowed there: ${Object.keys(LIFECYCLE[from ?? 'new']).join(', ') || 'nothing'}`,
    );
    this.name = 'IllegalTransitionError';
  }
}

/** Whether the table has an arrow for `event` from `from` (guards aside). */
export const isAllowed = (from: IncidentState | undefined, event: EventType): boolean =>
  LIFECYCLE[from ?? 'new'][event] !== undefined;

/** The arrow `record` takes on `event`, or why it is refused (the table, or the first guard that refuses). */
export function arrowFor(record: StateFile | undefined, event: EventType): Arrow | IllegalTransitionError {
  const arrow = LIFECYCLE[record?.state ?? 'new'][event];
  if (!arrow) return new IllegalTransitionError(record?.state, event);
  if (record)
    for (const guard of arrow.guards ?? []) {
      const refused = guard(record);
      if (refused) return new IllegalTransitionError(record.state, event, refused);
    }
  return arrow;
}

/** Why `record` refuses `event` (the table or a guard), or undefined when the transition may happen. */
export function refusal(record: StateFile | undefined, event: EventType): IllegalTransitionError | undefined {
  const arrow = arrowFor(record, event);
  return arrow instanceof IllegalTransitionError ? arrow : undefined;
}
