import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { RUN_FILES } from '../audit/bundle.js';
import { runResultSchema, type RunResult } from '../audit/run-record.js';
import { OUTPUT_DIR, REPORT_FILE } from '../daemon/run/layout.js';
import { CLUSTER_CALLS_FILE, readCallLog } from '../kubectl/broker/calls.js';
import { CLUSTER_OUTPUTS_FILE, readOutputLog } from '../kubectl/broker/outputs.js';
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

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function pickResult(raw: Record<string, unknown>): RunFacts {
  const out: RunFacts = {};
  if (typeof raw.status === 'string') out.status = raw.status;
  if (typeof raw.exitCode === 'number' || raw.exitCode === null) out.exitCode = raw.exitCode;
  const duration = num(raw.durationMs);
  if (duration !== undefined) out.durationMs = duration;
  const tokens = raw.tokens as { input?: unknown; output?: unknown } | undefined;
  if (tokens && num(tokens.input) !== undefined && num(tokens.output) !== undefined) {
    out.tokens = { input: tokens.input as number, output: tokens.output as number };
  }
  const cost = num(raw.costUsd);
  if (cost !== undefined) out.costUsd = cost;
  const turns = num(raw.turns);
  if (turns !== undefined) out.turns = turns;
  if (typeof raw.error === 'string') out.error = raw.error;
  const verdict = (raw.evidence as { verdict?: unknown } | undefined)?.verdict;
  if (verdict === 'grounded' || verdict === 'partial' || verdict === 'ungrounded') out.evidence = verdict;
  if (typeof raw.engine === 'string') out.engine = raw.engine;
  const guard = (raw.kubectl as { guard?: unknown } | undefined)?.guard;
  if (guard === 'broker' || guard === 'off' || guard === 'unavailable') out.kubectlGuard = guard;
  const measures = runResultSchema.shape.measures.safeParse(raw.measures);
  if (measures.success && measures.data) out.measures = measures.data;
  return out;
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
  const outOfReach =
    guard === 'broker' && artifacts.result?.engine !== 'process' && artifacts.agentNotesCalls === 0;
  return outOfReach ? 'daemon' : 'agent-writable';
}

/** Reads a run's result.json, report and kubectl-calls.jsonl. */
export async function readRunArtifacts(workspaceDir: string, runDir: string): Promise<RunArtifacts> {
  const problems: string[] = [];
  const out: RunArtifacts = { calls: [], agentNotesCalls: 0, promql: { calls: 0, notRecorded: 0 }, problems };
  const resultFile = path.join(runDir, RUN_FILES.result);
  const resultText = await readFile(resultFile, 'utf8').catch(() => undefined);
  if (resultText === undefined) problems.push(`${resultFile} is missing`);
  else {
    try {
      out.result = pickResult(JSON.parse(resultText) as Record<string, unknown>);
    } catch (err) {
      problems.push(`${resultFile} is not valid JSON (${(err as Error).message})`);
    }
  }
  const reportFile = path.join(workspaceDir, OUTPUT_DIR, REPORT_FILE);
  const info = await stat(reportFile).catch(() => undefined);
  if (info?.isFile()) {
    const bytes = await readFile(reportFile);
    if (bytes.length > MAX_REPORT_BYTES)
      problems.push(`${reportFile} has ${bytes.length} bytes; scored on the first ${MAX_REPORT_BYTES}`);
    out.report = bytes.subarray(0, MAX_REPORT_BYTES).toString('utf8');
  }
  // The triage script records at the bundle's top (it runs as the daemon), the agent in the one
  // folder of the bundle it may write.
  for (const name of [CALLS_FILE, AGENT_NOTES_CALLS]) {
    const callsText = await readFile(path.join(runDir, name), 'utf8').catch(() => '');
    for (const [i, line] of callsText.split('\n').entries()) {
      if (line.trim() === '') continue;
      try {
        const record = JSON.parse(line) as KubectlCallRecord;
        if (
          typeof record.normalized === 'string' &&
          (record.stage === 'agent' || record.stage === 'triage')
        ) {
          out.calls.push(record);
          if (name === AGENT_NOTES_CALLS) out.agentNotesCalls += 1;
        } else problems.push(`${name} line ${i + 1} is not a call record`);
      } catch {
        problems.push(`${name} line ${i + 1} is not valid JSON`);
      }
    }
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
  const { records, unreadable } = await readCallLog(path.join(runDir, CLUSTER_CALLS_FILE));
  if (unreadable > 0)
    problems.push(`${CLUSTER_CALLS_FILE} has ${unreadable} lines that are not call records`);
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
  const { records } = await readCallLog(path.join(runDir, CLUSTER_CALLS_FILE));
  const outputs = await readOutputLog(path.join(runDir, CLUSTER_OUTPUTS_FILE));
  const notRecorded = outputs.filter(
    (o) =>
      o.tool === 'prometheus' &&
      o.by === 'guard' &&
      (o.prometheus?.answer as { errorType?: unknown } | undefined)?.errorType === 'not_recorded',
  ).length;
  return { calls: records.filter((r) => r.tool === 'prometheus' && r.by === 'guard').length, notRecorded };
}
