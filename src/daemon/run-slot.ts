import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { IncidentEvent } from '../incident/machine.js';
import type { IncidentStore } from '../incident/store.js';
import { inEngine, mayRun, mayStillRun } from '../incident/queries.js';
import type { RunProgress, StateFile } from '../workspace/state.js';
import {
  acquireLease,
  inspectLease,
  type Lease,
  type LeaseIdentity,
  type LeaseOptions,
} from '../workspace/lease.js';
import { readWorkspace, type Incident, type Workspace } from '../workspace/incident.js';
import type { RunProducts } from '../workspace/run-record.js';
import type { Logger } from '../log/logger.js';
import { errorMessage, isTransient } from '../util/errors.js';
import { newRunId } from './ids.js';
import type { RunExecutor, RunOutcome, RunStage } from '../run/types.js';

// One incident's run, from claim to release: take the lease, record the claim, renew the lease while
// the pipeline works (a lost lease aborts the run and nothing more is recorded), record each stage and
// the outcome, release. Adoption of a run a dead daemon left is the same, starting from the engine.

export interface SlotDeps {
  store: IncidentStore;
  executor: RunExecutor;
  log: Logger;
  identity: LeaseIdentity;
  lease: LeaseOptions;
  now: () => number;
  maxIncidentBytes: number;
  /** Wall time of a run by status (Prometheus). */
  /** A run ended: how long it took, how, and the registry entry it used (when it got that far). */
  runDuration?: (seconds: number, status: string, cluster?: string) => void;
  /** Under the lease, before the claim: true when the incident ended `resolved` instead (its alerts resolved). */
  resolvedBeforeRun?: (dir: string, state: StateFile) => Promise<boolean>;
}

export interface QueuedIncident {
  workspace: Workspace;
  sha256: string;
  arrivedAt: number;
}

/** What the daemon does after a slot ends: nothing, look at the folder again, or queue a retry. */
export interface SlotEnd {
  retryAt?: number;
  /** The run could not start for want of this (the engine): the daemon holds runs until it answers. */
  waitFor?: string;
  /** Look at the folder again (it changed during the run, or the run was gone / interrupted). */
  reconsider: boolean;
}

/** Progress is written to state.json at most this often (ms). */
const PROGRESS_WRITE_MS = 2000;

export class RunSlot {
  readonly controller = new AbortController();
  runId = '';
  lease: Lease | undefined;
  /** Set when the folder must be looked at again after this run (incident.json changed meanwhile). */
  reconsider = false;
  done: Promise<SlotEnd> = Promise.resolve({ reconsider: false });
  private lastProgress = 0;
  private pendingProgress: RunProgress | undefined;
  private progressTimer: NodeJS.Timeout | undefined;
  /** Set once the outcome is being recorded: no progress is written after it. */
  private finished = false;

  private constructor(
    private readonly deps: SlotDeps,
    readonly dir: string,
  ) {}

  /** Claims and runs a queued incident. */
  static run(deps: SlotDeps, queued: QueuedIncident): RunSlot {
    const slot = new RunSlot(deps, queued.workspace.dir);
    slot.done = slot.guard(() => slot.execute(queued));
    return slot;
  }

  /** Takes over a run recorded in the engine whose holder died (or that did not stop at shutdown). */
  static adopt(deps: SlotDeps, dir: string): RunSlot {
    const slot = new RunSlot(deps, dir);
    slot.done = slot.guard(() => slot.adoptOrphan());
    return slot;
  }

  private async guard(work: () => Promise<SlotEnd>): Promise<SlotEnd> {
    try {
      return await work();
    } catch (err) {
      this.deps.log.error(
        { workspace: path.basename(this.dir), err: errorMessage(err) },
        'run bookkeeping failed',
      );
      await this.lease?.release().catch(() => undefined);
      return { reconsider: false };
    }
  }

  private logFor(incidentId: string): Logger {
    return this.deps.log.child({ incidentId, workspace: path.basename(this.dir), runId: this.runId });
  }

  private apply(event: IncidentEvent, log: Logger, current?: StateFile, run?: RunProducts) {
    return this.deps.store.apply(this.dir, event, {
      log,
      ...(current ? { current } : {}),
      ...(run ? { run } : {}),
    });
  }

  private async execute(queued: QueuedIncident): Promise<SlotEnd> {
    const { workspace } = queued;
    const got = await acquireLease(this.dir, this.deps.identity, this.deps.lease);
    if (!got.acquired) return { reconsider: false };
    this.lease = got.lease;
    const state = await this.deps.store.read(this.dir);
    if (!mayRun(state) || state.incidentSha256 !== queued.sha256) {
      await got.lease.release();
      // Re-saved (or judged elsewhere) since it was queued: look again.
      return { reconsider: state?.incidentSha256 !== queued.sha256 };
    }
    if (await this.resolvedInstead(state)) {
      await got.lease.release();
      return { reconsider: false };
    }
    this.runId = newRunId(this.deps.now());
    const log = this.logFor(workspace.incident.incidentId);
    let applied;
    try {
      applied = await this.apply(
        { type: 'Claimed', runId: this.runId, holder: got.lease.info.holder },
        log,
        state,
      );
    } catch (err) {
      await got.lease.release();
      throw err;
    }
    const started = this.deps.now();
    const outcome = await this.whileHolding(log, () =>
      this.deps.executor.run({
        workspace,
        runId: this.runId,
        attempt: applied.record.attempts,
        signal: this.controller.signal,
        log,
        onStage: (stage) => this.onStage(stage, log, workspace.incident),
      }),
    );
    if (outcome === 'lost') return { reconsider: false };
    return this.record(outcome, log, started, workspace.incident);
  }

  private async resolvedInstead(state: StateFile): Promise<boolean> {
    try {
      return (await this.deps.resolvedBeforeRun?.(this.dir, state)) ?? false;
    } catch (err) {
      // Unreadable alerts or a failed write: the run goes ahead, as without alerts.
      this.deps.log.warn(
        { workspace: path.basename(this.dir), err: errorMessage(err) },
        'could not check whether the alerts behind the incident resolved',
      );
      return false;
    }
  }

  private async onStage(stage: RunStage, log: Logger, incident: Incident): Promise<void> {
    if (stage.type === 'launched') {
      await this.apply(
        {
          type: 'Launched',
          runId: this.runId,
          engine: stage.engine,
          id: stage.id,
          ...(stage.image ? { image: stage.image } : {}),
        },
        log,
        undefined,
        { incident },
      );
      return;
    }
    // At most one write per PROGRESS_WRITE_MS; the latest progress inside a window is written at its end.
    this.pendingProgress = stage.progress;
    if (this.progressTimer) return;
    const wait = Math.max(0, this.lastProgress + PROGRESS_WRITE_MS - this.deps.now());
    this.progressTimer = setTimeout(() => {
      this.progressTimer = undefined;
      const progress = this.pendingProgress;
      this.pendingProgress = undefined;
      if (!progress || this.finished) return;
      this.lastProgress = this.deps.now();
      void this.apply({ type: 'Progress', runId: this.runId, progress }, log).catch((err: unknown) =>
        log.debug({ err: errorMessage(err) }, 'progress not recorded'),
      );
    }, wait);
    this.progressTimer.unref();
  }

  /** Renews the lease while `work` runs; a lost lease aborts the run and nothing more is written. */
  private async whileHolding(
    log: Logger,
    work: () => Promise<RunOutcome | 'gone'>,
  ): Promise<RunOutcome | 'gone' | 'lost'> {
    const lease = this.lease as Lease;
    let lost: string | undefined;
    const renew = setInterval(
      () =>
        void lease.renew().then(
          async (ok) => {
            if (ok || lost) return;
            lost = (await stat(this.dir).then(
              () => true,
              () => false,
            ))
              ? 'the lease was taken over by another holder'
              : 'the workspace folder was removed';
            log.error({ lease: lease.file, reason: lost }, `${lost}; stopping the run without recording it`);
            this.controller.abort(new Error(lost));
          },
          (err: unknown) => log.warn({ err: errorMessage(err) }, 'lease renewal failed'),
        ),
      Math.max(50, Math.floor(this.deps.lease.ttlMs / 3)),
    );
    renew.unref();
    let outcome: RunOutcome | 'gone';
    try {
      outcome = await work();
    } catch (err) {
      outcome = { status: 'failed', transient: isTransient(err), reason: errorMessage(err) };
    } finally {
      clearInterval(renew);
    }
    return lost ? 'lost' : outcome;
  }

  /** Records the outcome (keeping the lease fresh until it is on disk), then releases the lease. */
  private async record(
    outcome: RunOutcome | 'gone',
    log: Logger,
    started: number,
    incident: Incident,
    incidentId = incident.incidentId,
  ): Promise<SlotEnd> {
    this.finished = true;
    clearTimeout(this.progressTimer);
    const lease = this.lease as Lease;
    const keepFresh = setInterval(
      () => void lease.renew().catch(() => undefined),
      Math.max(50, Math.floor(this.deps.lease.ttlMs / 3)),
    );
    keepFresh.unref();
    try {
      if (outcome !== 'gone')
        this.deps.runDuration?.(
          (this.deps.now() - started) / 1000,
          outcome.status,
          outcome.result?.cluster?.name,
        );
      const event: IncidentEvent =
        outcome === 'gone'
          ? {
              type: 'Gone',
              runId: this.runId,
              reason: 'the run was gone from the engine after a daemon restart; re-queued',
            }
          : { type: 'Finished', runId: this.runId, outcome };
      // What the run produced goes with the change to its listeners (notifications), in memory.
      const run: RunProducts | undefined =
        outcome === 'gone'
          ? undefined
          : {
              incident,
              ...(outcome.result ? { result: outcome.result } : {}),
              ...(outcome.report !== undefined ? { report: outcome.report } : {}),
            };
      const applied = await this.apply(event, log, undefined, run);
      return {
        ...(applied.retryAt !== undefined ? { retryAt: applied.retryAt } : {}),
        ...(outcome !== 'gone' && outcome.waitFor ? { waitFor: outcome.waitFor } : {}),
        reconsider: this.reconsider || mayRun(applied.record),
      };
    } finally {
      clearInterval(keepFresh);
      await this.deps.store.note(this.dir, { type: 'released', incidentId, runId: this.runId }, log);
      await lease.release();
    }
  }

  private async adoptOrphan(): Promise<SlotEnd> {
    const { deps } = this;
    const held = await inspectLease(this.dir, deps.identity, deps.lease);
    if (held && !held.stale) return { reconsider: false };
    const got = await acquireLease(this.dir, deps.identity, deps.lease);
    if (!got.acquired) return { reconsider: false };
    this.lease = got.lease;
    const state = await deps.store.read(this.dir);
    if (!state || !mayStillRun(state)) {
      await got.lease.release();
      return { reconsider: true };
    }
    this.runId =
      [...state.runs].reverse().find((r) => r.status === 'running')?.id ??
      state.runs.at(-1)?.id ??
      newRunId(deps.now());
    const log = this.logFor(state.incidentId);
    const read = await readWorkspace(this.dir, { maxBytes: deps.maxIncidentBytes });
    if (read.kind !== 'ok') {
      await this.apply(
        {
          type: 'Interrupted',
          runId: this.runId,
          reason: 'orphaned run whose incident.json is no longer valid',
        },
        log,
        state,
      );
      await got.lease.release();
      return { reconsider: true };
    }
    await this.apply(
      {
        type: 'Adopted',
        runId: this.runId,
        holder: got.lease.info.holder,
        ...(got.tookOver ? { previousHolder: got.tookOver.holder } : {}),
      },
      log,
      state,
    );
    const started = deps.now();
    const outcome = await this.whileHolding(log, () =>
      deps.executor.adopt({
        workspace: read.workspace,
        runId: this.runId,
        signal: this.controller.signal,
        log,
      }),
    );
    if (outcome === 'lost') return { reconsider: false };
    return this.record(outcome, log, started, read.workspace.incident, state.incidentId);
  }

  /** At shutdown, for a run that ignored its stop: recorded interrupted (the next start adopts it), lease freed. */
  async interruptUnstopped(): Promise<void> {
    const state = await this.deps.store.read(this.dir);
    if (!state || !inEngine(state.state)) return;
    const log = this.logFor(state.incidentId);
    await this.apply(
      {
        type: 'Interrupted',
        runId: this.runId,
        reason: 'the run did not stop after daemon shutdown interrupted it',
        unstopped: true,
      },
      log,
      state,
    );
    await this.lease?.release();
  }
}
