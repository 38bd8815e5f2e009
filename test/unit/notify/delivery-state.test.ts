// The outbox delivery lifecycle as a table: pending → sending → delivered | retrying | given up, pure.
import { describe, expect, it } from 'vitest';
import {
  deliveryPhase,
  deliveryTransition,
  IllegalDeliveryError,
  type DeliveryContext,
  type DeliveryEvent,
} from '../../../src/notify/delivery-state.js';
import type { OutboxEntry, RecordedError } from '../../../src/notify/types.js';

const ctx: DeliveryContext = {
  now: Date.parse('2026-03-01T10:00:00.000Z'),
  policy: { maxAttempts: 3, baseDelayMs: 1000, maxDelayMs: 60_000 },
  random: () => 1,
};

const entry = (over: Partial<OutboxEntry> = {}): OutboxEntry => ({
  version: 1,
  key: 'run-1.slack',
  idempotencyKey: 'inc/run-1.slack',
  sink: 'slack',
  type: 'slack',
  incidentId: 'inc',
  runId: 'run-1',
  trigger: 'finished',
  createdAt: '2026-03-01T09:00:00.000Z',
  status: 'pending',
  attempts: 0,
  steps: [
    { id: 'parent', status: 'pending' },
    { id: 'reply', status: 'pending' },
  ],
  ...over,
});

const retryError: RecordedError = { message: 'HTTP 503', kind: 'retry', status: 503 };
const permanentError: RecordedError = { message: 'HTTP 404', kind: 'permanent', status: 404 };
const failed = (over: Partial<Extract<DeliveryEvent, { type: 'Failed' }>> = {}): DeliveryEvent => ({
  type: 'Failed',
  step: 'parent',
  error: retryError,
  uncertain: false,
  ...over,
});

const sending = entry({
  steps: [
    { id: 'parent', status: 'sending', startedAt: 'x' },
    { id: 'reply', status: 'pending' },
  ],
});
const retrying = entry({ attempts: 1, nextAttemptAt: '2026-03-01T10:00:01.000Z' });
const delivered = entry({ status: 'delivered', finishedAt: 'x' });
const givenUp = entry({ status: 'failed', finishedAt: 'x' });

const EVENTS: Record<DeliveryEvent['type'], DeliveryEvent> = {
  Sending: { type: 'Sending', step: 'parent' },
  StepDelivered: { type: 'StepDelivered', step: 'parent', result: { ts: '1.2' } },
  Delivered: { type: 'Delivered' },
  Failed: failed(),
};

/** phase → event → the phase it leads to (undefined: illegal). */
const TABLE: [string, OutboxEntry, Record<DeliveryEvent['type'], string | undefined>][] = [
  [
    'pending',
    entry(),
    { Sending: 'sending', StepDelivered: 'pending', Delivered: 'delivered', Failed: 'retrying' },
  ],
  [
    'sending',
    sending,
    { Sending: 'sending', StepDelivered: 'pending', Delivered: 'delivered', Failed: 'retrying' },
  ],
  [
    'retrying',
    retrying,
    { Sending: 'sending', StepDelivered: 'pending', Delivered: 'delivered', Failed: 'retrying' },
  ],
  [
    'delivered',
    delivered,
    { Sending: undefined, StepDelivered: undefined, Delivered: undefined, Failed: undefined },
  ],
  [
    'given up',
    givenUp,
    { Sending: undefined, StepDelivered: undefined, Delivered: undefined, Failed: undefined },
  ],
];

describe('outbox delivery transition: every event in every phase', () => {
  for (const [phase, from, row] of TABLE) {
    for (const [type, to] of Object.entries(row) as [DeliveryEvent['type'], string | undefined][]) {
      it(`${phase} + ${type} → ${to ?? 'illegal'}`, () => {
        expect(deliveryPhase(from)).toBe(phase);
        if (to === undefined) {
          expect(() => deliveryTransition(from, EVENTS[type], ctx)).toThrow(IllegalDeliveryError);
          return;
        }
        const next = deliveryTransition(from, EVENTS[type], ctx);
        expect(next.phase).toBe(to);
        expect(deliveryPhase(next.entry)).toBe(to);
      });
    }
  }
});

describe('outbox delivery transition: the rules', () => {
  it('does not change the entry it is given', () => {
    const before = entry();
    const copy = structuredClone(before);
    deliveryTransition(before, EVENTS.Sending, ctx);
    deliveryTransition(before, failed(), ctx);
    expect(before).toEqual(copy);
  });

  it('a delivered step resets the backoff and clears the retry time', () => {
    const next = deliveryTransition(retrying, EVENTS.StepDelivered, ctx).entry;
    expect(next.attempts).toBe(0);
    expect(next.nextAttemptAt).toBeUndefined();
    expect(next.steps[0]).toEqual({
      id: 'parent',
      status: 'delivered',
      deliveredAt: '2026-03-01T10:00:00.000Z',
      result: { ts: '1.2' },
    });
  });

  it('a retryable failure schedules the next attempt with backoff, or honours Retry-After', () => {
    const first = deliveryTransition(entry(), failed(), ctx);
    expect(first).toMatchObject({ phase: 'retrying', delayMs: 1000 });
    expect(first.entry).toMatchObject({
      attempts: 1,
      lastError: retryError,
      nextAttemptAt: '2026-03-01T10:00:01.000Z',
    });
    const second = deliveryTransition(first.entry, failed({ retryAfterMs: 30_000 }), ctx);
    expect(second).toMatchObject({ phase: 'retrying', delayMs: 30_000 });
  });

  it('gives up on a permanent failure at once, and on a retryable one when out of attempts', () => {
    expect(deliveryTransition(entry(), failed({ error: permanentError }), ctx).entry).toMatchObject({
      status: 'failed',
      attempts: 1,
      finishedAt: '2026-03-01T10:00:00.000Z',
    });
    const last = deliveryTransition(entry({ attempts: 2, nextAttemptAt: 'x' }), failed(), ctx);
    expect(last.phase).toBe('given up');
    expect(last.entry.nextAttemptAt).toBeUndefined();
  });

  it('a request that may have reached the sink stays sending (reconciled next); a certain failure does not', () => {
    expect(deliveryTransition(sending, failed({ uncertain: true }), ctx).entry.steps[0]?.status).toBe(
      'sending',
    );
    expect(deliveryTransition(sending, failed({ uncertain: false }), ctx).entry.steps[0]?.status).toBe(
      'pending',
    );
  });

  it('a failure before any step (a sink gone from the config) counts an attempt and touches no step', () => {
    const next = deliveryTransition(
      entry(),
      { type: 'Failed', error: permanentError, uncertain: false },
      ctx,
    );
    expect(next.phase).toBe('given up');
    expect(next.entry.steps).toEqual(entry().steps);
  });
});
