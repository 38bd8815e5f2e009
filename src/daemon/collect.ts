import type { AgentOutcome } from '../agents/types.js';
import type { RunResult } from '../audit/bundle.js';
import { checkReport as inspectReport } from '../audit/report.js';
import type { RunOutcomeStatus } from './types.js';

// Collect: what the run left (report, exit, adapter outcome) turned into result.json and an outcome.

export interface ReportCheck {
  /** Path as the agent saw it (recorded in result.json). */
  path: string;
  bytes: number;
  /** False when absent or smaller than agent.min_report_bytes. */
  present: boolean;
  missingSections: string[];
}

/** Reads the report on the host and checks size and headings (one check, shared with compare). */
export async function checkReport(
  hostPath: string,
  agentPath: string,
  minBytes: number,
  sections: string[],
): Promise<ReportCheck> {
  const check = await inspectReport(hostPath, sections, minBytes);
  return {
    path: agentPath,
    bytes: check.bytes,
    present: check.exists && !check.tooSmall,
    missingSections: check.missingSections,
  };
}

export interface Verdict {
  status: RunOutcomeStatus;
  reason?: string;
}

/** The run's status: timeouts and interruptions first, then the adapter's reading, then the report. */
export function verdict(input: {
  timedOut: boolean;
  interrupted: boolean;
  outcome: AgentOutcome;
  report: ReportCheck;
  minBytes: number;
  engineError?: string;
}): Verdict {
  const { outcome, report } = input;
  // An engine problem seen while stopping (unreachable, no exit after SIGKILL) belongs in the reason.
  const engine = input.engineError ? `; engine: ${input.engineError}` : '';
  if (input.interrupted)
    return { status: 'interrupted', reason: `the daemon stopped the agent while shutting down${engine}` };
  if (input.timedOut)
    return { status: 'timed_out', reason: `the agent run exceeded agent.timeout and was stopped${engine}` };
  if (outcome.status !== 'succeeded') {
    const why = outcome.error ?? `agent ${outcome.status} (exit code ${String(outcome.exitCode)})`;
    return { status: 'failed', reason: input.engineError ? `${why}; engine: ${input.engineError}` : why };
  }
  if (!report.present) {
    return {
      status: 'failed',
      reason:
        report.bytes === 0
          ? `the agent exited successfully but wrote no report at ${report.path}`
          : `the report at ${report.path} has ${report.bytes} bytes, fewer than agent.min_report_bytes (${input.minBytes})`,
    };
  }
  return { status: 'succeeded' };
}

export interface ResultInput {
  verdict: Verdict;
  outcome: AgentOutcome;
  report: ReportCheck;
  agent: string;
  engine: string;
  startedAt: Date;
  finishedAt: Date;
  runId: string;
  incidentId: string;
  model?: string;
  promptSha256?: string;
  triageStatus?: string;
  extra?: Record<string, unknown>;
}

/** result.json: the brief's fields, then our extensions. */
export function buildResult(r: ResultInput): RunResult {
  return {
    status: r.verdict.status,
    exitCode: r.outcome.exitCode,
    agent: r.agent,
    engine: r.engine,
    startedAt: r.startedAt.toISOString(),
    finishedAt: r.finishedAt.toISOString(),
    durationMs: r.finishedAt.getTime() - r.startedAt.getTime(),
    tokens: r.outcome.tokens,
    ...(r.outcome.costUsd !== undefined ? { costUsd: r.outcome.costUsd } : {}),
    report: { path: r.report.path, bytes: r.report.bytes, missingSections: r.report.missingSections },
    runId: r.runId,
    incidentId: r.incidentId,
    ...(r.model !== undefined ? { model: r.model } : {}),
    agentStatus: r.outcome.status,
    ...(r.outcome.turns !== undefined ? { turns: r.outcome.turns } : {}),
    ...(r.verdict.reason !== undefined ? { error: r.verdict.reason } : {}),
    ...(r.triageStatus !== undefined ? { triage: { status: r.triageStatus } } : {}),
    ...(r.promptSha256 !== undefined ? { promptSha256: r.promptSha256 } : {}),
    ...r.extra,
  };
}
