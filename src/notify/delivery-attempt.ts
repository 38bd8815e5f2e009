import type { AuditEvent } from '../audit/log.js';
import type { Config, NotifySinkConfig } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { Redactor } from '../log/redact.js';
import { triageDir } from '../workspace/layout.js';
import { errorMessage } from '../util/errors.js';
import { DeliveryError, type RetryPolicy } from './delivery.js';
import {
  deliveryTransition,
  type DeliveryEvent,
  type DeliveryPhase,
  type DeliveryTransition,
} from './delivery-state.js';
import type { NotifyMetrics } from './metrics.js';
import { listEntries, lockEntry, readEntry, readPayload, saveEntry } from '../workspace/outbox.js';
import { earlierDeliveries, recordedBefore, sameThread } from './planner.js';
import { BUSY_RETRY_MS, dueAt, type DeliveryScheduler } from './scheduler.js';
import type {
  OutboxEntry,
  RecordedError,
  SendContext,
  SinkAdapter,
  SinkPayload,
  StepResult,
  StepState,
} from './types.js';

// One delivery attempt: under the entry's lock, every step not yet delivered, in order, each recorded
// as it goes through the pure delivery transition (delivery-state.ts), applied here and only here.

export interface AttemptDeps {
  notify: Config['notify'];
  secrets: Record<string, string>;
  redactor: Redactor;
  audit: { append(triageDir: string, event: AuditEvent): Promise<unknown> };
  log: Logger;
  metrics?: NotifyMetrics;
  adapters: Record<string, SinkAdapter<SinkPayload>>;
  fetch: typeof fetch;
  now: () => number;
  random: () => number;
}

type Lock = { touch(): Promise<void> };

export class DeliveryAttempts {
  private readonly policy: RetryPolicy;

  constructor(
    private readonly deps: AttemptDeps,
    private readonly scheduler: DeliveryScheduler,
  ) {
    this.policy = {
      maxAttempts: deps.notify.retry.max_attempts,
      baseDelayMs: deps.notify.retry.base_delay,
      maxDelayMs: deps.notify.retry.max_delay,
    };
  }

  adapterFor(sink: Pick<NotifySinkConfig, 'type'>): SinkAdapter<SinkPayload> {
    const adapter = this.deps.adapters[sink.type];
    if (!adapter) throw new Error(`no adapter for sink type ${sink.type}`);
    return adapter;
  }

  /** One attempt at the entry; a one-message delivery that ended wakes the next of its incident. */
  async attempt(workspaceDir: string, key: string): Promise<void> {
    const staleMs = Math.max(10 * 60_000, 4 * this.deps.notify.request_timeout);
    const lock = await lockEntry(workspaceDir, key, staleMs);
    if (!lock) {
      this.scheduler.schedule(workspaceDir, key, this.deps.now() + BUSY_RETRY_MS);
      return;
    }
    try {
      await this.attemptLocked(workspaceDir, key, lock);
    } finally {
      await lock.release();
    }
    const after = await readEntry(workspaceDir, key);
    if (after && after.status !== 'pending' && this.deps.adapters[after.type]?.keepsOneMessage)
      await this.wakeFollowers(workspaceDir, after);
  }

  /** An audit event never stops a delivery: a failure to record it is logged. */
  async audit(workspaceDir: string, event: AuditEvent): Promise<void> {
    try {
      await this.deps.audit.append(triageDir(workspaceDir), event);
    } catch (err) {
      this.deps.log.warn(
        { workspace: workspaceDir, event: event.type, err: errorMessage(err) },
        'audit event not recorded',
      );
    }
  }

  private async attemptLocked(workspaceDir: string, key: string, lock: Lock): Promise<void> {
    const entry = await readEntry(workspaceDir, key);
    if (!entry || entry.status !== 'pending') return;
    const due = dueAt(entry, this.deps.now());
    if (due > this.deps.now() + 50) return this.scheduler.schedule(workspaceDir, key, due);
    const checked = this.checkSink(entry);
    if ('refused' in checked) return this.fail(workspaceDir, entry, undefined, checked.refused);
    const { sink } = checked;
    const adapter = this.adapterFor(sink);
    if (adapter.keepsOneMessage) {
      // One message per incident: an earlier delivery still under way goes first and wakes this one.
      if (await this.waitsBehind(workspaceDir, entry)) return;
      const parent = entry.parent ?? (await earlierDeliveries(workspaceDir, entry)).parents.get(entry.sink);
      if (parent) entry.parent = parent;
    }
    const ctx = await this.context(workspaceDir, entry, sink);
    for (const { id } of entry.steps) {
      const step = ctx.entry.steps.find((s) => s.id === id);
      if (!step || step.status === 'delivered') continue;
      if (this.scheduler.closed) return;
      await lock.touch();
      const sent = await this.deliverStep(workspaceDir, step, adapter, ctx);
      if (!sent) return;
      ctx.entry = sent.entry;
      ctx.results[id] = sent.result;
    }
    await this.apply(workspaceDir, ctx.entry, { type: 'Delivered' }, () => [
      {
        type: 'notify_delivered',
        incidentId: entry.incidentId,
        runId: entry.runId,
        sink: entry.sink,
        key,
        steps: entry.steps.length,
      },
    ]);
    this.logFor(entry).info({ steps: entry.steps.length }, 'notification delivered');
  }

  /** The entry's sink, or why it cannot be sent now: gone or changed type (permanent), or no secret. */
  private checkSink(entry: OutboxEntry): { sink: NotifySinkConfig } | { refused: DeliveryError } {
    const sink = this.deps.notify.sinks.find((s) => s.name === entry.sink);
    if (!sink || sink.type !== entry.type) {
      const why = sink
        ? `sink ${entry.sink} is now of type ${sink.type}, not ${entry.type}`
        : `sink ${entry.sink} is no longer in notify.sinks`;
      return { refused: new DeliveryError(`${why}; not delivered`, 'permanent') };
    }
    if (!this.deps.secrets[sink.secret])
      return {
        refused: new DeliveryError(
          `secret ${sink.secret} has no value (see secrets.${sink.secret}); retrying`,
          'retry',
        ),
      };
    return { sink };
  }

  private async context(
    workspaceDir: string,
    entry: OutboxEntry,
    sink: NotifySinkConfig,
  ): Promise<SendContext> {
    const notesSecret = sink.notes ? this.deps.secrets[sink.notes.secret] : undefined;
    const results: Record<string, StepResult> = {};
    for (const step of entry.steps)
      if (step.status === 'delivered' && step.result) results[step.id] = step.result;
    return {
      sink,
      credentials: { secret: this.deps.secrets[sink.secret]!, ...(notesSecret ? { notesSecret } : {}) },
      payload: await readPayload(workspaceDir, entry.key),
      entry,
      results,
      timeoutMs: this.deps.notify.request_timeout,
      fetch: this.deps.fetch,
      now: this.deps.now,
    };
  }

  /**
   * A delivery of the same incident to the same one-message sink, recorded before this one, is still
   * pending: this one waits (it is woken when that one ends; the timer is only a fallback).
   */
  private async waitsBehind(workspaceDir: string, entry: OutboxEntry): Promise<boolean> {
    const { entries } = await listEntries(workspaceDir);
    const ahead = entries.find(
      (e) => e.status === 'pending' && sameThread(e, entry) && recordedBefore(e, entry),
    );
    if (!ahead) return false;
    const now = this.deps.now();
    this.scheduler.schedule(workspaceDir, entry.key, Math.max(dueAt(ahead, now), now) + BUSY_RETRY_MS);
    return true;
  }

  /** A one-message delivery ended (delivered or given up): the next one of its incident goes now. */
  private async wakeFollowers(workspaceDir: string, ended: OutboxEntry): Promise<void> {
    const { entries } = await listEntries(workspaceDir).catch(() => ({ entries: [] as OutboxEntry[] }));
    const next = entries
      .filter((e) => e.status === 'pending' && sameThread(e, ended) && recordedBefore(ended, e))
      .sort((a, b) => (recordedBefore(a, b) ? -1 : 1))[0];
    if (next) this.scheduler.schedule(workspaceDir, next.key, dueAt(next, this.deps.now()));
  }

  /** Sends (or first reconciles) one step; undefined when the attempt stops here (failure recorded). */
  private async deliverStep(
    workspaceDir: string,
    step: StepState,
    adapter: SinkAdapter<SinkPayload>,
    ctx: SendContext,
  ): Promise<{ entry: OutboxEntry; result: StepResult } | undefined> {
    let entry = ctx.entry;
    try {
      if (step.status === 'sending' && adapter.reconcile) {
        const found = await adapter.reconcile(ctx, step.id, step.startedAt ?? entry.createdAt);
        if (found) return await this.delivered(workspaceDir, entry, step.id, found, 'reconciled');
      }
      entry = (await this.apply(workspaceDir, entry, { type: 'Sending', step: step.id })).entry;
      ctx.entry = entry;
      const result = await adapter.send(ctx, step.id);
      return await this.delivered(workspaceDir, entry, step.id, result, 'delivered');
    } catch (err) {
      const failure =
        err instanceof DeliveryError
          ? err
          : new DeliveryError(`${errorMessage(err)}; retrying`, 'retry', { uncertain: true, cause: err });
      await this.fail(workspaceDir, entry, step.id, failure);
      return undefined;
    }
  }

  private async delivered(
    workspaceDir: string,
    entry: OutboxEntry,
    step: string,
    result: StepResult,
    outcome: 'delivered' | 'reconciled',
  ): Promise<{ entry: OutboxEntry; result: StepResult }> {
    const next = await this.apply(workspaceDir, entry, { type: 'StepDelivered', step, result });
    await this.audit(workspaceDir, {
      type: 'notify_attempted',
      incidentId: entry.incidentId,
      runId: entry.runId,
      sink: entry.sink,
      key: entry.key,
      step,
      outcome,
      result,
    });
    return { entry: next.entry, result };
  }

  /** Records a failed attempt: scheduled again, or failed for good (permanent, or out of attempts). */
  private async fail(
    workspaceDir: string,
    entry: OutboxEntry,
    step: string | undefined,
    failure: DeliveryError,
  ): Promise<void> {
    const recorded = this.recordedError(failure);
    const event: DeliveryEvent = {
      type: 'Failed',
      ...(step !== undefined ? { step } : {}),
      error: recorded,
      uncertain: failure.uncertain,
      ...(failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
    };
    const attempt = entry.attempts + 1;
    const base = {
      incidentId: entry.incidentId,
      runId: entry.runId,
      sink: entry.sink,
      key: entry.key,
      ...(step !== undefined ? { step } : {}),
      attempt,
    };
    const log = this.logFor(entry);
    const applied = await this.apply(workspaceDir, entry, event, (phase) =>
      phase === 'given up'
        ? [
            { type: 'notify_attempted', ...base, outcome: 'failed', error: recorded },
            {
              type: 'notify_failed',
              ...base,
              reason: failure.kind === 'permanent' ? 'permanent' : 'attempts exhausted',
              error: recorded,
            },
          ]
        : [],
    );
    if (applied.phase === 'given up') {
      log.error(
        { step, attempt, error: recorded },
        failure.kind === 'permanent'
          ? 'notification failed permanently; not retried'
          : `notification failed ${attempt} times (notify.retry.max_attempts); not retried`,
      );
      return;
    }
    this.deps.metrics?.notification(entry.sink, 'retried');
    await this.audit(workspaceDir, {
      type: 'notify_attempted',
      ...base,
      outcome: 'retry',
      retryAt: applied.entry.nextAttemptAt,
      error: recorded,
    });
    log.warn(
      { step, attempt, delayMs: applied.delayMs, error: recorded.message },
      'notification attempt failed; retrying',
    );
    this.scheduler.schedule(workspaceDir, entry.key, dueAt(applied.entry, this.deps.now()));
  }

  /** A failure as recorded: through the redactor, never a secret. */
  private recordedError(failure: DeliveryError): RecordedError {
    return this.deps.redactor.redactValue<RecordedError>({
      message: failure.message,
      kind: failure.kind,
      ...(failure.status !== undefined ? { status: failure.status } : {}),
      ...(failure.code !== undefined ? { code: failure.code } : {}),
      ...(failure.response !== undefined ? { response: failure.response } : {}),
      ...(failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
    });
  }

  /**
   * The one place an outbox entry changes: computes the delivery transition and writes the entry. A
   * delivery that ended (delivered, given up) counts in the metric, then `audit(phase)` is recorded.
   */
  private async apply(
    workspaceDir: string,
    entry: OutboxEntry,
    event: DeliveryEvent,
    audit: (phase: DeliveryPhase) => AuditEvent[] = () => [],
  ): Promise<DeliveryTransition> {
    const next = deliveryTransition(entry, event, {
      now: this.deps.now(),
      policy: this.policy,
      random: this.deps.random,
    });
    await saveEntry(workspaceDir, next.entry);
    if (next.phase === 'delivered' || next.phase === 'given up')
      this.deps.metrics?.notification(entry.sink, next.phase === 'delivered' ? 'delivered' : 'failed');
    for (const event of audit(next.phase)) await this.audit(workspaceDir, event);
    return next;
  }

  private logFor(entry: OutboxEntry): Logger {
    return this.deps.log.child({
      incidentId: entry.incidentId,
      runId: entry.runId,
      sink: entry.sink,
      key: entry.key,
    });
  }
}
