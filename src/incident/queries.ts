import {
  ANSWERED_STATE,
  ignoredItsStop,
  isAllowed,
  LIFECYCLE,
  refusal,
  RUN_ENDED,
  targets,
} from './lifecycle.js';
import type { Verdict } from '../shared/status.js';
import { INCIDENT_STATES, type IncidentState, type StateFile } from '../workspace/state.js';

// Questions about an incident's state, answered from the lifecycle's one table (lifecycle.ts) and its
// guards, so no other module decides them again from a list of states it keeps itself.

/** A run may exist on an engine: the record can still be told how its run finished. */
export const inEngine = (state: IncidentState): boolean => isAllowed(state, 'Finished');

/**
 * The first judgement of an incident's file (new, or fixed after a rejection): `validated` is recorded
 * and the dedup window is asked — exactly the records a `Duplicate` may still be recorded for.
 */
export const isFirstJudgement = (record: StateFile | undefined): boolean =>
  isAllowed(record?.state, 'Duplicate');

const statesAllowing = (event: Parameters<typeof isAllowed>[1]): ReadonlySet<IncidentState> =>
  new Set(INCIDENT_STATES.filter((s) => isAllowed(s, event)));

/** States `retry` may re-queue (guards aside: see `retryRefusal`). For people: which states to name. */
export const RETRYABLE_STATES = statesAllowing('RetryRequested');

/**
 * Final: nothing more happens unless incident.json changes or someone asks for a retry — no run can
 * be claimed and none can finish.
 */
export const isFinal = (state: IncidentState): boolean =>
  !isAllowed(state, 'Claimed') && !isAllowed(state, 'Finished');

/** Ended (not rejected): a changed incident.json starts a new series of attempts. */
export const acceptsChange = (state: IncidentState): boolean => isAllowed(state, 'IncidentChanged');

/** A run of this incident may still be going on somewhere: on an engine, or one that ignored its stop. */
export const mayStillRun = (record: StateFile): boolean => inEngine(record.state) || ignoredItsStop(record);

/** A queued run may start (be claimed) from this record. */
export const mayRun = (record: StateFile | undefined): record is StateFile =>
  record !== undefined && refusal(record, 'Claimed') === undefined;

/** `retry` may re-queue this record: undefined, or why not (the machine's reason). */
export const retryRefusal = (record: StateFile): { state: boolean; guard?: string } | undefined => {
  const refused = refusal(record, 'RetryRequested');
  if (!refused) return undefined;
  return { state: refused.guard === undefined, ...(refused.guard ? { guard: refused.guard } : {}) };
};

/** States a run's `Finished` event ends an incident in with a verdict (what notifications report). */
const VERDICT_STATES: ReadonlySet<IncidentState> = new Set(Object.values(RUN_ENDED).filter(isFinal));
/** The incident ended with its run's verdict (succeeded or failed). */
export const hasVerdict = (state: IncidentState | string): boolean =>
  (VERDICT_STATES as ReadonlySet<string>).has(state);

/**
 * The incident's last run succeeded: its report is the answer (what a notification calls succeeded,
 * what `eval promote` and the ranking of past investigations read).
 */
export const hasAnswer = (state: IncidentState | string): boolean => state === ANSWERED_STATE;

/**
 * The incident's last run, if it had one, has ended and its result is the one to show: the incident is
 * final, or waits only for someone to retry it. Queued, deferred and running incidents have not.
 */
export const lastRunEnded = (state: IncidentState): boolean =>
  isFinal(state) || isAllowed(state, 'RetryRequested');

/**
 * The verdict a run with this outcome status gives its incident when nothing re-queues it (a replay,
 * a comparison): the answered state for a success, failed for anything else.
 */
export const verdictOfRun = (status: string): Verdict =>
  status === 'succeeded' ? RUN_ENDED.answered : RUN_ENDED.failed;

const isIncidentState = (state: string): state is IncidentState =>
  (INCIDENT_STATES as readonly string[]).includes(state);

/**
 * Where a state-file state stands for whoever waits on its run: `pending` (a run may still be claimed),
 * `running` (one may be on an engine) or `final`. A state this version does not know counts as final.
 */
export function runStage(state: IncidentState | string): 'pending' | 'running' | 'final' {
  if (!isIncidentState(state)) return 'final';
  if (isAllowed(state, 'Claimed')) return 'pending';
  return inEngine(state) ? 'running' : 'final';
}

/** Where a refused incident.json (invalid or a duplicate) leads. */
const REJECTED_STATES: ReadonlySet<IncidentState> = new Set(
  [LIFECYCLE.new.Invalid, LIFECYCLE.new.Duplicate].flatMap((arrow) => (arrow ? targets(arrow) : [])),
);
/** The incident.json was refused (invalid or a duplicate): the recorded reason says why. */
export const isRejected = (record: StateFile | undefined): record is StateFile =>
  record !== undefined && REJECTED_STATES.has(record.state);
