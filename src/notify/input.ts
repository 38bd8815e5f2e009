import { hasVerdict } from '../incident/queries.js';
import { readAlertsRecord } from '../workspace/alerts.js';
import { readFeedback } from '../workspace/feedback.js';
import { readWorkspace, type Incident } from '../workspace/incident.js';
import { isRunId, runDirOf } from '../workspace/layout.js';
import { readReportHead } from '../workspace/report.js';
import { readRunResult as readRunRecord, type RunProducts, type RunResult } from '../workspace/run-record.js';
import { readState } from '../workspace/state.js';
import type { FinalStateRecord, FinishedIncident } from './types.js';

// What a notification is made of. The daemon hands the notifier what the run produced, in memory
// (finishedFromRun); what starts cold reads it back from the workspace through src/workspace/: the
// start-up catch-up, a resolution after the run, `triage-runner notify`, replay/compare `--notify`.

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
  const read = await readReportHead(workspaceDir, maxBytes);
  if (!read) return undefined;
  return { text: read.text, ...(read.truncated ? { truncated: { bytes: read.bytes } } : {}) };
}

/** The report text cut to `maxBytes` bytes (whole characters), as readReport cuts the file. */
export function cutReport(text: string, maxBytes: number): { text: string; truncated?: { bytes: number } } {
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return { text };
  const head = Buffer.from(text).subarray(0, maxBytes).toString('utf8');
  return { text: head.endsWith('\uFFFD') ? head.slice(0, -1) : head, truncated: { bytes } };
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
  const alerts = await readAlertsRecord(workspaceDir);
  const feedback = await readFeedback(workspaceDir);
  return finishedIncident(workspaceDir, state, runId, {
    incident,
    ...(result ? { result } : {}),
    ...(report ? { report } : {}),
    ...(alerts?.resolvedAt ? { resolvedAt: alerts.resolvedAt } : {}),
    ...(alerts?.workloads ? { workloads: alerts.workloads } : {}),
    ...(feedback
      ? { feedback: { verdict: feedback.verdict, ...(feedback.by ? { by: feedback.by } : {}) } }
      : {}),
  });
}

/** A FinishedIncident from its parts, however they were come by. */
function finishedIncident(
  workspaceDir: string,
  state: FinalStateRecord,
  runId: string,
  parts: Pick<FinishedIncident, 'incident' | 'result' | 'resolvedAt' | 'feedback' | 'workloads'> & {
    report?: { text: string; truncated?: { bytes: number } };
  },
): FinishedIncident {
  const { report, ...rest } = parts;
  return {
    workspaceDir,
    state,
    runId,
    ...rest,
    ...(report ? { report: report.text } : {}),
    ...(report?.truncated ? { reportTruncated: report.truncated } : {}),
  };
}

/**
 * `input` with the workloads alerts.json records (a storm's incident names every one), read when the
 * input was made without them (a run's start or end, held in memory).
 */
export async function withWorkloads(input: FinishedIncident): Promise<FinishedIncident> {
  if (input.workloads) return input;
  const workloads = (await readAlertsRecord(input.workspaceDir))?.workloads;
  return workloads ? { ...input, workloads } : input;
}

/**
 * A FinishedIncident from what the run produced, held in memory by the daemon: nothing is read back
 * from disk. A run that just ended has no responders' verdict yet; its alerts' resolution is the one
 * its state record notes.
 */
export function finishedFromRun(
  workspaceDir: string,
  state: FinalStateRecord & { resolvedAt?: string },
  runId: string,
  run: RunProducts,
  limits: Pick<ReadLimits, 'maxReportBytes'>,
): FinishedIncident {
  return finishedIncident(workspaceDir, state, runId, {
    incident: run.incident,
    ...(run.result ? { result: run.result } : {}),
    ...(run.report !== undefined ? { report: cutReport(run.report, limits.maxReportBytes) } : {}),
    ...(state.resolvedAt ? { resolvedAt: state.resolvedAt } : {}),
  });
}
