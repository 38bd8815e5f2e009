import { acceptsChange, isFinal, isFirstJudgement, isRejected, mayStillRun } from '../incident/queries.js';
import type { StateFile } from '../workspace/state.js';
import type { ReadResult } from '../workspace/incident.js';

// The intake judge: what to do with a workspace folder, given its recorded state, what reading its
// incident.json gave and the time. Pure, so every case is a table row in a unit test.

/** Why a folder is being looked at. */
export type Cause = 'startup' | 'rescan' | 'add' | 'change' | 'addDir' | 'newdir' | 'settle' | 'requeue';

export interface JudgeInput {
  cause: Cause;
  state: StateFile | undefined;
  read: ReadResult;
  now: number;
  /** An in-place write is judged once the file has not changed for this long. */
  writeSettleMs: number;
  /** An incomplete file (empty, cut-off JSON) is rejected only once unchanged for this long. */
  incompleteGraceMs: number;
}

export type Judgement =
  /** A run is recorded in the engine (or did not stop at shutdown): adopt it, on a scan. */
  | { kind: 'adopt' }
  /** A run is recorded in the engine and this is not a scan: nothing to do here. */
  | { kind: 'busy' }
  /** Nothing more to do until incident.json changes. */
  | { kind: 'final' }
  /** A finished incident whose incident.json now holds other bytes: a new series of attempts. */
  | { kind: 'changed'; sha256: string; incidentId: string }
  /** No incident.json (yet); look again shortly when the folder is new. */
  | { kind: 'missing'; recheck: boolean }
  /** Still being written: look again after `delayMs`. */
  | { kind: 'wait'; delayMs: number }
  | { kind: 'reject'; reason: string; sha256?: string }
  /** A valid incident: admit it (dedup, queue room). */
  | { kind: 'accept'; sha256: string; incidentId: string };

/** While incident.json is incomplete and still changing, it is re-read this often (ms). */
export const INCOMPLETE_RECHECK_MS = 25;

export function judge(input: JudgeInput): Judgement {
  const { state, read, cause } = input;
  if (state && mayStillRun(state))
    return cause === 'startup' || cause === 'rescan' ? { kind: 'adopt' } : { kind: 'busy' };
  if (read.kind === 'missing') return { kind: 'missing', recheck: cause === 'addDir' || cause === 'newdir' };
  const sha256 = 'sha256' in read ? read.sha256 : undefined;
  if (state && isFinal(state.state)) {
    if (sha256 === undefined || sha256 === state.incidentSha256) return { kind: 'final' };
    // Finished (not rejected) with other bytes: only a complete, valid file starts a new series.
    if (acceptsChange(state.state)) {
      if (read.kind !== 'ok') return settling(input, read) ?? { kind: 'final' };
      return { kind: 'changed', sha256: read.sha256, incidentId: read.workspace.incident.incidentId };
    }
  }
  if (read.kind === 'ok')
    return { kind: 'accept', sha256: read.sha256, incidentId: read.workspace.incident.incidentId };
  const wait = settling(input, read);
  if (wait) return wait;
  // The same rejection again (same bytes, same reason): already recorded.
  if (isRejected(state) && state.incidentSha256 === sha256 && state.reason === read.reason)
    return { kind: 'final' };
  return { kind: 'reject', reason: read.reason, ...(sha256 ? { sha256 } : {}) };
}

/** A file still being written is not judged yet: how long to wait, or undefined when it has settled. */
function settling(
  input: JudgeInput,
  read: Exclude<ReadResult, { kind: 'ok' | 'missing' }>,
): Judgement | undefined {
  if (read.kind !== 'incomplete') return undefined;
  const ageMs = input.now - read.mtimeMs;
  // Re-read soon while it changes: the watcher reports a burst of writes once, not write by write.
  if (ageMs < input.writeSettleMs)
    return { kind: 'wait', delayMs: Math.min(INCOMPLETE_RECHECK_MS, input.writeSettleMs - ageMs + 5) };
  // Empty or cut off: a slow writer may still be at it; give it the grace before calling it wrong.
  const grace = Math.max(input.writeSettleMs, input.incompleteGraceMs);
  if (ageMs < grace) return { kind: 'wait', delayMs: Math.max(INCOMPLETE_RECHECK_MS, grace - ageMs + 5) };
  return undefined;
}

export type Admission =
  { kind: 'duplicate'; duplicateOf: string; ageMs: number } | { kind: 'defer' } | { kind: 'enqueue' };

/** A valid incident: a duplicate inside the dedup window (first judgement only), no room, or queued. */
export function admit(input: {
  state: StateFile | undefined;
  duplicate: { incidentId: string; ageMs: number } | undefined;
  queueFull: boolean;
}): Admission {
  if (input.duplicate && isFirstJudgement(input.state))
    return { kind: 'duplicate', duplicateOf: input.duplicate.incidentId, ageMs: input.duplicate.ageMs };
  if (input.queueFull) return { kind: 'defer' };
  return { kind: 'enqueue' };
}
