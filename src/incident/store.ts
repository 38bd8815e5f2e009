import path from 'node:path';
import { stateDigest } from '../audit/digest.js';
import type { AuditEvent, AuditLog } from '../audit/log.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';
import { PRIVATE_FILE_MODE, readRegularFileSync, writeFileAtomic } from '../util/fs.js';
import { ensureOwnDir } from '../util/safe-path.js';
import {
  transition,
  type IncidentEvent,
  type IncidentMetric,
  type MachineContext,
  type Transition,
} from './machine.js';
import { INCIDENT_STATES, type StateFile } from './types.js';
import { statePath, triageDir } from '../shared/triage-paths.js';
import { KeyedQueue } from '../util/keyed-queue.js';
import { backoffDelay, type BackoffPolicy } from '../util/backoff.js';

// Applies transitions: the state file first (atomically), then the audit events, the metric and the
// log line. The only writer of state.json. Callers hold the workspace lease while they apply.

/** Reads a state file; undefined when absent, not JSON, or not a known state. */
export async function readStateFile(file: string): Promise<StateFile | undefined> {
  let text: string;
  try {
    text = readRegularFileSync(file).toString('utf8'); // synchronous: a small file, see util/fs.ts
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') return undefined;
    throw err;
  }
  return parseStateText(text);
}

/**
 * A state file's text as a record; undefined when not JSON, not a known state, or missing what every
 * reader relies on (the incident id, the attempts, the runs with their ids and statuses): such a file
 * reads as damaged, like one that is not JSON, instead of failing whoever reads it later (the status
 * index of the whole root, each transition of the incident).
 */
export function parseStateText(text: string): StateFile | undefined {
  let parsed: Partial<StateFile> | null;
  try {
    parsed = JSON.parse(text) as Partial<StateFile> | null;
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { state, incidentId, attempts, runs, updatedAt } = parsed;
  if (state === undefined || !INCIDENT_STATES.includes(state)) return undefined;
  if (typeof incidentId !== 'string' || typeof updatedAt !== 'string') return undefined;
  if (!Number.isSafeInteger(attempts) || (attempts as number) < 0) return undefined;
  const runOk = (r: unknown) =>
    typeof r === 'object' &&
    r !== null &&
    typeof (r as { id?: unknown }).id === 'string' &&
    typeof (r as { status?: unknown }).status === 'string';
  if (!Array.isArray(runs) || !runs.every(runOk)) return undefined;
  return parsed as StateFile;
}

/**
 * A workspace's state as intake judges it: its record, no record (absent), or 'damaged' when something
 * at its place is not a state (not JSON, not a state, a folder or a pipe, a link loop). One read
 * decides: a state file appears whole, by rename, so one written meanwhile is read whole or not at all.
 */
export function readStateChecked(workspaceDir: string): { state: StateFile | undefined } | 'damaged' {
  let text: string;
  try {
    text = readRegularFileSync(statePath(workspaceDir)).toString('utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { state: undefined };
    if (code === 'ELOOP' || code === 'EINVAL') return 'damaged';
    throw err;
  }
  const state = parseStateText(text);
  return state ? { state } : 'damaged';
}

export const readState = (workspaceDir: string): Promise<StateFile | undefined> =>
  readStateFile(statePath(workspaceDir));

/**
 * Writes a state file: the fixed fields first, in order, then extensions; undefined fields dropped.
 * With `createDir: false` a folder removed meanwhile (a deleted workspace) is not made again.
 */
export async function writeState(
  file: string,
  record: StateFile,
  options: { createDir?: boolean } = {},
): Promise<void> {
  const { incidentId, state, attempts, reason, updatedAt, runs, ...extra } = record;
  const ordered = { incidentId, state, attempts, reason, updatedAt, runs, ...extra };
  const clean = Object.fromEntries(Object.entries(ordered).filter(([, v]) => v !== undefined));
  await writeFileAtomic(file, `${JSON.stringify(clean, null, 2)}\n`, PRIVATE_FILE_MODE, options);
}

export interface StateChange {
  dir: string;
  record: StateFile;
  previous: StateFile | undefined;
  event: IncidentEvent;
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
    this.deps.onChange?.({ dir, record: t.record, previous, event });
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
