// The questions other modules ask about an incident's state, as a table over every state: each answer
// comes from the machine's transition table and guards, so a new arrow there changes it here.
import { describe, expect, it } from 'vitest';
import { IllegalTransitionError, transition } from '../../../src/incident/machine.js';
import {
  acceptsChange,
  hasAnswer,
  hasVerdict,
  inEngine,
  isFinal,
  isFirstJudgement,
  isRejected,
  lastRunEnded,
  mayRun,
  mayStillRun,
  RETRYABLE_STATES,
  retryRefusal,
  runStage,
  verdictOfRun,
} from '../../../src/incident/queries.js';
import { INCIDENT_STATES, type IncidentState, type StateFile } from '../../../src/workspace/state.js';
import { MACHINE_CTX, stateRecord } from '../../support/incident-machine.js';

const record = (state: IncidentState, extra: Partial<StateFile> = {}): StateFile =>
  stateRecord(state, { runs: [{ id: 'r1', status: 'interrupted' }], ...extra });

const ctx = MACHINE_CTX;

type Row = {
  mayRun: boolean;
  retry: boolean;
  stillRuns: boolean;
  final: boolean;
  change: boolean;
  first: boolean;
  verdict: boolean;
};
const T = true;
const F = false;
const row = (
  mayRun: boolean,
  retry: boolean,
  stillRuns: boolean,
  final: boolean,
  change: boolean,
  first: boolean,
  verdict: boolean,
): Row => ({ mayRun, retry, stillRuns, final, change, first, verdict });

//                                       run retry still final change first verdict
const EXPECTED: Record<IncidentState, Row> = {
  queued: /*                        */ row(T, F, F, F, F, F, F),
  deferred: /*                      */ row(T, F, F, F, F, F, F),
  preparing: /*                     */ row(F, F, T, F, F, F, F),
  running: /*                       */ row(F, F, T, F, F, F, F),
  succeeded: /*                     */ row(F, F, F, T, T, F, T),
  failed: /*                        */ row(F, T, F, T, T, F, T),
  rejected: /*                      */ row(F, T, F, T, F, T, F),
  interrupted: /*                   */ row(T, T, F, F, F, F, F),
  resolved: /*                      */ row(F, T, F, T, T, F, F),
};

describe('incident queries: every state', () => {
  for (const state of INCIDENT_STATES) {
    it(`${state}: may run ${EXPECTED[state].mayRun}, may be retried ${EXPECTED[state].retry}, final ${EXPECTED[state].final}`, () => {
      const r = record(state);
      const want = EXPECTED[state];
      expect(mayRun(r)).toBe(want.mayRun);
      expect(retryRefusal(r) === undefined).toBe(want.retry);
      expect(RETRYABLE_STATES.has(state)).toBe(want.retry);
      expect(mayStillRun(r)).toBe(want.stillRuns);
      expect(inEngine(state)).toBe(want.stillRuns);
      expect(isFinal(state)).toBe(want.final);
      expect(acceptsChange(state)).toBe(want.change);
      expect(isFirstJudgement(r)).toBe(want.first);
      expect(hasVerdict(state)).toBe(want.verdict);
      expect(isRejected(r)).toBe(state === 'rejected');
    });
  }

  it('a new incident (no record) is at its first judgement and cannot be run', () => {
    expect(isFirstJudgement(undefined)).toBe(true);
    expect(mayRun(undefined)).toBe(false);
  });
});

describe('the unstopped guard: an interrupted run that ignored its stop may still be running', () => {
  const unstopped = record('interrupted', { unstopped: true });

  it('still runs, and may be neither claimed nor retried until it is adopted', () => {
    expect(mayStillRun(unstopped)).toBe(true);
    expect(mayRun(unstopped)).toBe(false);
    expect(retryRefusal(unstopped)).toEqual({
      state: false,
      guard: expect.stringContaining('did not stop at shutdown and may still be running'),
    });
  });

  it('the machine refuses the retry and the claim with the guard as its reason', () => {
    for (const event of [
      { type: 'RetryRequested', by: 'cli' },
      { type: 'Claimed', runId: 'r2', holder: 'd:1' },
    ] as const) {
      let thrown: unknown;
      try {
        transition(unstopped, event, ctx);
      } catch (err) {
        thrown = err;
      }
      expect(thrown).toBeInstanceOf(IllegalTransitionError);
      expect((thrown as IllegalTransitionError).guard).toContain('may still be running');
    }
  });

  it('adoption clears it: the adopted run may be interrupted and then retried', () => {
    const adopted = transition(unstopped, { type: 'Adopted', runId: 'r1', holder: 'd:2' }, ctx).record;
    const stopped = transition(adopted, { type: 'Interrupted', runId: 'r1', reason: 'x' }, ctx).record;
    expect(retryRefusal(stopped)).toBeUndefined();
    expect(mayRun(stopped)).toBe(true);
  });

  it('a state the table does not allow is refused without a guard', () => {
    expect(retryRefusal(record('running'))).toEqual({ state: true });
  });
});

//                                             answer lastRunEnded stage
const MORE: Record<IncidentState, [boolean, boolean, 'pending' | 'running' | 'final']> = {
  queued: /*                              */ [F, F, 'pending'],
  deferred: /*                            */ [F, F, 'pending'],
  preparing: /*                           */ [F, F, 'running'],
  running: /*                             */ [F, F, 'running'],
  succeeded: /*                           */ [T, T, 'final'],
  failed: /*                              */ [F, T, 'final'],
  rejected: /*                            */ [F, T, 'final'],
  interrupted: /*                         */ [F, T, 'pending'],
  resolved: /*                            */ [F, T, 'final'],
};

describe('incident queries readers outside the machine ask (notify, status, intake, eval)', () => {
  it.each(INCIDENT_STATES)('%s: has an answer, its last run ended, where its run stands', (state) => {
    const [answer, ended, stage] = MORE[state];
    expect(hasAnswer(state)).toBe(answer);
    expect(lastRunEnded(state)).toBe(ended);
    expect(runStage(state)).toBe(stage);
  });

  it('a successful Finished leads to the one state that has an answer', () => {
    const running = record('running', { runs: [{ id: 'r1', status: 'running' }] });
    const next = transition(
      running,
      { type: 'Finished', runId: 'r1', outcome: { status: 'succeeded' } },
      ctx,
    );
    expect(INCIDENT_STATES.filter(hasAnswer)).toEqual([next.record.state]);
  });

  it('a state this version does not know counts as final and has neither answer nor verdict', () => {
    expect(runStage('archived')).toBe('final');
    expect(hasAnswer('archived')).toBe(false);
    expect(hasVerdict('archived')).toBe(false);
  });
});

describe('the verdict of a run nothing re-queues (replay, compare)', () => {
  it.each([
    ['succeeded', 'succeeded'],
    ['failed', 'failed'],
    ['timed_out', 'failed'],
    ['interrupted', 'failed'],
  ])('a %s run gives its incident %s, a state that has a verdict', (status, verdict) => {
    expect(verdictOfRun(status)).toBe(verdict);
    expect(hasVerdict(verdictOfRun(status))).toBe(true);
  });
});
