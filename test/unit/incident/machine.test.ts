// The incident state machine as a table: every event in every state is either a listed legal move (with
// the state it leads to) or an IllegalTransitionError; plus the retry, wait and give-up rules.
import { describe, expect, it } from 'vitest';
import {
  IllegalTransitionError,
  isAllowed,
  transition,
  type IncidentEvent,
} from '../../../src/incident/machine.js';
import { INCIDENT_STATES, type IncidentState } from '../../../src/workspace/state.js';
import { MACHINE_CTX, SAMPLE_EVENTS, stateRecord } from '../../support/incident-machine.js';

const ctx = MACHINE_CTX;

const record = stateRecord;

const EVENTS = SAMPLE_EVENTS;

/** from (or 'new') → event → the state it leads to. Anything not listed is illegal. */
const LEGAL: Record<IncidentState | 'new', Partial<Record<IncidentEvent['type'], IncidentState>>> = {
  new: {
    Invalid: 'rejected',
    Duplicate: 'rejected',
    QueueFull: 'deferred',
    Validated: 'queued',
    Resolved: 'resolved',
  },
  rejected: {
    Invalid: 'rejected',
    Duplicate: 'rejected',
    QueueFull: 'deferred',
    Validated: 'queued',
    RetryRequested: 'queued',
  },
  deferred: {
    Invalid: 'rejected',
    QueueFull: 'deferred',
    Validated: 'queued',
    Claimed: 'preparing',
    Resolved: 'resolved',
  },
  queued: {
    Invalid: 'rejected',
    QueueFull: 'deferred',
    Validated: 'queued',
    Claimed: 'preparing',
    Resolved: 'resolved',
    Interrupted: 'interrupted',
  },
  preparing: {
    Launched: 'running',
    Finished: 'succeeded',
    Gone: 'queued',
    Interrupted: 'interrupted',
    Adopted: 'running',
    Progress: 'preparing',
    Resolved: 'preparing',
  },
  running: {
    Progress: 'running',
    Finished: 'succeeded',
    Gone: 'queued',
    Interrupted: 'interrupted',
    Adopted: 'running',
    Resolved: 'running',
  },
  interrupted: {
    Invalid: 'rejected',
    QueueFull: 'deferred',
    Validated: 'queued',
    Claimed: 'preparing',
    Adopted: 'running',
    Interrupted: 'interrupted',
    RetryRequested: 'queued',
    Resolved: 'resolved',
  },
  succeeded: { IncidentChanged: 'queued' },
  failed: { IncidentChanged: 'queued', RetryRequested: 'queued' },
  resolved: { IncidentChanged: 'queued', RetryRequested: 'queued' },
};

describe('incident state machine: every event in every state', () => {
  for (const from of ['new', ...INCIDENT_STATES] as const) {
    for (const event of Object.values(EVENTS)) {
      const to = LEGAL[from][event.type];
      const current = from === 'new' ? undefined : record(from);
      it(`${from} + ${event.type} → ${to ?? 'illegal'}`, () => {
        expect(isAllowed(current?.state, event.type)).toBe(to !== undefined);
        if (to === undefined) {
          expect(() => transition(current, event, ctx)).toThrow(IllegalTransitionError);
          return;
        }
        const t = transition(current, event, ctx);
        expect(t.record.state).toBe(to);
        if (!t.unchanged) expect(t.record.updatedAt).toBe('2026-11-23T10:00:00.000Z');
      });
    }
  }
});

describe('what transitions record and emit', () => {
  it('counts an attempt and adds a run at the claim, then marks it at the end', () => {
    const claimed = transition(record('queued', { runs: [] }), EVENTS.Claimed, ctx);
    expect(claimed.record).toMatchObject({
      state: 'preparing',
      attempts: 2,
      runs: [{ id: 'r2', status: 'running' }],
    });
    expect(claimed.audit).toEqual([
      { type: 'claimed', incidentId: 'inc-1', runId: 'r2', holder: 'd:1', attempt: 2 },
    ]);
    const done = transition(
      claimed.record,
      { type: 'Finished', runId: 'r2', outcome: { status: 'failed', exitCode: 2 } },
      ctx,
    );
    expect(done.record).toMatchObject({
      state: 'failed',
      reason: 'the run failed (exit code 2)',
      runs: [{ id: 'r2', status: 'failed' }],
    });
    expect(done.metric).toBe('failed');
  });

  it('retries a transient failure with a growing delay until max_attempts, then gives up', () => {
    const fail = (attempts: number) =>
      transition(
        record('running', { attempts }),
        {
          type: 'Finished',
          runId: 'r1',
          outcome: { status: 'failed', transient: true, reason: 'disk full' },
        },
        ctx,
      );
    const first = fail(1);
    expect(first.record.state).toBe('queued');
    expect(first.retryAt).toBe(ctx.now + 1000);
    expect(first.record.reason).toMatch(
      /attempt 1 of 3 failed transiently \(disk full\); retrying in 1000 ms/,
    );
    expect(first.audit[0]).toMatchObject({ type: 'retry_scheduled', delayMs: 1000 });
    expect(fail(2).retryAt).toBe(ctx.now + 2000);
    expect(fail(3).record).toMatchObject({
      state: 'failed',
      reason: 'gave up after 3 attempts (scheduling.max_attempts): disk full',
    });
  });

  it('does not burn an attempt on an engine that does not answer: the incident waits for it', () => {
    const t = transition(
      record('preparing', { attempts: 3 }),
      {
        type: 'Finished',
        runId: 'r1',
        outcome: {
          status: 'failed',
          transient: true,
          waitFor: 'the container engine',
          reason: 'ECONNREFUSED',
        },
      },
      ctx,
    );
    expect(t.record).toMatchObject({ state: 'queued', attempts: 2, waitingFor: 'the container engine' });
    expect(t.record.reason).toMatch(/waiting for the container engine: ECONNREFUSED/);
  });

  it('a retry starts a new series of attempts and keeps the runs', () => {
    const failed = record('failed', {
      attempts: 3,
      reason: 'gave up',
      runs: [{ id: 'r1', status: 'failed' }],
    });
    const t = transition(failed, EVENTS.RetryRequested, ctx);
    expect(t.record).toMatchObject({ state: 'queued', attempts: 3, attemptBase: 3, runs: failed.runs });
    expect(t.record.reason).toBeUndefined();
    const next = transition(
      { ...t.record, state: 'running', attempts: 4 },
      { type: 'Finished', runId: 'r9', outcome: { status: 'failed', transient: true } },
      ctx,
    );
    expect(next.record.state).toBe('queued');
    expect(next.record.reason).toMatch(/attempt 1 of 3/);
  });

  it('neither a timeout nor a permanent failure is retried', () => {
    const t = transition(
      record('running'),
      { type: 'Finished', runId: 'r1', outcome: { status: 'timed_out' } },
      ctx,
    );
    expect(t.record).toMatchObject({
      state: 'failed',
      reason: 'the agent timed out',
      runs: [{ id: 'r1', status: 'timed_out' }],
    });
  });

  it('a gone run is queued again and an interrupted one is recorded interrupted (unstopped when it ignored the stop)', () => {
    expect(transition(record('running'), EVENTS.Gone, ctx).record).toMatchObject({
      state: 'queued',
      runs: [{ id: 'r1', status: 'interrupted' }],
    });
    const unstopped = transition(
      record('running'),
      { type: 'Interrupted', runId: 'r1', reason: 'x', unstopped: true },
      ctx,
    );
    expect(unstopped.record).toMatchObject({ state: 'interrupted', unstopped: true });
    expect(transition(unstopped.record, EVENTS.Adopted, ctx).record.unstopped).toBeUndefined();
  });

  it('records validated only at the first judgement, and requeued for an interrupted incident', () => {
    expect(transition(undefined, EVENTS.Validated, ctx).audit.map((a) => a.type)).toEqual([
      'validated',
      'queued',
    ]);
    expect(transition(record('interrupted'), EVENTS.Validated, ctx).audit.map((a) => a.type)).toEqual([
      'requeued',
    ]);
    expect(transition(record('queued', { incidentSha256: 'bbb' }), EVENTS.Validated, ctx).unchanged).toBe(
      true,
    );
  });

  it('a changed incident.json after success starts a new series with the new bytes', () => {
    const t = transition(record('succeeded', { attempts: 1 }), EVENTS.IncidentChanged, ctx);
    expect(t.record).toMatchObject({ state: 'queued', incidentSha256: 'ccc', attemptBase: 1 });
    expect(t.audit[0]).toMatchObject({
      type: 'incident_changed',
      sha256: 'ccc',
      previousSha256: 'aaa',
      previousState: 'succeeded',
    });
  });

  it('a resolved alert ends a waiting incident without a run', () => {
    const t = transition(record('queued'), EVENTS.Resolved, ctx);
    expect(t.record).toMatchObject({
      state: 'resolved',
      resolvedAt: '2026-11-23T09:59:00.000Z',
      reason: 'alert resolved',
    });
    expect(t.metric).toBe('resolved');
  });

  it('a running investigation goes on when its alert resolves, and its record keeps when', () => {
    const t = transition(record('running'), EVENTS.Resolved, ctx);
    expect(t.record).toMatchObject({ state: 'running', resolvedAt: '2026-11-23T09:59:00.000Z' });
    expect(t.audit[0]).toMatchObject({ type: 'resolved', running: true });
    expect(transition(t.record, EVENTS.Resolved, ctx).unchanged).toBe(true);
    const done = transition(t.record, EVENTS.Finished, ctx);
    expect(done.record).toMatchObject({ state: 'succeeded', resolvedAt: '2026-11-23T09:59:00.000Z' });
  });

  it('progress is kept while running and dropped on the next move', () => {
    const p = transition(record('running'), EVENTS.Progress, ctx);
    expect(p.record.progress?.turns).toBe(2);
    expect(p.audit).toEqual([]);
    expect(transition(p.record, EVENTS.Finished, ctx).record.progress).toBeUndefined();
  });

  it('the error names the event, the state and what is allowed there', () => {
    expect(() => transition(record('succeeded'), EVENTS.Claimed, ctx)).toThrow(
      'illegal transition: Claimed in state succeeded; allowed there: IncidentChanged',
    );
  });
});
