import { lstat, readFile } from 'node:fs/promises';
import { compileCluster } from '../cases/compile.js';
import { EvalUsageError, loadCase, type EvalCase } from '../cases/load.js';
import { readPlantedTokens, returnedText } from '../cases/tokens.js';
import type { FrozenCluster } from '../shim/cluster.js';
import type { KubectlCallRecord } from '../shim/log.js';
import { CALL_LOG_MAX_BYTES, MAX_REPORT_BYTES, parseCallLines } from '../artifacts.js';
import { scoreRun, type CaseScore } from './score.js';

// `eval score <case> <report>`: a report scored against a case's answer key with no agent run, offline
// (an edited report, a report from another tool, a rubric change tried on an old answer). The run's
// kubectl calls are optional: with them the forbidden calls count and the planted tokens the report
// quotes are checked against what those calls returned; without them neither is looked at.

/** What scoring a case's runs needs of its frozen cluster. */
export interface CaseKey {
  cluster: FrozenCluster;
  /** Names of the cluster's objects (events and namespaces left out). */
  objectNames: string[];
  /** The case's planted tokens (cluster/tokens.yaml). */
  planted: string[];
}

/** The frozen cluster's part of the answer key: its objects' names and its planted tokens. */
export async function caseKeyOf(evalCase: EvalCase, cluster: FrozenCluster): Promise<CaseKey> {
  const objectNames = [
    ...new Set(
      cluster.objects.filter((o) => o.type !== 'events' && o.type !== 'namespaces').map((o) => o.name),
    ),
  ];
  const planted = (await readPlantedTokens(evalCase.dir)).map((t) => t.token);
  return { cluster, objectNames, planted };
}

export interface OfflineScoreInput {
  caseDir: string;
  reportFile: string;
  /** The mandated report sections (agent.report_sections). */
  reportSections: string[];
  /** The run's kubectl calls (a kubectl-calls.jsonl), when known. */
  calls?: KubectlCallRecord[];
}

export interface OfflineScore {
  case: string;
  report: string;
  score: CaseScore;
}

/** Reads a report file within MAX_REPORT_BYTES; anything else is a usage error that says why. */
async function readReport(file: string): Promise<string> {
  const info = await lstat(file).catch(() => undefined);
  if (!info?.isFile()) throw new EvalUsageError(`${file} is missing or not a regular file: give a report`);
  if (info.size > MAX_REPORT_BYTES)
    throw new EvalUsageError(
      `${file} has ${info.size} bytes, more than the ${MAX_REPORT_BYTES} a report is scored on`,
    );
  return readFile(file, 'utf8');
}

/** A run's kubectl-calls.jsonl; a missing, oversized or malformed file is a usage error that says why. */
export async function readCallsFile(file: string): Promise<KubectlCallRecord[]> {
  const info = await lstat(file).catch(() => undefined);
  if (!info?.isFile())
    throw new EvalUsageError(`${file} is missing or not a regular file: give a run's kubectl-calls.jsonl`);
  if (info.size > CALL_LOG_MAX_BYTES)
    throw new EvalUsageError(`${file} has ${info.size} bytes, more than the ${CALL_LOG_MAX_BYTES} read`);
  const problems: string[] = [];
  const calls = parseCallLines(await readFile(file, 'utf8'), file, problems);
  if (problems.length > 0)
    throw new EvalUsageError(
      `${file} is not a kubectl call log: ${problems.slice(0, 3).join('; ')}${problems.length > 3 ? ` (and ${problems.length - 3} more)` : ''}`,
    );
  return calls;
}

/** Scores one report against one case. Usage problems (a bad case, report or call log) throw EvalUsageError. */
export async function scoreReportFile(input: OfflineScoreInput): Promise<OfflineScore> {
  const evalCase = await loadCase(input.caseDir);
  const cluster = await compileCluster(evalCase.dir, evalCase.name).catch((err: unknown) => {
    throw new EvalUsageError((err as Error).message);
  });
  const key = await caseKeyOf(evalCase, cluster);
  const report = await readReport(input.reportFile);
  const score = scoreRun({
    expected: evalCase.expected,
    report,
    calls: input.calls ?? [],
    objectNames: key.objectNames,
    reportSections: input.reportSections,
    planted: key.planted,
    ...(input.calls ? { returned: returnedText(input.calls, cluster) } : {}),
  });
  return { case: evalCase.name, report: input.reportFile, score };
}
