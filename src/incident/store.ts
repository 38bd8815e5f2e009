import path from 'node:path';
import { stateDigest } from '../audit/digest.js';
import type { AuditEvent, AuditLog } from '../audit/log.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';
import { ensureOwnDir } from '../util/safe-path.js';
import {
  transition,
  type IncidentEvent,
  type IncidentMetric,
  type MachineContext,
  type Transition,
} from './machine.js';
import {
  readState,
  readStateChecked,
  readStateFile,
  writeState,
  type StateFile,
} from '../workspace/state.js';
import { statePath, triageDir } from '../workspace/layout.js';
import type { RunProducts } from '../workspace/run-record.js';
import { KeyedQueue } from '../util/keyed-queue.js';
import { backoffDelay, type BackoffPolicy } from '../util/backoff.js';

// Applies transitions: the state file first (atomically), then the audit events, the metric and the
// log line. The only writer of state.json. Callers hold the workspace lease while they apply.

export interface StateChange {
  dir: string;
  record: StateFile;
  previous: StateFile | undefined;
  event: IncidentEvent;
  /** What the run produced, when the event is a run's (Launched, Finished) applied by its slot. */
  run?: RunProducts;
}

export interface StoreDeps {
  audit: AuditLog;
  log: Logger;
  metrics?: { incident(outcome: IncidentMetric): void };
  now?: () => number;
  policy: MachineContext['policy'];
  random?: () => number;
  /** Called after every applied change (the daemon's index, notifications). */
  onChange?: (change: StateChange) => void;
  /** Called when a write failed for lack of space, and again (with false) once writes succeed. */
  onDiskFull?: (full: boolean, err?: unknown) => void;
}

export interface ApplyOptions {
  /** The record as the caller last read it (saves a read; ignored when another apply is in flight). */
  current?: StateFile;
  /** A logger carrying the incident's and run's ids. */
  log?: Logger;
  /** State file elsewhere than `<dir>/.triage/state.json` (folders that cannot be written into). */
  file?: string;
  /** Audit folder elsewhere than `<dir>/.triage`. */
  auditDir?: string;
  /** What the run produced, passed on to listeners with the change (StateChange.run). */
  run?: RunProducts;
}

export interface Applied extends Transition {
  previous: StateFile | undefined;
}

/** Retries after ENOSPC: the one backoff, from 100–200 ms doubling up to 5–10 s. */
const DISK_FULL_RETRY: BackoffPolicy = { baseMs: 200, maxMs: 10_000 };

export class IncidentStore {
  private readonly now: () => number;
  private readonly random: () => number;
  private closing = false;
  /** Applies to one folder run one at a time (a run's own events, an alert resolving meanwhile). */
  private readonly queue = new KeyedQueue<
    { event: IncidentEvent; options: ApplyOptions; dir: string },
    Applied
  >(async (_key, [item]) => (item ? [await this.applyNow(item.dir, item.event, item.options)] : []), 1);

  constructor(private readonly deps: StoreDeps) {
    this.now = deps.now ?? Date.now;
    this.random = deps.random ?? Math.random;
  }

  /** After close, a write that hits a full disk fails instead of waiting for space (shutdown). */
  close(): void {
    this.closing = true;
  }

  read(dir: string): Promise<StateFile | undefined> {
    return readState(dir);
  }

  /** The state, or 'damaged' when a file at its place is not one (see readStateChecked). */
  readChecked(dir: string): Promise<{ state: StateFile | undefined } | 'damaged'> {
    return Promise.resolve(readStateChecked(dir));
  }

  /** The transition `event` would make from the current record, without writing it. */
  preview(current: StateFile | undefined, event: IncidentEvent): Transition {
    return transition(current, event, { now: this.now(), policy: this.deps.policy, random: this.random });
  }

  /**
   * Applies `event`: computes the transition (throws IllegalTransitionError), writes the state file, then
   * appends the audit events. A full disk does not lose the change: the write is retried until it fits
   * (the caller keeps its lease meanwhile), so an incident is never run twice for want of space.
   */
  apply(dir: string, event: IncidentEvent, options: ApplyOptions = {}): Promise<Applied> {
    const key = options.file ?? dir;
    // Behind another apply, the caller's copy of the record may be stale: read it again.
    const { current: _stale, ...fresh } = options;
    return this.queue.submit(key, { dir, event, options: this.queue.has(key) ? fresh : options });
  }

  private async applyNow(dir: string, event: IncidentEvent, options: ApplyOptions): Promise<Applied> {
    const file = options.file ?? statePath(dir);
    const previous = options.current ?? (await readStateFile(file));
    const t = this.preview(previous, event);
    if (t.unchanged) return { ...t, previous };
    // Written into an existing workspace (never re-created), or under the root for an unsafe folder.
    await this.writeSurvivingFullDisk(
      file,
      t.record,
      options.file ? path.dirname(path.dirname(path.dirname(file))) : dir,
    );
    const log =
      options.log ?? this.deps.log.child({ incidentId: t.record.incidentId, workspace: path.basename(dir) });
    // The chain records what state.json now holds, so that an edit to it afterwards is detected.
    const audit = t.audit.map((e, i) =>
      i === t.audit.length - 1 ? { ...e, stateSha256: stateDigest(t.record) } : e,
    );
    await this.appendAll(options.auditDir ?? triageDir(dir), audit, log);
    if (t.metric) this.deps.metrics?.incident(t.metric);
    if (t.log) log[t.log.level]({ state: t.record.state, ...t.log.fields }, t.log.msg);
    this.deps.onChange?.({
      dir,
      record: t.record,
      previous,
      event,
      ...(options.run ? { run: options.run } : {}),
    });
    return { ...t, previous };
  }

  /** An audit event that is not a state change (detected, released, run stages). Never throws. */
  async note(dir: string, event: AuditEvent, log: Logger = this.deps.log): Promise<void> {
    await this.appendAll(triageDir(dir), [event], log);
  }

  /** Appended in one go, so that the audit log writes them together (one fsync, in this order). */
  private async appendAll(auditDir: string, events: AuditEvent[], log: Logger): Promise<void> {
    const results = await Promise.allSettled(events.map((event) => this.deps.audit.append(auditDir, event)));
    results.forEach((r, i) => {
      if (r.status === 'rejected')
        log.error({ type: events[i]?.type, err: errorMessage(r.reason) }, 'audit append failed');
    });
  }

  private async writeSurvivingFullDisk(file: string, record: StateFile, base: string): Promise<void> {
    // The folder is made without following a symlink and without re-creating a removed workspace or root.
    const dir = path.dirname(file);
    for (let attempt = 1; ; attempt++) {
      try {
        await ensureOwnDir(dir, base);
        await writeState(file, record, { createDir: false });
        this.deps.onDiskFull?.(false);
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        this.deps.onDiskFull?.(true, err);
        if (this.closing) throw err;
        const delay = backoffDelay(attempt, DISK_FULL_RETRY, this.random);
        this.deps.log.error(
          { file, retryInMs: delay },
          `no space left to write ${file}; retrying in ${delay} ms (free disk space on the workspaces volume)`,
        );
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }
}
