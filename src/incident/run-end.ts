import { backoffDelay } from '../util/backoff.js';
import type { IncidentState, RunStatus, StateFile } from '../workspace/state.js';
import type { RunEnding } from './lifecycle.js';
import type { EventOf, MachineContext, Next, RetryPolicy, RunOutcome, Step, Transition } from './types.js';

// A run's end: how it is judged (`runEnding`), and what each ending records and emits. Where each
// ending leads is the lifecycle's table (lifecycle.ts).

/** Attempts in the current series (a retry or a changed incident starts a new one). */
const attemptInSeries = (record: StateFile): number => record.attempts - (record.attemptBase ?? 0);

/** How a run ended, judged against the record's attempts and the retry policy. */
export function runEnding(outcome: RunOutcome, record: StateFile, policy: RetryPolicy): RunEnding {
  if (outcome.status === 'succeeded') return 'answered';
  if (outcome.status === 'interrupted') return 'interrupted';
  if (outcome.waitFor) return 'waiting';
  if (outcome.transient && attemptInSeries(record) < policy.max_attempts) return 'retrying';
  return 'failed';
}

/** What each ending's record is made from. */
interface Ended {
  base: StateFile;
  event: EventOf<'Finished'>;
  /** The state the table says this ending leads to. */
  to: IncidentState;
  next: Next;
  /** The runs, the finished one with its status. */
  runs: StateFile['runs'];
}

/** A finished run: an answer, an interruption, a wait for the engine, a retry after a transient failure, or failure. */
export function finished(
  { base, next }: Step,
  event: EventOf<'Finished'>,
  ends: Readonly<Record<RunEnding, IncidentState>>,
  ctx: MachineContext,
): Transition {
  const ending = runEnding(event.outcome, base, ctx.policy);
  const ended: Ended = {
    base,
    event,
    to: ends[ending],
    next,
    runs: withRunStatus(base, event.runId, event.outcome.status),
  };
  switch (ending) {
    case 'answered':
      return answered(ended);
    case 'interrupted':
      return interrupted(ended);
    case 'waiting':
      return waiting(ended);
    case 'retrying':
      return retrying(ended, ctx);
    case 'failed':
      return failed(ended);
  }
}

function answered({ base, event, to, next, runs }: Ended): Transition {
  return {
    record: next(to, { runs }),
    audit: [{ type: 'outcome', incidentId: base.incidentId, runId: event.runId, state: to }],
    metric: 'succeeded',
    log: { level: 'info', msg: 'run succeeded' },
  };
}

function interrupted({ base, event, to, next, runs }: Ended): Transition {
  const reason = event.outcome.reason ?? 'interrupted by daemon shutdown; re-queued at the next start';
  return {
    record: next(to, { runs, reason }),
    audit: [{ type: 'interrupted', incidentId: base.incidentId, runId: event.runId, reason }],
    metric: 'interrupted',
    log: { level: 'warn', msg: 'run interrupted', fields: { reason } },
  };
}

/** The attempt never reached the agent (the engine did not answer): it does not count. */
function waiting({ base, event, to, next, runs }: Ended): Transition {
  const { outcome, runId } = event;
  const waitFor = outcome.waitFor ?? 'what the run needs';
  const reason = `waiting for ${waitFor}: ${outcome.reason ?? 'unavailable'}; runs once it answers`;
  return {
    record: next(to, { runs, attempts: Math.max(0, base.attempts - 1), reason, waitingFor: waitFor }),
    audit: [{ type: 'waiting', incidentId: base.incidentId, runId, for: waitFor, reason: outcome.reason }],
    log: {
      level: 'warn',
      msg: `${waitFor} unavailable; the incident waits for it`,
      fields: { reason: outcome.reason },
    },
  };
}

function retrying({ base, event, to, next, runs }: Ended, ctx: MachineContext): Transition {
  const { outcome, runId } = event;
  const attempt = attemptInSeries(base);
  const { policy } = ctx;
  const delayMs = backoffDelay(
    attempt,
    { baseMs: policy.retry_base_delay, maxMs: policy.retry_max_delay },
    ctx.random,
  );
  const reason = `attempt ${attempt} of ${policy.max_attempts} failed transiently (${outcome.reason ?? outcome.status}); retrying in ${delayMs} ms`;
  const retryAt = ctx.now + delayMs;
  return {
    record: next(to, { runs, reason, retryAt: new Date(retryAt).toISOString() }),
    audit: [{ type: 'retry_scheduled', incidentId: base.incidentId, runId, attempt, delayMs, reason }],
    metric: 'retried',
    log: { level: 'warn', msg: 'transient failure, retry scheduled', fields: { reason, delayMs } },
    retryAt,
  };
}

function failed({ base, event, to, next, runs }: Ended): Transition {
  const { outcome, runId } = event;
  const why =
    outcome.reason ??
    (outcome.status === 'timed_out'
      ? 'the agent timed out'
      : `the run failed (exit code ${String(outcome.exitCode)})`);
  const reason = outcome.transient
    ? `gave up after ${attemptInSeries(base)} attempts (scheduling.max_attempts): ${why}`
    : why;
  return {
    record: next(to, { runs, reason }),
    audit: [{ type: 'outcome', incidentId: base.incidentId, runId, state: to, reason }],
    metric: 'failed',
    log: { level: 'warn', msg: 'run failed', fields: { reason } },
  };
}

/** The runs with `runId`'s status set. */
export const withRunStatus = (record: StateFile, runId: string, status: RunStatus): StateFile['runs'] =>
  record.runs.map((r) => (r.id === runId ? { ...r, status } : r));
