import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { type IncidentStore } from '../incident/store.js';
import { readStateFile, type StateFile } from '../workspace/state.js';
import {
  AUDIT_FILE,
  incidentPath,
  STATE_FILE,
  statePath,
  TRIAGE_DIR,
  unsafeStateDir,
  unsafeStatePath,
} from '../workspace/layout.js';
import { IllegalTransitionError, type IncidentEvent } from '../incident/machine.js';
import { acceptsChange, isFinal, isFirstJudgement, isRejected, mayRun } from '../incident/queries.js';
import { type DedupStore, dedupKey } from '../intake/dedup.js';
import { admit, judge, type Cause } from '../intake/judge.js';
import { acquireLease, type LeaseIdentity, type LeaseOptions } from '../workspace/lease.js';
import { folderEscapes, readWorkspace, type ReadResult } from '../workspace/incident.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';
import { unsafeWorkspace } from '../workspace/files.js';
import { fileMark, formatMs } from './lifecycle.js';
import { Limiter } from '../util/limiter.js';
import type { QueuedIncident } from './run-slot.js';

// Intake as the daemon runs it: looks at a workspace folder (never two inspections of one folder at
// once), asks the judge what to do, and applies the answer as an incident event under a brief lease.

/**
 * A state.json the daemon cannot read as a state (damaged, edited by hand, not a file) once held the
 * incident's history: the incident may have run. Taking it in as new would run it again, so it is
 * rejected (its state kept under the root, as for an unsafe folder) until someone restores or removes
 * the file; the audit trail beside it still tells what happened.
 */
const DAMAGED_STATE_REASON = `${TRIAGE_DIR}/${STATE_FILE} is not a state record the daemon wrote (damaged, or edited by hand), so the incident is not taken in again: it may have run already (see ${TRIAGE_DIR}/${AUDIT_FILE}). Restore the file, or remove it to run the incident as new`;

/** A new folder is looked at again after these delays while it has no incident.json (a file renamed in
 * before the watcher watches the folder raises no event). */
const NEW_FOLDER_RECHECKS_MS = [250, 1000, 3000];

export interface InspectorDeps {
  root: string;
  store: IncidentStore;
  dedup: DedupStore;
  log: Logger;
  identity: LeaseIdentity;
  lease: LeaseOptions;
  now: () => number;
  intake: { maxBytes: number; writeSettleMs: number; incompleteGraceMs: number; dedupWindowMs: number };
  /** In the queue or running here. */
  isBusy: (dir: string) => boolean;
  /** A run of this folder is in progress here: it must be looked at again when it ends. */
  markChanged: (dir: string) => boolean;
  adopt: (dir: string, cluster: string) => void;
  /** Why the cluster registry cannot take an incident for this cluster, or undefined when it routes it. */
  clusterProblem?: (cluster: string) => string | undefined;
  /** A slot in the queue, held while the `queued` state is written; false when the queue is full. */
  reserve: () => (() => void) | undefined;
  enqueue: (queued: QueuedIncident, notBefore: number) => void;
  queueLimit: number;
  /** The watcher: a finished folder is no longer watched (rescans still compare it), and again when it changes. */
  watch?: { forget(dir: string): void; watchAgain(dir: string): void };
}

export class Inspector {
  private readonly limiter = new Limiter(16);
  private readonly inspecting = new Map<string, { again: Cause | undefined; done: Promise<void> }>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly newFolders = new Map<string, number>();
  /**
   * Final folders and the mark of their incident.json and state.json: a rescan looks again only when one
   * changed (a re-saved incident, or a retry another process applied: `triage-runner retry`).
   */
  readonly finals = new Map<string, string>();
  /**
   * Finished folders (succeeded, failed, resolved) and duplicates the watcher need not watch: with
   * thousands of them, watching costs seconds. Their incident.json is still compared on every rescan.
   * Other rejected folders (an invalid file) stay watched, so that a fixed file is taken at once.
   */
  readonly unwatched = new Set<string>();
  private stopped = false;

  constructor(private readonly deps: InspectorDeps) {}

  /** Looks at a folder now (or once more after the inspection in progress). */
  consider(dir: string, cause: Cause): Promise<void> {
    if (this.stopped) return Promise.resolve();
    const pending = this.inspecting.get(dir);
    if (pending) {
      pending.again = cause;
      return pending.done;
    }
    const entry: { again: Cause | undefined; done: Promise<void> } = {
      again: undefined,
      done: Promise.resolve(),
    };
    entry.done = (async () => {
      for (let next: Cause | undefined = cause; next !== undefined && !this.stopped; next = entry.again) {
        entry.again = undefined;
        const current: Cause = next;
        try {
          await this.limiter.run(() => this.inspect(dir, current));
        } catch (err) {
          this.deps.log.error(
            { workspace: path.basename(dir), cause: current, err: errorMessage(err) },
            'inspecting workspace failed',
          );
        }
      }
      this.inspecting.delete(dir);
    })();
    this.inspecting.set(dir, entry);
    return entry.done;
  }

  /** Lists the root and considers every folder not known to be unchanged; false when the root cannot be listed. */
  async scan(cause: 'startup' | 'rescan'): Promise<{ ok: true } | { ok: false; why: string }> {
    let entries;
    try {
      entries = await readdir(this.deps.root, { withFileTypes: true });
    } catch (err) {
      return {
        ok: false,
        why: `cannot list it: ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}`,
      };
    }
    const work: Promise<void>[] = [];
    for (const entry of entries) {
      if (entry.name.startsWith('.') || !(entry.isDirectory() || entry.isSymbolicLink())) continue;
      const dir = path.join(this.deps.root, entry.name);
      const pending = this.inspecting.get(dir);
      if (pending) {
        work.push(pending.done);
        continue;
      }
      if (this.deps.isBusy(dir)) continue;
      const mark = this.finals.get(dir);
      if (mark !== undefined && mark === (await finalMark(dir))) continue;
      this.finals.delete(dir);
      if (this.unwatched.delete(dir)) this.deps.watch?.watchAgain(dir);
      work.push(this.consider(dir, cause));
    }
    await Promise.all(work);
    return { ok: true };
  }

  async close(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await Promise.allSettled([...this.inspecting.values()].map((c) => c.done));
  }

  private later(dir: string, delayMs: number, cause: Cause): void {
    clearTimeout(this.timers.get(dir));
    const timer = setTimeout(() => {
      this.timers.delete(dir);
      void this.consider(dir, cause);
    }, delayMs);
    timer.unref();
    this.timers.set(dir, timer);
  }

  /** Whether incident.json still holds the bytes the state (and so the run) describes. */
  private async sameAsRun(dir: string): Promise<boolean> {
    const [state, read] = await Promise.all([
      this.deps.store.read(dir).catch(() => undefined),
      readWorkspace(dir, { maxBytes: this.deps.intake.maxBytes }).catch(() => undefined),
    ]);
    const sha256 = read && 'sha256' in read ? read.sha256 : undefined;
    return state?.incidentSha256 !== undefined && sha256 === state.incidentSha256;
  }

  private async inspect(dir: string, cause: Cause): Promise<void> {
    const name = path.basename(dir);
    if (this.deps.isBusy(dir)) {
      // The watcher reports the drop itself (and its settling writes) while the run has begun: only
      // bytes that differ from the ones the run investigates are a change.
      if (cause !== 'add' && cause !== 'change') return;
      if (await this.sameAsRun(dir)) return;
      if (this.deps.markChanged(dir))
        this.deps.log.info(
          { workspace: name },
          'incident.json changed during its run; it is looked at again when the run ends',
        );
      return;
    }
    const unsafe = (await folderEscapes(this.deps.root, name)) ?? (await unsafeWorkspace(dir));
    if (unsafe) return this.rejectUnsafe(dir, unsafe);
    const own = await this.deps.store.readChecked(dir);
    if (own === 'damaged') return this.rejectUnsafe(dir, DAMAGED_STATE_REASON);
    const state = own.state;
    const read = this.routed(dir, await readWorkspace(dir, { maxBytes: this.deps.intake.maxBytes }));
    const j = judge({
      cause,
      state,
      read,
      now: this.deps.now(),
      writeSettleMs: this.deps.intake.writeSettleMs,
      incompleteGraceMs: this.deps.intake.incompleteGraceMs,
    });
    this.deps.log.trace(
      { workspace: name, cause, judgement: j.kind, state: state?.state },
      'workspace inspected',
    );
    if (j.kind !== 'missing') this.newFolders.delete(dir);
    switch (j.kind) {
      case 'adopt':
        return this.deps.adopt(dir, read.kind === 'ok' ? read.workspace.incident.cluster : '');
      case 'busy':
        return;
      case 'missing':
        if (j.recheck) this.recheckNewFolder(dir);
        return;
      case 'wait':
        return this.later(dir, j.delayMs, 'settle');
      case 'final':
        if (state && isFinal(state.state)) {
          this.finals.set(dir, await finalMark(dir));
          // A duplicate is rejected but not broken: like a finished folder, nothing there is waited for.
          if (!isRejected(state) || state.duplicateOf !== undefined) this.unwatch(dir);
        }
        return;
      case 'reject':
        await this.detected(dir, state, cause, undefined);
        return this.underLease(dir, (current) =>
          this.applyIf(dir, current, {
            type: 'Invalid',
            incidentId: current?.incidentId ?? name,
            reason: j.reason,
            ...(j.sha256 ? { sha256: j.sha256 } : {}),
          }),
        );
      case 'changed':
        return this.admitUnderLease(dir, read as Extract<ReadResult, { kind: 'ok' }>, async (current) => {
          if (current && acceptsChange(current.state))
            await this.deps.store.apply(
              dir,
              { type: 'IncidentChanged', incidentId: j.incidentId, sha256: j.sha256 },
              { current },
            );
        });
      case 'accept':
        await this.detected(dir, state, cause, j.incidentId);
        return this.admitUnderLease(dir, read as Extract<ReadResult, { kind: 'ok' }>);
    }
  }

  /** `detected` is recorded once per incident, when its file is first judged (not for each chunk). */
  private async detected(
    dir: string,
    state: StateFile | undefined,
    cause: Cause,
    incidentId: string | undefined,
  ): Promise<void> {
    if (state || cause === 'startup' || cause === 'rescan') return;
    await this.deps.store.note(dir, { type: 'detected', cause, ...(incidentId ? { incidentId } : {}) });
  }

  /** Applies `event` unless the transition would change nothing or is not allowed from the current state. */
  private async applyIf(dir: string, current: StateFile | undefined, event: IncidentEvent): Promise<void> {
    try {
      await this.deps.store.apply(dir, event, current ? { current } : {});
    } catch (err) {
      if (!(err instanceof IllegalTransitionError)) throw err;
      this.deps.log.debug(
        { workspace: path.basename(dir), err: errorMessage(err) },
        'state moved on meanwhile',
      );
    }
    if (event.type === 'Invalid') this.finals.set(dir, await finalMark(dir));
  }

  /** The watcher lets go of a folder judged final; a rescan still compares it, and watches it again on a change. */
  private unwatch(dir: string): void {
    if (this.unwatched.has(dir)) return;
    this.unwatched.add(dir);
    this.deps.watch?.forget(dir);
  }

  /** A valid incident for a cluster the registry does not know is invalid: rejected with the known names. */
  private routed(dir: string, read: ReadResult): ReadResult {
    if (read.kind !== 'ok' || !this.deps.clusterProblem) return read;
    const problem = this.deps.clusterProblem(read.workspace.incident.cluster);
    if (!problem) return read;
    return {
      kind: 'invalid',
      reason: `incident.json in ${dir} names a cluster the daemon cannot investigate: ${problem}`,
      sha256: read.sha256,
      mtimeMs: read.mtimeMs,
    };
  }

  /** Admits a valid incident under a brief lease, then (lease released) hands it to the scheduler. */
  private async admitUnderLease(
    dir: string,
    read: Extract<ReadResult, { kind: 'ok' }>,
    before?: (current: StateFile | undefined) => Promise<void>,
  ): Promise<void> {
    let queued: { notBefore: number } | undefined;
    await this.underLease(dir, async (current) => {
      await before?.(current);
      queued = await this.admitted(dir, read);
    });
    if (queued)
      this.deps.enqueue(
        { workspace: read.workspace, sha256: read.sha256, arrivedAt: read.mtimeMs },
        queued.notBefore,
      );
  }

  /** A valid incident: duplicate → rejected, no room → deferred, else `queued` (returned: for the scheduler). */
  private async admitted(
    dir: string,
    read: Extract<ReadResult, { kind: 'ok' }>,
  ): Promise<{ notBefore: number } | undefined> {
    const current = await this.deps.store.read(dir);
    const { sha256 } = read;
    const { incident } = read.workspace;
    const duplicate = isFirstJudgement(current)
      ? await this.deps.dedup.claim(dedupKey(incident), incident.incidentId)
      : undefined;
    const release = this.deps.reserve();
    const a = admit({ state: current, duplicate, queueFull: !release });
    try {
      if (a.kind === 'duplicate') {
        const reason =
          `duplicate of ${a.duplicateOf} (same cluster, resource and faultType ${Math.round(a.ageMs / 1000)} s earlier) ` +
          `inside the ${formatMs(this.deps.intake.dedupWindowMs)} dedup window: not run; re-save incident.json after the window to run it`;
        await this.applyIf(dir, current, {
          type: 'Duplicate',
          incidentId: incident.incidentId,
          sha256,
          duplicateOf: a.duplicateOf,
          reason,
        });
        this.finals.set(dir, await finalMark(dir));
        // An alert storm's duplicates are most of its folders: none of them keeps a watch.
        this.unwatch(dir);
        return undefined;
      }
      if (a.kind === 'defer') {
        const reason = `queue full (scheduling.queue_limit ${this.deps.queueLimit}); picked up when the queue drains`;
        await this.applyIf(dir, current, {
          type: 'QueueFull',
          incidentId: incident.incidentId,
          sha256,
          reason,
        });
        return undefined;
      }
      const applied = await this.deps.store.apply(
        dir,
        { type: 'Validated', incidentId: incident.incidentId, sha256 },
        current ? { current } : {},
      );
      if (!mayRun(applied.record)) return undefined;
      const retryAt = applied.record.retryAt ? Date.parse(applied.record.retryAt) : 0;
      return { notBefore: Number.isFinite(retryAt) ? retryAt : 0 };
    } finally {
      release?.();
    }
  }

  /** Runs `fn` holding the workspace lease briefly; nothing when another holder has it. */
  private async underLease(
    dir: string,
    fn: (current: StateFile | undefined) => Promise<void>,
  ): Promise<void> {
    const got = await acquireLease(dir, this.deps.identity, this.deps.lease);
    if (!got.acquired) {
      this.deps.log.debug(
        { workspace: path.basename(dir), holder: got.holder?.holder },
        'workspace lease held elsewhere',
      );
      return;
    }
    try {
      await fn(await this.deps.store.read(dir));
    } finally {
      await got.lease.release();
    }
  }

  private recheckNewFolder(dir: string): void {
    const attempt = this.newFolders.get(dir) ?? 0;
    const delayMs = NEW_FOLDER_RECHECKS_MS[attempt];
    if (delayMs === undefined) {
      this.newFolders.delete(dir);
      return;
    }
    this.newFolders.set(dir, attempt + 1);
    this.later(dir, delayMs, 'newdir');
  }

  /**
   * A folder that cannot be written into safely (it escapes the root, or a daemon-owned path in it is a
   * symlink) is never written into: its state goes under `<root>/.triage/unsafe/`.
   */
  private async rejectUnsafe(dir: string, reason: string): Promise<void> {
    const name = path.basename(dir);
    const unsafeDir = unsafeStateDir(this.deps.root);
    const file = unsafeStatePath(this.deps.root, name);
    // Read as any state file is: text that is not JSON, or not a state, is no state.
    const existing = await readStateFile(file).catch(() => undefined);
    if (existing?.reason === reason) return;
    await this.deps.store.apply(
      dir,
      { type: 'Invalid', incidentId: name, reason },
      { file, auditDir: unsafeDir, ...(existing ? { current: existing } : {}) },
    );
  }
}

/** What a rescan compares for a final folder: incident.json re-saved, or state.json changed elsewhere. */
const finalMark = async (dir: string): Promise<string> =>
  `${await fileMark(incidentPath(dir))}|${await fileMark(statePath(dir))}`;
