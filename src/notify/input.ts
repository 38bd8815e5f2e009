import path from 'node:path';
import { readRunResult as readRunRecord, type RunResult } from '../audit/run-record.js';
import { isRunId, runDirOf } from '../shared/triage-paths.js';
import { readWorkspace } from '../intake/read.js';
import { readState } from '../incident/store.js';
import { hasVerdict } from '../incident/queries.js';
import type { Incident } from '../shared/types.js';
import { readFeedback } from '../feedback/feedback.js';
import { alertsResolvedAt } from '../intake/webhooks/disk.js';
import { readNoFollow, UnsafePathError } from './safe-fs.js';
import type { FinalStateRecord, FinishedIncident } from './types.js';

// Reads a finished incident back from its workspace, for `triage-runner notify`, replay/compare
// `--notify` and the start-up catch-up. The daemon passes what it holds in memory instead.

export const REPORT_PATH = path.join('output', 'investigation.md');

export class NotifyInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotifyInputError';
  }
}

export interface ReadLimits {
  maxIncidentBytes: number;
  maxReportBytes: number;
}

export async function readIncident(workspaceDir: string, maxBytes: number): Promise<Incident> {
  const read = await readWorkspace(workspaceDir, { maxBytes });
  if (read.kind === 'ok') return read.workspace.incident;
  throw new NotifyInputError(
    read.kind === 'missing'
      ? `${workspaceDir} has no incident.json: it is not an incident workspace`
      : read.reason,
  );
}

/** result.json of a run, read through the run record's own reader; undefined when absent or unreadable. */
export async function readRunResult(workspaceDir: string, runId: string): Promise<RunResult | undefined> {
  if (!isRunId(runId))
    throw new NotifyInputError(`run id ${JSON.stringify(runId)} is not a safe folder name`);
  const read = await readRunRecord(runDirOf(workspaceDir, runId));
  return read.ok ? read.value : undefined;
}

/** The report, cut to `maxBytes`; undefined when absent. A link or a non-file there counts as absent. */
export async function readReport(
  workspaceDir: string,
  maxBytes: number,
): Promise<{ text: string; truncated?: { bytes: number } } | undefined> {
  let read;
  try {
    read = await readNoFollow(workspaceDir, REPORT_PATH, maxBytes);
  } catch (err) {
    if (err instanceof UnsafePathError) return undefined;
    throw err;
  }
  if (!read) return undefined;
  return { text: read.text, ...(read.truncated ? { truncated: { bytes: read.bytes } } : {}) };
}

/** The state record; throws when the incident has not reached a final state with a run. */
export async function readFinalState(workspaceDir: string): Promise<FinalStateRecord & { runId: string }> {
  const state = await readState(workspaceDir);
  if (!state)
    throw new NotifyInputError(
      `${workspaceDir} has no readable .triage/state.json: the daemon has not processed it`,
    );
  const runId = state.runs.at(-1)?.id;
  if (!hasVerdict(state.state))
    throw new NotifyInputError(
      `${workspaceDir} is ${state.state}, not finished (succeeded or failed): nothing to deliver yet`,
    );
  if (!runId)
    throw new NotifyInputError(`${workspaceDir} is ${state.state} but records no run: nothing to deliver`);
  return { ...state, runId };
}

/** Everything a notification needs, from disk. */
export async function readFinishedIncident(
  workspaceDir: string,
  limits: ReadLimits,
): Promise<FinishedIncident> {
  const state = await readFinalState(workspaceDir);
  return finishedFrom(workspaceDir, state, state.runId, limits);
}

/** A FinishedIncident for a given state and run (replay and compare build their own state). */
export async function finishedFrom(
  workspaceDir: string,
  state: FinalStateRecord,
  runId: string,
  limits: ReadLimits,
): Promise<FinishedIncident> {
  const incident = await readIncident(workspaceDir, limits.maxIncidentBytes);
  const result = await readRunResult(workspaceDir, runId);
  const report = await readReport(workspaceDir, limits.maxReportBytes);
  const resolvedAt = await alertsResolvedAt(workspaceDir);
  const feedback = await readFeedback(workspaceDir);
  return {
    workspaceDir,
    incident,
    state,
    runId,
    ...(resolvedAt ? { resolvedAt } : {}),
    ...(feedback
      ? { feedback: { verdict: feedback.verdict, ...(feedback.by ? { by: feedback.by } : {}) } }
      : {}),
    ...(result ? { result } : {}),
    ...(report ? { report: report.text } : {}),
    ...(report?.truncated ? { reportTruncated: report.truncated } : {}),
  };
}
