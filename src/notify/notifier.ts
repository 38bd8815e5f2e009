import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { AuditEvent } from '../audit/log.js';
import type { Config, NotifySinkConfig } from '../config/schema.js';
import { hasVerdict } from '../incident/queries.js';
import type { Logger } from '../log/logger.js';
import type { Redactor } from '../log/redact.js';
import { errorMessage } from '../util/errors.js';
import { DeliveryAttempts } from './delivery-attempt.js';
import { sinkMatches } from './filters.js';
import type { Incident } from '../workspace/incident.js';
import type { RunProducts } from '../workspace/run-record.js';
import {
  finishedFrom,
  finishedFromRun,
  readFinalState,
  readIncident,
  withWorkloads,
  type ReadLimits,
} from './input.js';
import type { NotifyMetrics } from './metrics.js';
import { listEntries, readEntry, recordDelivery } from '../workspace/outbox.js';
import {
  earlierDeliveries,
  keySuffix,
  newEntry,
  renderBase,
  safeId,
  selectSinks,
  sinkVerdict,
  type EarlierDeliveries,
  type Plan,
  type PlanOptions,
} from './planner.js';
import { DeliveryScheduler, dueAt } from './scheduler.js';
import { compactStamp } from '../util/time.js';
import { recordSinks, type SinkSince } from './sink-history.js';
import { SINKS } from './sinks/index.js';
import type {
  FinalStateRecord,
  FinishedIncident,
  OutboxEntry,
  RenderInput,
  SinkAdapter,
  SinkPayload,
  Trigger,
} from './types.js';

// Delivers investigations to the configured sinks, exactly once per delivery: each one is recorded in
// the workspace's outbox before it is attempted, each step (a Slack thread part, a PagerDuty note) is
// recorded as it is delivered, and the retry schedule lives in the outbox too, so a process killed at
// any point is finished by the next one without sending anything twice. What to send is planned in
// planner.ts, when in scheduler.ts, and one attempt runs in delivery-attempt.ts; this is the front.

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

const DEFAULT_MAX_INCIDENT_BYTES = 1024 * 1024;

export class Notifier {
  private readonly now: () => number;
  private readonly limits: ReadLimits;
  private readonly scheduler: DeliveryScheduler;
  private readonly attempts: DeliveryAttempts;
  /** Per workspaces root: since when each sink is configured (read and updated once per process). */
  private readonly sinkSince = new Map<string, Promise<SinkSince>>();

  constructor(private readonly deps: NotifierDeps) {
    this.now = deps.now ?? Date.now;
    this.limits = {
      maxIncidentBytes: deps.maxIncidentBytes ?? DEFAULT_MAX_INCIDENT_BYTES,
      maxReportBytes: deps.notify.max_report_bytes,
    };
    this.scheduler = new DeliveryScheduler((dir, key) => this.attempts.attempt(dir, key), deps.log, this.now);
    this.attempts = new DeliveryAttempts(
      {
        notify: deps.notify,
        secrets: deps.secrets,
        redactor: deps.redactor,
        audit: deps.audit,
        log: deps.log,
        ...(deps.metrics ? { metrics: deps.metrics } : {}),
        adapters: deps.sinks ?? SINKS,
        fetch: deps.fetch ?? fetch,
        now: this.now,
        random: deps.random ?? Math.random,
      },
      this.scheduler,
    );
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
    if (this.scheduler.closed) {
      this.deps.log.warn(
        { workspace: input.workspaceDir },
        'notifier closed: delivery left for the next start',
      );
      return plan;
    }
    const suffix = options.keySuffix ?? keySuffix(trigger, this.now());
    // An incident rejected before any run has no run id of its own: its deliveries are the incident's.
    const base = input.runId || 'incident';
    const chosen: NotifySinkConfig[] = [];
    for (const sink of selectSinks(this.deps.notify.sinks, options.sinks)) {
      const adapter = this.attempts.adapterFor(sink);
      const verdict = sinkVerdict(sink, adapter, input, trigger, options.ignoreFilters === true);
      if (verdict.match) chosen.push(sink);
      else plan.skipped.push({ sink: sink.name, why: verdict.why });
    }
    // Deliveries recorded before (a second call after a restart) are resumed without rendering anything.
    const missing: NotifySinkConfig[] = [];
    for (const sink of chosen) {
      const key = `${base}.${sink.name}${suffix}`;
      const existing = await readEntry(input.workspaceDir, key);
      if (existing) {
        plan.deliveries.push({ sink: sink.name, key, created: false });
        if (existing.status === 'pending')
          this.scheduler.schedule(input.workspaceDir, key, dueAt(existing, this.now()));
      } else missing.push(sink);
    }
    if (missing.length === 0) return plan;
    // What is sent names every workload of a storm's incident (alerts.json), however the input was made.
    const full = await withWorkloads(input);
    const rendered = renderBase(full, trigger, {
      redactor: this.deps.redactor,
      ...(this.deps.publicUrl ? { publicUrl: this.deps.publicUrl } : {}),
      ...(options.label ? { label: options.label } : {}),
    });
    const earlier = await earlierDeliveries(input.workspaceDir);
    for (const sink of missing)
      await this.record(plan, full, {
        sink,
        key: `${base}.${sink.name}${suffix}`,
        trigger,
        base: rendered,
        earlier,
      });
    return plan;
  }

  /**
   * A run started: sinks that keep one message per incident (Slack) post it now, saying running, with
   * the incident's page; a retry's run updates the message an earlier run left. The outcome replaces it
   * (incidentFinished). Once per run: a second call resumes what the first recorded.
   */
  async runStarted(
    workspaceDir: string,
    state: FinalStateRecord,
    runId: string,
    incident?: Incident,
  ): Promise<Plan> {
    const known = incident ?? (await readIncident(workspaceDir, this.limits.maxIncidentBytes));
    return this.incidentFinished(
      { workspaceDir, incident: known, state, runId: runId },
      { trigger: 'running' },
    );
  }

  /**
   * incidentFinished for a run the daemon has just recorded, from what the run produced (in memory:
   * the incident, result.json, the report); nothing is read back from disk.
   */
  runFinished(
    workspaceDir: string,
    state: FinalStateRecord & { resolvedAt?: string },
    runId: string,
    run: RunProducts,
  ): Promise<Plan> {
    return this.incidentFinished(finishedFromRun(workspaceDir, state, runId, run, this.limits));
  }

  /**
   * incidentFinished for an incident whose final state is on disk, read back cold: incident.json, the
   * run's result.json and the report (bounded, never through a link).
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
   * An incident was refused before any run (an alert for a cluster nobody configured, an invalid
   * incident): sinks with `rejected` in `on` are told, with the reason. Once per version of
   * incident.json; one that cannot be read as an incident (not JSON) has nothing to show and is skipped.
   */
  async incidentRejected(
    workspaceDir: string,
    state: FinalStateRecord & { incidentSha256?: string },
  ): Promise<Plan> {
    const incident = await readIncident(workspaceDir, this.limits.maxIncidentBytes);
    const version =
      state.incidentSha256?.slice(0, 16) ?? compactStamp(Date.parse(state.updatedAt ?? '') || this.now());
    return this.incidentFinished(
      { workspaceDir, incident, state, runId: state.runs.at(-1)?.id ?? '' },
      { trigger: 'finished', keySuffix: `.rejected-${version}` },
    );
  }

  /**
   * Every alert behind an incident resolved before its run started (it ends `resolved`, never run):
   * sinks with `resolved` in `on` are told; one that showed an earlier run of it updates that message.
   */
  async resolvedBeforeRun(
    workspaceDir: string,
    state: FinalStateRecord & { resolvedAt?: string },
  ): Promise<Plan> {
    const incident = await readIncident(workspaceDir, this.limits.maxIncidentBytes);
    return this.incidentFinished(
      {
        workspaceDir,
        incident,
        state,
        runId: state.runs.at(-1)?.id ?? '',
        ...(state.resolvedAt ? { resolvedAt: state.resolvedAt } : {}),
      },
      {
        trigger: 'finished',
        keySuffix: `.resolved-${compactStamp(Date.parse(state.updatedAt ?? '') || this.now())}`,
      },
    );
  }

  /**
   * A responder rated the answer: the incident's one message (Slack's parent) is updated at once to
   * show it, whatever the incident's state (a resolved one too). Sinks without such a message, or
   * that never posted one for this incident, are not told.
   */
  async feedbackGiven(workspaceDir: string): Promise<Plan> {
    const state = await readFinalState(workspaceDir);
    const input = await finishedFrom(workspaceDir, state, state.runId, this.limits);
    return this.incidentFinished(input, { trigger: 'feedback' });
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
        this.scheduler.schedule(workspaceDir, entry.key, dueAt(entry, this.now()));
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
  settle(workspaceDir: string, keys: string[], timeoutMs: number): Promise<OutboxEntry[]> {
    return this.scheduler.settle(workspaceDir, keys, timeoutMs);
  }

  /**
   * Stops scheduling and waits up to `timeoutMs` for attempts in flight. Anything unfinished stays in the
   * outbox; a step cut off mid-request is reconciled at the next start.
   */
  close(timeoutMs = 10_000): Promise<void> {
    return this.scheduler.close(timeoutMs);
  }

  /** Renders and records one sink's new delivery, then schedules it (or says why it was skipped). */
  private async record(
    plan: Plan,
    input: FinishedIncident,
    d: {
      sink: NotifySinkConfig;
      key: string;
      trigger: Trigger;
      base: Omit<RenderInput, 'idempotencyKey'>;
      earlier: EarlierDeliveries;
    },
  ): Promise<void> {
    const { sink, key, trigger } = d;
    const adapter = this.attempts.adapterFor(sink);
    const followUp = d.earlier.told.has(sink.name);
    // A resolution only adds to what a sink was already told: one that has nothing of the incident gets nothing.
    if (trigger === 'resolved' && !followUp) {
      plan.skipped.push({ sink: sink.name, why: 'no earlier message of this incident to update' });
      return;
    }
    if (trigger === 'feedback' && !d.earlier.parents.has(sink.name)) {
      plan.skipped.push({ sink: sink.name, why: 'no message of this incident to show the rating on' });
      return;
    }
    const render: RenderInput = {
      ...d.base,
      idempotencyKey: `${safeId(input.incident.incidentId)}/${key}`,
      ...(followUp ? { followUp } : {}),
    };
    const payload = adapter.render(render, sink);
    const steps = adapter.steps(payload);
    if (steps.length === 0) {
      plan.skipped.push({ sink: sink.name, why: `nothing to add at a ${sink.type} sink` });
      return;
    }
    const fields = { key, idempotencyKey: render.idempotencyKey, sink, trigger, now: this.now() };
    const entry = newEntry(input, fields, steps, d.earlier.parents.get(sink.name));
    const created = await recordDelivery(input.workspaceDir, entry, payload);
    plan.deliveries.push({ sink: sink.name, key, created });
    if (created)
      await this.attempts.audit(input.workspaceDir, {
        type: 'notify_queued',
        incidentId: entry.incidentId,
        runId: entry.runId,
        sink: sink.name,
        key,
        trigger,
        steps: entry.steps.length,
      });
    this.scheduler.schedule(input.workspaceDir, key, this.now());
  }

  private async catchUp(workspaceDir: string): Promise<void> {
    let state;
    try {
      state = await readFinalState(workspaceDir);
    } catch {
      return; // not finished, or not an incident: nothing to catch up
    }
    if (!hasVerdict(state.state)) return;
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
}
