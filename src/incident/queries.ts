import { ANSWERED_STATE, ignoredItsStop, inEngine, isAllowed, refusal } from './machine.js';
import { INCIDENT_STATES, type IncidentState, type StateFile } from '../workspace/state.js';

export { inEngine, isFirstJudgement } from './machine.js';

// Questions about an incident's state, answered from the machine's one transition table (and its
// guards), so no other module decides them again from a list of states it keeps itself.

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
const VERDICT_STATES: ReadonlySet<IncidentState> = new Set<IncidentState>(['succeeded', 'failed']);
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
export const verdictOfRun = (status: string): 'succeeded' | 'failed' =>
  status === 'succeeded' ? ANSWERED_STATE : 'failed';

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

/** The incident.json was refused (invalid or a duplicate): the recorded reason says why. */
export const isRejected = (record: StateFile | undefined): record is StateFile =>
  record?.state === 'rejected';
