import { nextDelayMs, type RetryPolicy } from './delivery.js';
import type { OutboxEntry, RecordedError, StepResult, StepState } from './types.js';

// The outbox entry's delivery lifecycle as one pure function, like the incident machine: every change
// of an entry is `deliveryTransition(entry, event, ctx)`, returning the next entry and the phase it is
// in; the notifier applies it (writes the entry) in one place.
//
//   pending ──Sending──▶ sending ──StepDelivered──▶ pending (next step) ──Delivered──▶ delivered
//      ▲                    │
//      └──── retrying ◀─────┴──Failed (retryable, attempts left)
//                           └──Failed (permanent, or out of attempts)──▶ given up

/** Where a delivery is, read from its entry. */
export type DeliveryPhase = 'pending' | 'sending' | 'delivered' | 'retrying' | 'given up';

export type DeliveryEvent =
  /** A step's request is about to leave: a crash from here on leaves it to reconcile. */
  | { type: 'Sending'; step: string }
  /** The sink acknowledged a step (or reconciling found it there). */
  | { type: 'StepDelivered'; step: string; result: StepResult }
  /** Every step is delivered. */
  | { type: 'Delivered' }
  /**
   * An attempt failed (at a step, or before any: a missing sink or secret). A request that may have
   * reached the sink (`uncertain`) leaves its step `sending`, reconciled before the next send.
   */
  | { type: 'Failed'; step?: string; error: RecordedError; uncertain: boolean; retryAfterMs?: number };

export interface DeliveryContext {
  now: number;
  policy: RetryPolicy;
  random: () => number;
}

export interface DeliveryTransition {
  entry: OutboxEntry;
  phase: DeliveryPhase;
  /** Set when retrying: the wait before the next attempt. */
  delayMs?: number;
}

export class IllegalDeliveryError extends Error {
  constructor(
    readonly key: string,
    readonly phase: DeliveryPhase,
    readonly event: DeliveryEvent['type'],
  ) {
    super(`outbox entry ${key}: ${event} is not possible once ${phase}`);
    this.name = 'IllegalDeliveryError';
  }
}

export function deliveryPhase(entry: OutboxEntry): DeliveryPhase {
  if (entry.status === 'delivered') return 'delivered';
  if (entry.status === 'failed') return 'given up';
  if (entry.nextAttemptAt) return 'retrying';
  return entry.steps.some((s) => s.status === 'sending') ? 'sending' : 'pending';
}

/** The next entry for `event`; an entry that has ended (delivered, given up) takes no event. Pure. */
export function deliveryTransition(
  entry: OutboxEntry,
  event: DeliveryEvent,
  ctx: DeliveryContext,
): DeliveryTransition {
  const from = deliveryPhase(entry);
  if (from === 'delivered' || from === 'given up')
    throw new IllegalDeliveryError(entry.key, from, event.type);
  const at = new Date(ctx.now).toISOString();
  const withStep = (id: string, change: Partial<StepState>): StepState[] =>
    entry.steps.map((s) => (s.id === id ? { ...s, ...change } : s));
  const { nextAttemptAt: _n, ...rest } = entry;
  switch (event.type) {
    case 'Sending': {
      const next = { ...rest, steps: withStep(event.step, { status: 'sending', startedAt: at }) };
      return { entry: next, phase: 'sending' };
    }
    case 'StepDelivered': {
      // Progress resets the backoff: a long Slack thread may meet several rate limits on its way.
      const next: OutboxEntry = {
        ...rest,
        attempts: 0,
        steps: withStep(event.step, { status: 'delivered', deliveredAt: at, result: event.result }),
      };
      return { entry: next, phase: deliveryPhase(next) };
    }
    case 'Delivered':
      return { entry: { ...rest, status: 'delivered', finishedAt: at }, phase: 'delivered' };
    case 'Failed':
      return failed(entry, event, ctx, at);
  }
}

function failed(
  entry: OutboxEntry,
  event: Extract<DeliveryEvent, { type: 'Failed' }>,
  ctx: DeliveryContext,
  at: string,
): DeliveryTransition {
  const { nextAttemptAt: _n, ...rest } = entry;
  const attempts = entry.attempts + 1;
  const steps = event.uncertain
    ? entry.steps
    : entry.steps.map((s) =>
        s.id === event.step && s.status === 'sending' ? { ...s, status: 'pending' as const } : s,
      );
  const base = { ...rest, attempts, lastError: event.error, steps };
  if (event.error.kind === 'permanent' || attempts >= ctx.policy.maxAttempts)
    return { entry: { ...base, status: 'failed', finishedAt: at }, phase: 'given up' };
  const delayMs = nextDelayMs(attempts, ctx.policy, event.retryAfterMs, ctx.random);
  return {
    entry: { ...base, nextAttemptAt: new Date(ctx.now + delayMs).toISOString() },
    phase: 'retrying',
    delayMs,
  };
}
