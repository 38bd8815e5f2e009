import path from 'node:path';
import type { EngineName } from '../config/schema.js';
import { ENGINE_PLACEMENT } from '../engines/index.js';
import { errorMessage } from '../util/errors.js';
import { readOwnFileBelow } from '../util/safe-path.js';
import { readReportHead } from '../workspace/report.js';
import { readRunResult, type RunResult } from '../workspace/run-record.js';
import { reportPath, RUN_FILES } from '../workspace/layout.js';
import { readCallLog } from '../kubectl/broker/calls.js';
import { readOutputLog } from '../kubectl/broker/outputs.js';
import { CALLS_FILE, type KubectlCallRecord } from './shim/log.js';

// What a finished eval run left behind, read back for scoring: result.json's usage fields, the report
// (capped), and the kubectl call log. Malformed lines and files are reported, never fatal.

/** A report larger than this is scored on its first bytes only. */
export const MAX_REPORT_BYTES = 2 * 1024 * 1024;

export interface RunFacts {
  status?: string;
  exitCode?: number | null;
  durationMs?: number;
  tokens?: { input: number; output: number };
  costUsd?: number;
  turns?: number;
  error?: string;
  /** The evidence check's verdict. */
  evidence?: 'grounded' | 'partial' | 'ungrounded';
  /** How the agent's cluster calls were guarded (result.json `kubectl.guard`). */
  kubectlGuard?: 'broker' | 'off' | 'unavailable';
  /** The engine that ran the agent (result.json `engine`). */
  engine?: string;
  /** The run's model calls as the gateway counted them (result.json `measures`). */
  measures?: RunMeasuresRecord;
}

export type RunMeasuresRecord = NonNullable<RunResult['measures']>;

export interface RunArtifacts {
  result?: RunFacts;
  report?: string;
  calls: KubectlCallRecord[];
  /** The agent's promql calls, and how many of them the recordings could not answer. */
  promql: { calls: number; notRecorded: number };
  /** How many of `calls` came from the bundle's agent-notes/, which the agent can write. */
  agentNotesCalls: number;
  /** What could not be read (unreadable result.json, malformed call lines). */
  problems: string[];
}

/** The fields of result.json a score reads. */
function pickResult(result: RunResult): RunFacts {
  return {
    status: result.status,
    exitCode: result.exitCode,
    durationMs: result.durationMs,
    tokens: { input: result.tokens.input, output: result.tokens.output },
    ...(result.costUsd !== undefined ? { costUsd: result.costUsd } : {}),
    ...(result.turns !== undefined ? { turns: result.turns } : {}),
    ...(result.error !== undefined ? { error: result.error } : {}),
    ...(result.evidence ? { evidence: result.evidence.verdict } : {}),
    engine: result.engine,
    ...(result.kubectl ? { kubectlGuard: result.kubectl.guard } : {}),
    ...(result.measures ? { measures: result.measures } : {}),
  };
}

/** The shim's record in the one folder of the bundle the agent may write (the agent's own container). */
const AGENT_NOTES_CALLS = path.join(RUN_FILES.agentNotes, CALLS_FILE);

/**
 * Whether every kubectl call record the score read was out of the agent's reach: `daemon` when the
 * guard's broker ran the shim, the agent ran in a container (under the process engine it runs as the
 * daemon's user and can rewrite the whole bundle), and no record came from agent-notes/ (where the
 * shim writes when the agent runs it itself, around the guard). `agent-writable` otherwise; undefined
 * when result.json does not say how the calls were guarded.
 */
export function kubectlRecordOf(artifacts: RunArtifacts): 'daemon' | 'agent-writable' | undefined {
  const guard = artifacts.result?.kubectlGuard;
  if (guard === undefined) return undefined;
  const engine = artifacts.result?.engine;
  const inContainer =
    engine !== undefined && Object.hasOwn(ENGINE_PLACEMENT, engine)
      ? ENGINE_PLACEMENT[engine as EngineName] === 'container'
      : false;
  const outOfReach = guard === 'broker' && inContainer && artifacts.agentNotesCalls === 0;
  return outOfReach ? 'daemon' : 'agent-writable';
}

/** The call records of a kubectl-calls.jsonl text; malformed lines are listed in `problems`. */
export function parseCallLines(text: string, name: string, problems: string[]): KubectlCallRecord[] {
  const calls: KubectlCallRecord[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    try {
      const record = JSON.parse(line) as KubectlCallRecord;
      if (
        typeof record.normalized === 'string' &&
        Array.isArray(record.argv) &&
        (record.stage === 'agent' || record.stage === 'triage')
      )
        calls.push(record);
      else problems.push(`${name} line ${i + 1} is not a call record`);
    } catch {
      problems.push(`${name} line ${i + 1} is not valid JSON`);
    }
  }
  return calls;
}

/** A call log larger than this is not read (a run makes at most a few thousand calls). */
export const CALL_LOG_MAX_BYTES = 64 << 20;

/**
 * Reads a run's result.json, report and kubectl-calls.jsonl, below the workspace and never through a
 * link (the agent can write in the bundle and in output/), each within its bound.
 */
export async function readRunArtifacts(workspaceDir: string, runDir: string): Promise<RunArtifacts> {
  const problems: string[] = [];
  const out: RunArtifacts = {
    calls: [],
    agentNotesCalls: 0,
    promql: { calls: 0, notRecorded: 0 },
    problems,
  };
  const result = await readRunResult(runDir, workspaceDir);
  if (result.ok) out.result = pickResult(result.value);
  else problems.push(result.problem);
  const report = await readReportHead(workspaceDir, MAX_REPORT_BYTES);
  if (report) {
    if (report.truncated)
      problems.push(
        `${reportPath(workspaceDir)} has ${report.bytes} bytes; scored on the first ${MAX_REPORT_BYTES}`,
      );
    out.report = report.text;
  }
  // The triage script records at the bundle's top (it runs as the daemon), the agent in the one
  // folder of the bundle it may write.
  for (const name of [CALLS_FILE, AGENT_NOTES_CALLS]) {
    const read = await readOwnFileBelow(workspaceDir, path.join(runDir, name), CALL_LOG_MAX_BYTES).catch(
      (err: unknown) => ({
        kind: 'refused' as const,
        reason: `${name} cannot be read (${errorMessage(err)})`,
      }),
    );
    if (read.kind === 'refused') problems.push(read.reason);
    const calls = parseCallLines(read.kind === 'ok' ? read.text : '', name, problems);
    out.calls.push(...calls);
    if (name === AGENT_NOTES_CALLS) out.agentNotesCalls += calls.length;
  }
  out.calls.push(...(await guardRefusals(runDir, problems)));
  out.promql = await promqlCalls(runDir);
  out.calls.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return out;
}

/**
 * Calls the kubectl guard or the agent CLI refused before they reached the frozen cluster (the guard's
 * cluster-calls.jsonl), as refused calls with a violation: the scorer counts them like the shim's own.
 */
async function guardRefusals(runDir: string, problems: string[]): Promise<KubectlCallRecord[]> {
  const { records, unreadable } = await readCallLog(path.join(runDir, RUN_FILES.clusterCalls));
  if (unreadable > 0)
    problems.push(`${RUN_FILES.clusterCalls} has ${unreadable} lines that are not call records`);
  return records
    .filter((r) => r.decision === 'refused' && r.tool === 'kubectl')
    .map((r): KubectlCallRecord => ({
      at: r.at,
      stage: 'agent',
      argv: r.argv,
      normalized: r.normalized,
      category: r.category,
      exitCode: r.exitCode ?? 1,
      // A command the guard could not read is a usage error, as the shim counts it; the rest broke a rule.
      ...(r.rule === 'guard: unreadable'
        ? { answeredFrom: 'usage-error' as const }
        : {
            answeredFrom: 'refused' as const,
            violation: {
              category: r.category,
              reason: `${r.by === 'cli' ? 'agent CLI' : 'kubectl guard'}: ${r.rule}`,
            },
          }),
      durationMs: r.durationMs,
      stdoutBytes: r.stdoutBytes,
      stderrBytes: r.stderrBytes,
    }));
}

/** The agent's promql calls in the run's records, and those the case's recordings did not hold. */
async function promqlCalls(runDir: string): Promise<RunArtifacts['promql']> {
  const { records } = await readCallLog(path.join(runDir, RUN_FILES.clusterCalls));
  const outputs = await readOutputLog(path.join(runDir, RUN_FILES.clusterOutputs));
  const notRecorded = outputs.filter(
    (o) =>
      o.tool === 'prometheus' &&
      o.by === 'guard' &&
      (o.prometheus?.answer as { errorType?: unknown } | undefined)?.errorType === 'not_recorded',
  ).length;
  return { calls: records.filter((r) => r.tool === 'prometheus' && r.by === 'guard').length, notRecorded };
}
