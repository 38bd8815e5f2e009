import type { AgentOutcome } from '../agents/types.js';
import type { ReportCheck } from '../audit/report.js';
import type { RunIdentity, RunResult } from '../workspace/run-record.js';
import type { EngineCapabilities, Placement } from '../engines/types.js';
import type { RunOutcomeStatus } from './types.js';
import type { Supervised } from './supervise.js';
import path from 'node:path';
import { fileDigest, folderDigests } from '../audit/digest.js';

// What a run left (report, exit, adapter outcome) turned into a verdict, result.json and the digests
// of the files the `finished` event records. Pure but for the digests.

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
    if (report.refused) return { status: 'failed', reason: `the report was not read: ${report.refused}` };
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

/**
 * Why a run ended with a SIGKILL the daemon did not send. An engine that does not report memory kills
 * (Podman, a host process) shows one only as exit 137: say what it most likely was.
 */
export function killedFromOutside(
  supervised: Supervised,
  engine: { placement: Placement; capabilities: EngineCapabilities },
): string | undefined {
  const { exit } = supervised;
  if (supervised.stoppedWith || exit.oomKilled) return undefined;
  if (exit.exitCode !== 137 && exit.signal !== 'SIGKILL') return undefined;
  return engine.placement === 'host'
    ? 'the agent was killed with SIGKILL by something other than the daemon (often the kernel OOM killer): check the host memory and dmesg'
    : 'the agent was killed with SIGKILL (exit 137) by something other than the daemon, most likely the memory limit (docker.memory): raise docker.memory or check the engine events';
}

export interface ResultInput extends RunIdentity {
  verdict: Verdict;
  outcome: AgentOutcome;
  report: ReportCheck;
  model?: string;
  promptSha256?: string;
  triageStatus?: string;
  answer?: string;
  extra?: Record<string, unknown>;
}

/** result.json: the fixed fields, then our extensions. */
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
    ...(r.answer ? { answer: r.answer } : {}),
    ...(r.triageStatus !== undefined ? { triage: { status: r.triageStatus } } : {}),
    ...(r.promptSha256 !== undefined ? { promptSha256: r.promptSha256 } : {}),
    ...r.extra,
  };
}

/** What the `finished` event records of the files the run wrote: every bundle file and the report. */
export async function recordedFiles(
  bundleDir: string,
  reportHostPath?: string,
): Promise<{ files: Record<string, string>; report?: { path: string; sha256: string } }> {
  const files = await folderDigests(bundleDir);
  const sha256 = reportHostPath ? await fileDigest(reportHostPath).catch(() => undefined) : undefined;
  // The report's path relative to the workspace (the bundle is <workspace>/.triage/runs/<id>).
  const workspace = path.dirname(path.dirname(path.dirname(bundleDir)));
  return {
    files,
    ...(sha256 && reportHostPath
      ? { report: { path: path.relative(workspace, reportHostPath), sha256 } }
      : {}),
  };
}
