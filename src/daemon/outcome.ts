import type { AuditEventType } from '../audit/log.js';
import type { IncidentState, RunStatus } from '../intake/types.js';
import { retryDelay } from '../intake/scheduler.js';
import type { IncidentOutcome } from '../server/metrics.js';
import type { RunOutcome } from './types.js';

// What a finished (or vanished) run means for the incident: next state, run status, reason, retry.
// Pure, so the retry and give-up rules are tested without a daemon.

export interface OutcomeDecision {
  state: Extract<IncidentState, 'queued' | 'succeeded' | 'failed' | 'interrupted'>;
  runStatus: RunStatus;
  reason?: string;
  /** Set for a transient failure that will be retried: wait this long first. */
  retryDelayMs?: number;
  /** An audit event beyond `released`, when the outcome deserves one. */
  audit?: AuditEventType;
  metric?: IncidentOutcome;
}

export interface RetryPolicy {
  max_attempts: number;
  retry_base_delay: number;
  retry_max_delay: number;
}

export function decideOutcome(
  outcome: RunOutcome | 'gone',
  attempt: number,
  policy: RetryPolicy,
  random: () => number = Math.random,
): OutcomeDecision {
  if (outcome === 'gone') {
    return {
      state: 'queued',
      runStatus: 'interrupted',
      reason: 'the run was gone after a daemon restart; re-queued',
      audit: 'requeued',
    };
  }
  if (outcome.status === 'succeeded')
    return { state: 'succeeded', runStatus: 'succeeded', metric: 'succeeded' };
  if (outcome.status === 'interrupted') {
    return {
      state: 'interrupted',
      runStatus: 'interrupted',
      reason: outcome.reason ?? 'interrupted by daemon shutdown; re-queued at the next start',
      audit: 'interrupted',
      metric: 'interrupted',
    };
  }
  if (outcome.transient && attempt < policy.max_attempts) {
    const delayMs = retryDelay(attempt, policy.retry_base_delay, policy.retry_max_delay, random);
    return {
      state: 'queued',
      runStatus: outcome.status,
      reason: `attempt ${attempt} of ${policy.max_attempts} failed transiently (${outcome.reason ?? outcome.status}); retrying in ${delayMs} ms`,
      retryDelayMs: delayMs,
      audit: 'retry_scheduled',
      metric: 'retried',
    };
  }
  const why =
    outcome.reason ??
    (outcome.status === 'timed_out'
      ? 'the agent timed out'
      : `the run failed (exit code ${String(outcome.exitCode)})`);
  return {
    state: 'failed',
    runStatus: outcome.status,
    reason: outcome.transient ? `gave up after ${attempt} attempts (scheduling.max_attempts): ${why}` : why,
    metric: 'failed',
  };
}
