import { createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { AuditEvent } from '../audit/log.js';
import { TRIAGE_DIR } from '../shared/types.js';
import type { Config, NotifySinkConfig } from '../config/schema.js';
import { NOTIFY_STATES } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { Redactor } from '../log/redact.js';
import { errorMessage } from '../util/errors.js';
import { DeliveryError, type RetryPolicy } from './delivery.js';
import {
  deliveryTransition,
  type DeliveryEvent,
  type DeliveryPhase,
  type DeliveryTransition,
} from './delivery-state.js';
import { runningMatches, sinkMatches, type FilterVerdict } from './filters.js';
import { finishedFrom, readFinalState, readIncident, type ReadLimits } from './input.js';
import type { NotifyMetrics } from './metrics.js';
import { listEntries, lockEntry, readEntry, readPayload, recordDelivery, saveEntry } from './outbox.js';
import { recordSinks, type SinkSince } from './sink-history.js';
import { SINKS } from './sinks/index.js';
import { summarize } from './summary.js';
import type {
  FinalStateRecord,
  FinishedIncident,
  OutboxEntry,
  RecordedError,
  RenderInput,
  SendContext,
  SinkAdapter,
  SinkPayload,
  StepResult,
  StepState,
  Trigger,
} from './types.js';
import { compactStamp } from '../util/time.js';

// Delivers finished investigations to the configured sinks, exactly once per delivery: each one is
// recorded in the workspace's outbox before it is attempted, each step (a Slack thread part, a PagerDuty
// note) is recorded as it is delivered, and the retry schedule lives in the outbox too, so a process
// killed at any point is finished by the next one without sending anything twice.

export interface NotifierDeps {
  notify: Config['notify'];
  /** `http.public_url`: messages link to the status page there. */
  publicUrl?: string;
  /** Secret values by name (`secrets:`); sinks name theirs. */
  secrets: Record<string, string>;
  redactor: Redactor;
  audit: { append(triageDir: string, event: AuditEvent): Promise<unknown> };
  log: Logger;
  metrics?: NotifyMetrics;
  /** Limit of incident.json when read back from disk (intake.max_incident_bytes). */
  maxIncidentBytes?: number;
  now?: () => number;
  random?: () => number;
  fetch?: typeof fetch;
  /** Adapters by type (tests replace one); default: every adapter under sinks/. */
  sinks?: Record<string, SinkAdapter<SinkPayload>>;
}

export interface PlanOptions {
  trigger?: Trigger;
  /** Only these sinks (by name); unknown names throw. */
  sinks?: string[];
  /** Deliver even when a sink's filters (on, min_severity, clusters) do not match: an explicit request. */
  ignoreFilters?: boolean;
  /** Shown with the message: "replay of …", "compare claude/preload". */
  label?: string;
}

export interface PlannedDelivery {
  sink: string;
  key: string;
  /** False when the delivery was recorded before (it is resumed, not sent again). */
  created: boolean;
}

export interface Plan {
  workspaceDir: string;
  deliveries: PlannedDelivery[];
  skipped: { sink: string; why: string }[];
}

export class UnknownSinkError extends Error {
  constructor(
    readonly names: string[],
    readonly known: string[],
  ) {
    super(`no sink named ${names.join(', ')} in notify.sinks; configured: ${known.join(', ') || '(none)'}`);
    this.name = 'UnknownSinkError';
  }
}

/** A lock held by a live process elsewhere: look again after this long. */
const BUSY_RETRY_MS = 30_000;
/** Longest timer Node.js can set. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const DEFAULT_MAX_INCIDENT_BYTES = 1024 * 1024;

export class Notifier {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Map<string, Promise<void>>();
  private closed = false;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly fetchFn: typeof fetch;
  private readonly adapters: Record<string, SinkAdapter<SinkPayload>>;
  private readonly policy: RetryPolicy;
  private readonly limits: ReadLimits;
  /** Per workspaces root: since when each sink is configured (read and updated once per process). */
  private readonly sinkSince = new Map<string, Promise<SinkSince>>();

  constructor(private readonly deps: NotifierDeps) {
    this.now = deps.now ?? Date.now;
    this.random = deps.random ?? Math.random;
    this.fetchFn = deps.fetch ?? fetch;
    this.adapters = deps.sinks ?? SINKS;
    this.policy = {
      maxAttempts: deps.notify.retry.max_attempts,
      baseDelayMs: deps.notify.retry.base_delay,
      maxDelayMs: deps.notify.retry.max_delay,
    };
    this.limits = {
      maxIncidentBytes: deps.maxIncidentBytes ?? DEFAULT_MAX_INCIDENT_BYTES,
      maxReportBytes: deps.notify.max_report_bytes,
    };
  }

  get sinkNames(): string[] {
    return this.deps.notify.sinks.map((s) => s.name);
  }

  /**
   * Records one delivery per matching sink for a finished incident and starts them. Resolves once the
   * records are on disk (durable); delivery goes on in the background. Calling it again for the same run
   * records nothing new: recorded deliveries are resumed, never sent twice.
   */
  async incidentFinished(input: FinishedIncident, options: PlanOptions = {}): Promise<Plan> {
    const trigger = options.trigger ?? 'finished';
    const plan: Plan = { workspaceDir: input.workspaceDir, deliveries: [], skipped: [] };
    if (this.closed) {
      this.deps.log.warn(
        { workspace: input.workspaceDir },
        'notifier closed: delivery left for the next start',
      );
      return plan;
    }
    // A run's own delivery and its resolution are recorded once each (a second call resumes them).
    const suffix =
      trigger === 'finished'
        ? ''
        : trigger === 'resolved' || trigger === 'running'
          ? `.${trigger}`
          : `.${trigger}-${compactStamp(this.now())}-${randomBytes(3).toString('hex')}`;
    const wanted = this.selectSinks(options.sinks);
    const chosen: NotifySinkConfig[] = [];
    for (const sink of wanted) {
      const verdict = this.filter(sink, input, trigger, options.ignoreFilters === true);
      if (verdict.match) chosen.push(sink);
      else plan.skipped.push({ sink: sink.name, why: verdict.why });
    }
    // Deliveries recorded before (a second call after a restart) are resumed without rendering anything.
    const missing: NotifySinkConfig[] = [];
    for (const sink of chosen) {
      const key = `${input.runId}.${sink.name}${suffix}`;
      const existing = await readEntry(input.workspaceDir, key);
      if (existing) {
        plan.deliveries.push({ sink: sink.name, key, created: false });
        if (existing.status === 'pending') this.schedule(input.workspaceDir, key, this.dueAt(existing));
      } else missing.push(sink);
    }
    if (missing.length === 0) return plan;
    const base = this.renderBase(input, trigger, options.label);
    const { parents: earlier, told } = await this.earlierDeliveries(input.workspaceDir);
    for (const sink of missing) {
      const key = `${input.runId}.${sink.name}${suffix}`;
      const adapter = this.adapterFor(sink);
      const followUp = told.has(sink.name);
      // A resolution only adds to what a sink was already told: one that has nothing of the incident gets nothing.
      if (trigger === 'resolved' && !followUp) {
        plan.skipped.push({ sink: sink.name, why: 'no earlier message of this incident to update' });
        continue;
      }
      const render: RenderInput = {
        ...base,
        idempotencyKey: `${safeId(input.incident.incidentId)}/${key}`,
        ...(followUp ? { followUp } : {}),
      };
      const payload = adapter.render(render, sink);
      const steps = adapter.steps(payload);
      if (steps.length === 0) {
        plan.skipped.push({ sink: sink.name, why: `nothing to add at a ${sink.type} sink` });
        continue;
      }
      const entry: OutboxEntry = {
        version: 1,
        key,
        idempotencyKey: render.idempotencyKey,
        sink: sink.name,
        type: sink.type,
        incidentId: input.incident.incidentId,
        runId: input.runId,
        trigger,
        createdAt: new Date(this.now()).toISOString(),
        status: 'pending',
        attempts: 0,
        steps: steps.map((id) => ({ id, status: 'pending' as const })),
        ...(earlier.has(sink.name) ? { parent: earlier.get(sink.name) } : {}),
      };
      const created = await recordDelivery(input.workspaceDir, entry, payload);
      plan.deliveries.push({ sink: sink.name, key, created });
      if (created)
        await this.audit(input.workspaceDir, {
          type: 'notify_queued',
          incidentId: entry.incidentId,
          runId: entry.runId,
          sink: sink.name,
          key,
          trigger,
          steps: entry.steps.length,
        });
      this.schedule(input.workspaceDir, key, this.now());
    }
    return plan;
  }

  /**
   * A run started: sinks that keep one message per incident (Slack) post it now, saying running, with
   * the incident's page; a retry's run updates the message an earlier run left. The outcome replaces it
   * (incidentFinished). Once per run: a second call resumes what the first recorded.
   */
  async runStarted(workspaceDir: string, state: FinalStateRecord, runId: string): Promise<Plan> {
    const incident = await readIncident(workspaceDir, this.limits.maxIncidentBytes);
    return this.incidentFinished({ workspaceDir, incident, state, runId }, { trigger: 'running' });
  }

  /**
   * incidentFinished for an incident whose final state is on disk: reads incident.json, the run's
   * result.json and the report (bounded, never through a link). What the daemon calls after it has
   * written a final state.
   */
  async notifyFinished(workspaceDir: string, state: FinalStateRecord, runId: string): Promise<Plan> {
    return this.incidentFinished(await finishedFrom(workspaceDir, state, runId, this.limits));
  }

  /**
   * Every alert behind an incident whose run already finished resolved: each sink that has its message
   * is told so (Slack updates the parent in place and notes it in the thread, PagerDuty adds a note to
   * the same incident); a sink without one is told nothing. Once per incident and run.
   */
  async incidentResolved(workspaceDir: string): Promise<Plan> {
    const state = await readFinalState(workspaceDir);
    const input = await finishedFrom(workspaceDir, state, state.runId, this.limits);
    if (!input.resolvedAt) return { workspaceDir, deliveries: [], skipped: [] };
    return this.incidentFinished(input, { trigger: 'resolved' });
  }

  /**
   * Schedules a workspace's unfinished deliveries (at their recorded next attempt). With `catchUp`, an
   * incident that finished within `notify.catch_up_window` is planned too: deliveries a crash kept from
   * being recorded are recorded now, and recorded ones are left alone.
   */
  async resumeWorkspace(workspaceDir: string, options: { catchUp?: boolean } = {}): Promise<number> {
    let scheduled = 0;
    try {
      const listing = await listEntries(workspaceDir);
      for (const problem of listing.problems)
        this.deps.log.warn(
          { workspace: workspaceDir, problem: problem.message },
          'unreadable outbox entry skipped',
        );
      for (const entry of listing.entries) {
        if (entry.status !== 'pending') continue;
        this.schedule(workspaceDir, entry.key, this.dueAt(entry));
        scheduled++;
      }
      if (options.catchUp) await this.catchUp(workspaceDir);
    } catch (err) {
      this.deps.log.warn({ workspace: workspaceDir, err: errorMessage(err) }, 'outbox could not be resumed');
    }
    return scheduled;
  }

  /** resumeWorkspace for every folder under the workspaces root. */
  async resumeAll(root: string, options: { catchUp?: boolean } = {}): Promise<number> {
    if (this.deps.notify.sinks.length === 0 && !options.catchUp) return 0;
    let names: string[];
    try {
      names = await readdir(root);
    } catch (err) {
      this.deps.log.warn(
        { root, err: errorMessage(err) },
        'workspaces root unreadable: no deliveries resumed',
      );
      return 0;
    }
    let scheduled = 0;
    // Record the sinks configured now before any catch-up compares an incident's end with them.
    if (options.catchUp) await this.sinksSince(root);
    for (const name of names) {
      if (name.startsWith('.')) continue;
      scheduled += await this.resumeWorkspace(path.join(root, name), options);
    }
    return scheduled;
  }

  /**
   * Resolves when the given deliveries are delivered or failed, or when `timeoutMs` passes (they stay
   * scheduled and recorded). Keeps the process alive while it waits.
   */
  async settle(workspaceDir: string, keys: string[], timeoutMs: number): Promise<OutboxEntry[]> {
    const deadline = this.now() + timeoutMs;
    for (;;) {
      const entries = await Promise.all(keys.map((key) => readEntry(workspaceDir, key)));
      const known = entries.filter((e): e is OutboxEntry => e !== undefined);
      if (known.every((e) => e.status !== 'pending') || this.now() >= deadline) return known;
      await new Promise((resolve) => setTimeout(resolve, Math.min(200, Math.max(1, deadline - this.now()))));
    }
  }

  /**
   * Stops scheduling and waits up to `timeoutMs` for attempts in flight. Anything unfinished stays in the
   * outbox; a step cut off mid-request is reconciled at the next start.
   */
  async close(timeoutMs = 10_000): Promise<void> {
    this.closed = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    const inFlight = [...this.running.values()];
    if (inFlight.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(inFlight),
      new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }

  private selectSinks(names: string[] | undefined): NotifySinkConfig[] {
    const sinks = this.deps.notify.sinks;
    if (!names) return sinks;
    const unknown = names.filter((n) => !sinks.some((s) => s.name === n));
    if (unknown.length > 0) throw new UnknownSinkError(unknown, this.sinkNames);
    return sinks.filter((s) => names.includes(s.name));
  }

  /** Whether a sink is told: its filters (or an explicit request), and a start only where it is kept. */
  private filter(
    sink: NotifySinkConfig,
    input: FinishedIncident,
    trigger: Trigger,
    ignoreFilters: boolean,
  ): FilterVerdict {
    if (trigger === 'running' && !this.adapterFor(sink).keepsOneMessage)
      return { match: false, why: `a ${sink.type} sink is told outcomes, not starts` };
    if (ignoreFilters) return { match: true };
    return trigger === 'running' ? runningMatches(sink, input) : sinkMatches(sink, input);
  }

  private adapterFor(sink: NotifySinkConfig): SinkAdapter<SinkPayload> {
    const adapter = this.adapters[sink.type];
    if (!adapter) throw new Error(`no adapter for sink type ${sink.type}`);
    return adapter;
  }

  /** The input every sink renders from; the report and incident pass through the redactor first. */
  private renderBase(
    input: FinishedIncident,
    trigger: Trigger,
    label?: string,
  ): Omit<RenderInput, 'idempotencyKey'> {
    const redactor = this.deps.redactor;
    const report = input.report === undefined ? undefined : redactor.redact(input.report);
    const result = input.result ? redactor.redactValue(input.result) : undefined;
    const answer = typeof result?.answer === 'string' ? result.answer : undefined;
    const publicUrl = this.deps.publicUrl?.replace(/\/+$/, '');
    return {
      ...input,
      incident: redactor.redactValue(input.incident),
      state: redactor.redactValue(input.state),
      ...(result ? { result } : {}),
      ...(report !== undefined ? { report, reportSha256: sha256(report) } : {}),
      summary: summarize(report, answer),
      trigger,
      ...((label ?? input.label) ? { label: label ?? input.label } : {}),
      // The incident's own page, not the list.
      ...(publicUrl
        ? { statusUrl: `${publicUrl}/incidents/${encodeURIComponent(path.basename(input.workspaceDir))}` }
        : {}),
      folder: path.basename(input.workspaceDir),
    };
  }

  private async catchUp(workspaceDir: string): Promise<void> {
    let state;
    try {
      state = await readFinalState(workspaceDir);
    } catch {
      return; // not finished, or not an incident: nothing to catch up
    }
    if (!(NOTIFY_STATES as readonly string[]).includes(state.state)) return;
    const finishedAt = Date.parse(state.updatedAt ?? '');
    if (Number.isNaN(finishedAt) || this.now() - finishedAt > this.deps.notify.catch_up_window) return;
    // Cheap checks first: which sinks match, and whether each already has its delivery recorded.
    const incident = await readIncident(workspaceDir, this.limits.maxIncidentBytes);
    const probe: FinishedIncident = { workspaceDir, incident, state, runId: state.runId };
    // Only sinks configured when the incident finished were due then; one added since is not.
    const since = await this.sinksSince(path.dirname(workspaceDir));
    const due = this.deps.notify.sinks.filter(
      (s) => (since.get(s.name) ?? Infinity) <= finishedAt && sinkMatches(s, probe).match,
    );
    if (due.length === 0) return;
    const recorded = await Promise.all(due.map((s) => readEntry(workspaceDir, `${state.runId}.${s.name}`)));
    if (recorded.every((e) => e !== undefined)) return;
    const input = await finishedFrom(workspaceDir, state, state.runId, this.limits);
    const plan = await this.incidentFinished(input, { trigger: 'finished', sinks: due.map((s) => s.name) });
    const created = plan.deliveries.filter((d) => d.created).map((d) => d.sink);
    if (created.length > 0)
      this.deps.log.info(
        { workspace: workspaceDir, runId: state.runId, sinks: created },
        'finished incident had deliveries missing from its outbox (a stop right after it finished): recorded now',
      );
  }

  /**
   * Per sink, the incident's message from its latest delivery that posted one (a step `parent` with a
   * channel and ts): later deliveries (a retry's result) update that message instead of posting anew.
   * `told`: the sinks that have delivered anything of this incident's own runs (not replays or compares).
   */
  private async earlierDeliveries(
    workspaceDir: string,
    before?: OutboxEntry,
  ): Promise<{ parents: Map<string, { channel: string; ts: string }>; told: Set<string> }> {
    const out = new Map<string, { channel: string; ts: string; at: string }>();
    const told = new Set<string>();
    const { entries } = await listEntries(workspaceDir).catch(() => ({ entries: [] as OutboxEntry[] }));
    for (const entry of entries) {
      if (before && !recordedBefore(entry, before)) continue;
      if (
        (entry.trigger === 'finished' || entry.trigger === 'resend') &&
        entry.steps.some((s) => s.status === 'delivered')
      )
        told.add(entry.sink);
      const result = entry.steps.find((s) => s.id === 'parent' && s.status === 'delivered')?.result;
      if (typeof result?.ts !== 'string' || typeof result.channel !== 'string') continue;
      const known = out.get(entry.sink);
      if (!known || known.at < entry.createdAt)
        out.set(entry.sink, { channel: result.channel, ts: result.ts, at: entry.createdAt });
    }
    return { parents: new Map([...out].map(([sink, p]) => [sink, { channel: p.channel, ts: p.ts }])), told };
  }

  /** Since when each sink is configured, recorded under the root the first time it is asked. */
  private sinksSince(root: string): Promise<SinkSince> {
    let pending = this.sinkSince.get(root);
    if (!pending) {
      pending = recordSinks(root, this.deps.notify.sinks, this.now()).then(
        ({ since, problem }) => {
          if (problem) this.deps.log.warn({ root, problem }, 'notify sink history unreadable');
          return since;
        },
        (err: unknown) => {
          // Without a history no sink is known to predate an incident: nothing is caught up.
          this.deps.log.warn({ root, err: errorMessage(err) }, 'notify sink history could not be written');
          return new Map();
        },
      );
      this.sinkSince.set(root, pending);
    }
    return pending;
  }

  private dueAt(entry: OutboxEntry): number {
    const at = entry.nextAttemptAt ? Date.parse(entry.nextAttemptAt) : NaN;
    return Number.isNaN(at) ? this.now() : at;
  }

  private schedule(workspaceDir: string, key: string, at: number): void {
    if (this.closed) return;
    const id = `${workspaceDir}\0${key}`;
    const existing = this.timers.get(id);
    if (existing) clearTimeout(existing);
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, at - this.now()));
    const timer = setTimeout(() => {
      this.timers.delete(id);
      void this.run(workspaceDir, key);
    }, delay);
    // Deliveries never keep a process alive on their own: the daemon lives anyway, commands use settle().
    timer.unref();
    this.timers.set(id, timer);
  }

  private run(workspaceDir: string, key: string): Promise<void> {
    const id = `${workspaceDir}\0${key}`;
    // A timer that fires while an attempt is still finishing (its own retry, a wake-up) runs after it.
    const current = this.running.get(id);
    if (current) return current.then(() => (this.closed ? undefined : this.run(workspaceDir, key)));
    const attempt = this.attempt(workspaceDir, key)
      .catch((err: unknown) => {
        this.deps.log.error(
          { workspace: workspaceDir, key, err: errorMessage(err) },
          'delivery attempt could not run; trying again later',
        );
        this.schedule(workspaceDir, key, this.now() + BUSY_RETRY_MS);
      })
      .finally(() => this.running.delete(id));
    this.running.set(id, attempt);
    return attempt;
  }

  /** One attempt: every step not yet delivered, in order, under the entry's lock. */
  private async attempt(workspaceDir: string, key: string): Promise<void> {
    const staleMs = Math.max(10 * 60_000, 4 * this.deps.notify.request_timeout);
    const lock = await lockEntry(workspaceDir, key, staleMs);
    if (!lock) {
      this.schedule(workspaceDir, key, this.now() + BUSY_RETRY_MS);
      return;
    }
    try {
      await this.attemptLocked(workspaceDir, key, lock);
    } finally {
      await lock.release();
    }
    const after = await readEntry(workspaceDir, key);
    if (after && after.status !== 'pending' && this.adapters[after.type]?.keepsOneMessage)
      await this.wakeFollowers(workspaceDir, after);
  }

  /** The attempt itself, under the entry's lock. */
  private async attemptLocked(
    workspaceDir: string,
    key: string,
    lock: { touch(): Promise<void> },
  ): Promise<void> {
    {
      const entry = await readEntry(workspaceDir, key);
      if (!entry || entry.status !== 'pending') return;
      if (this.dueAt(entry) > this.now() + 50) return this.schedule(workspaceDir, key, this.dueAt(entry));
      const sink = this.deps.notify.sinks.find((s) => s.name === entry.sink);
      if (!sink || sink.type !== entry.type) {
        const why = sink
          ? `sink ${entry.sink} is now of type ${sink.type}, not ${entry.type}`
          : `sink ${entry.sink} is no longer in notify.sinks`;
        return await this.fail(
          workspaceDir,
          entry,
          undefined,
          new DeliveryError(`${why}; not delivered`, 'permanent'),
        );
      }
      const secret = this.deps.secrets[sink.secret];
      const notesSecret = sink.notes ? this.deps.secrets[sink.notes.secret] : undefined;
      if (!secret)
        return await this.fail(
          workspaceDir,
          entry,
          undefined,
          new DeliveryError(
            `secret ${sink.secret} has no value (see secrets.${sink.secret}); retrying`,
            'retry',
          ),
        );
      const adapter = this.adapterFor(sink);
      if (adapter.keepsOneMessage) {
        // One message per incident: an earlier delivery still under way goes first and wakes this one.
        if (await this.waitsBehind(workspaceDir, entry)) return;
        if (!entry.parent) {
          const parent = (await this.earlierDeliveries(workspaceDir, entry)).parents.get(entry.sink);
          if (parent) entry.parent = parent;
        }
      }
      const payload = await readPayload(workspaceDir, key);
      const results: Record<string, StepResult> = {};
      for (const step of entry.steps)
        if (step.status === 'delivered' && step.result) results[step.id] = step.result;
      const ctx: SendContext = {
        sink,
        credentials: { secret, ...(notesSecret ? { notesSecret } : {}) },
        payload,
        entry,
        results,
        timeoutMs: this.deps.notify.request_timeout,
        fetch: this.fetchFn,
        now: this.now,
      };
      for (const { id } of entry.steps) {
        const step = ctx.entry.steps.find((s) => s.id === id);
        if (!step || step.status === 'delivered') continue;
        if (this.closed) return;
        await lock.touch();
        const sent = await this.deliverStep(workspaceDir, step, adapter, ctx);
        if (!sent) return;
        ctx.entry = sent.entry;
        results[id] = sent.result;
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
    this.schedule(workspaceDir, entry.key, Math.max(this.dueAt(ahead), this.now()) + BUSY_RETRY_MS);
    return true;
  }

  /** A one-message delivery ended (delivered or given up): the next one of its incident goes now. */
  private async wakeFollowers(workspaceDir: string, ended: OutboxEntry): Promise<void> {
    const { entries } = await listEntries(workspaceDir).catch(() => ({ entries: [] as OutboxEntry[] }));
    const next = entries
      .filter((e) => e.status === 'pending' && sameThread(e, ended) && recordedBefore(ended, e))
      .sort((a, b) => (recordedBefore(a, b) ? -1 : 1))[0];
    if (next) this.schedule(workspaceDir, next.key, this.dueAt(next));
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
    const recorded = this.deps.redactor.redactValue<RecordedError>({
      message: failure.message,
      kind: failure.kind,
      ...(failure.status !== undefined ? { status: failure.status } : {}),
      ...(failure.code !== undefined ? { code: failure.code } : {}),
      ...(failure.response !== undefined ? { response: failure.response } : {}),
      ...(failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
    });
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
    this.schedule(workspaceDir, entry.key, this.dueAt(applied.entry));
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
      now: this.now(),
      policy: this.policy,
      random: this.random,
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

  /** An audit event never stops a delivery: a failure to record it is logged. */
  private async audit(workspaceDir: string, event: AuditEvent): Promise<void> {
    try {
      await this.deps.audit.append(path.join(workspaceDir, TRIAGE_DIR), event);
    } catch (err) {
      this.deps.log.warn(
        { workspace: workspaceDir, event: event.type, err: errorMessage(err) },
        'audit event not recorded',
      );
    }
  }
}

/** Deliveries that go to one message: the same incident at the same sink. */
const sameThread = (a: OutboxEntry, b: OutboxEntry) =>
  a.key !== b.key && a.sink === b.sink && a.incidentId === b.incidentId;

/** `a` was recorded before `b` (same millisecond: by key, so every process agrees). */
const recordedBefore = (a: OutboxEntry, b: OutboxEntry) =>
  a.key !== b.key && (a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.key < b.key));

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Incident ids inside idempotency keys: printable, bounded. */
const safeId = (id: string) => id.replace(/[^A-Za-z0-9._:-]/g, '_').slice(0, 128) || 'incident';
