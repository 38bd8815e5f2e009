import { PRIVATE_FILE_MODE, readRegularFileSync, writeFileAtomic } from '../util/fs.js';
import { readOwnFileBelow } from '../util/safe-path.js';
import { VERDICTS, type RunStatus } from '../shared/status.js';
import { statePath } from './layout.js';

// The incident record (`.triage/state.json`): its states, its shape, and the one reader and writer of
// the file. `IncidentStore` (src/incident/store.ts) is the only caller that writes it; everyone else
// reads it here. See docs/architecture.md for the lifecycle.

/**
 * The states of `.triage/state.json`. `resolved` (the alert behind the incident resolved before its run
 * started) extends the fixed list; it is final like succeeded and failed. A run's verdict is a state
 * by the same word (`VERDICTS`, shared/status.ts).
 */
export const INCIDENT_STATES = [
  'queued',
  'preparing',
  'running',
  ...VERDICTS,
  'rejected',
  'deferred',
  'interrupted',
  'resolved',
] as const;
export type IncidentState = (typeof INCIDENT_STATES)[number];

/** A run as `runs` lists it (the one status vocabulary, shared/status.ts). */
export type { RunStatus } from '../shared/status.js';

/** What a running agent has done so far (from its streamed events), for status and the API. */
export interface RunProgress {
  turns: number;
  tokens: { input: number; output: number };
  lastTool?: string;
  /** The CLI is retrying the model API (cleared by the next turn). */
  retrying?: string;
  elapsedMs: number;
  updatedAt: string;
}

/** `.triage/state.json`: `{incidentId, state, attempts, reason?, updatedAt, runs:[{id, status}]}` (+ extensions). */
export interface StateFile {
  incidentId: string;
  state: IncidentState;
  attempts: number;
  reason?: string;
  updatedAt: string;
  runs: { id: string; status: RunStatus }[];
  /** Set when the incident was recorded as a duplicate of an earlier one inside the dedup window. */
  duplicateOf?: string;
  /** sha256 of the incident.json bytes that this state describes; a changed file re-queues. */
  incidentSha256?: string;
  /** When a transient failure is retried, not before this time (ISO-8601). */
  retryAt?: string;
  /** Interrupted because its run did not stop at shutdown: the next start adopts it before any re-run. */
  unstopped?: true;
  /** `attempts` when the current series began (a retry or a changed incident starts a new series). */
  attemptBase?: number;
  /** What the daemon waits for before the next attempt (an engine that does not answer). */
  waitingFor?: string;
  /** Live progress of the current run (running only). */
  progress?: RunProgress;
  /** When the alert behind the incident resolved (ISO-8601). */
  resolvedAt?: string;
}

/** A state file is a few KB; a larger one is not a state the daemon wrote. */
export const STATE_MAX_BYTES = 1 << 20;

/** The file's text, read without following a link at its place and within STATE_MAX_BYTES. */
const readStateText = (file: string): string =>
  readRegularFileSync(file, { noFollow: true, maxBytes: STATE_MAX_BYTES }).toString('utf8');

/**
 * Reads a state file; undefined when absent, a link, not JSON, or not a known state. A FIFO or another
 * non-file at its place, or one over STATE_MAX_BYTES, throws (EINVAL, EFBIG) with the reason.
 */
export async function readStateFile(file: string): Promise<StateFile | undefined> {
  let text: string;
  try {
    text = readStateText(file); // synchronous: a small file, see util/fs.ts
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
 * at its place is not a state (not JSON, not a state, a link, a folder or a pipe, too large). One read
 * decides: a state file appears whole, by rename, so one written meanwhile is read whole or not at all.
 */
export function readStateChecked(workspaceDir: string): { state: StateFile | undefined } | 'damaged' {
  let text: string;
  try {
    text = readStateText(statePath(workspaceDir));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { state: undefined };
    if (code === 'ELOOP' || code === 'EINVAL' || code === 'EFBIG') return 'damaged';
    throw err;
  }
  const state = parseStateText(text);
  return state ? { state } : 'damaged';
}

/** `<workspace>/.triage/state.json`; undefined when absent or unreadable as a state. */
export const readState = (workspaceDir: string): Promise<StateFile | undefined> =>
  readStateFile(statePath(workspaceDir));

/**
 * A state file below `base` (the workspaces root, or the workspace), never through a link in any folder
 * on the way: the record, `missing`, or `refused` (a link, not a file, too large, not a state) with why.
 */
export async function readStateBelow(
  base: string,
  file: string,
): Promise<{ kind: 'ok'; state: StateFile } | { kind: 'missing' } | { kind: 'refused'; reason: string }> {
  const read = await readOwnFileBelow(base, file, STATE_MAX_BYTES).catch((err: unknown) => ({
    kind: 'refused' as const,
    reason: `${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
  }));
  if (read.kind !== 'ok') return read;
  const state = parseStateText(read.text);
  return state ? { kind: 'ok', state } : { kind: 'refused', reason: `${file} is not a state record` };
}

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
