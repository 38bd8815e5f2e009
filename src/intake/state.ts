import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../util/fs.js';
import { INCIDENT_STATES, type IncidentState, type StateFile } from './types.js';

// `.triage/state.json`: the one record of where an incident is. Only legal transitions are written.

export const TRIAGE_DIR = '.triage';
export const STATE_FILE = 'state.json';

/** States nothing more happens in unless the producer changes incident.json (rejected only). */
export const FINAL_STATES: ReadonlySet<IncidentState> = new Set(['succeeded', 'failed', 'rejected']);

/** from → allowed next states. `undefined` stands for "no state.json yet". */
const TRANSITIONS: Record<IncidentState | 'new', readonly IncidentState[]> = {
  new: ['queued', 'deferred', 'rejected'],
  queued: ['queued', 'preparing', 'deferred', 'rejected', 'interrupted'],
  deferred: ['queued', 'deferred', 'rejected'],
  preparing: ['running', 'succeeded', 'failed', 'queued', 'interrupted', 'rejected'],
  running: ['succeeded', 'failed', 'queued', 'interrupted'],
  interrupted: ['queued', 'running', 'interrupted', 'rejected', 'deferred'],
  rejected: ['queued', 'rejected', 'deferred'],
  succeeded: [],
  failed: [],
};

export const isLegalTransition = (from: IncidentState | undefined, to: IncidentState): boolean =>
  TRANSITIONS[from ?? 'new'].includes(to);

export class IllegalTransitionError extends Error {
  constructor(
    readonly from: IncidentState | undefined,
    readonly to: IncidentState,
    readonly file: string,
  ) {
    super(
      `illegal state transition ${from ?? '(none)'} → ${to} for ${file}; allowed from ${from ?? '(none)'}: ${TRANSITIONS[from ?? 'new'].join(', ') || 'nothing (final)'}`,
    );
    this.name = 'IllegalTransitionError';
  }
}

export const triageDir = (workspaceDir: string): string => path.join(workspaceDir, TRIAGE_DIR);
export const statePath = (workspaceDir: string): string => path.join(workspaceDir, TRIAGE_DIR, STATE_FILE);

/** Reads state.json; undefined when absent. A corrupt file is reported as undefined with `corrupt` set. */
export async function readState(workspaceDir: string): Promise<StateFile | undefined> {
  let text: string;
  try {
    text = await readFile(statePath(workspaceDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR')
      return undefined;
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as StateFile;
    if (typeof parsed !== 'object' || parsed === null || !INCIDENT_STATES.includes(parsed.state))
      return undefined;
    return parsed;
  } catch {
    return undefined;
  }
}

/** Writes the next state after checking the transition is legal; the caller must hold the lease. */
export async function writeState(
  workspaceDir: string,
  previous: StateFile | undefined,
  next: StateFile,
  file = statePath(workspaceDir),
): Promise<StateFile> {
  if (!isLegalTransition(previous?.state, next.state))
    throw new IllegalTransitionError(previous?.state, next.state, file);
  // The brief's fields first, in its order, then extensions; undefined fields are dropped.
  const { incidentId, state, attempts, reason, updatedAt, runs, ...extra } = next;
  const ordered = { incidentId, state, attempts, reason, updatedAt, runs, ...extra };
  const clean = Object.fromEntries(
    Object.entries(ordered).filter(([, v]) => v !== undefined),
  ) as unknown as StateFile;
  await writeFileAtomic(file, `${JSON.stringify(clean, null, 2)}\n`);
  return clean;
}
