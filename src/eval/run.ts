import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { AgentName, EngineName } from '../config/schema.js';
import type { Variant } from '../replay/compare.js';
import { replay, type ReplayDeps } from '../replay/index.js';
import { writeFileAtomic } from '../util/fs.js';
import { kubectlRecordOf, readRunArtifacts, type RunMeasuresRecord } from './artifacts.js';
import { compileCluster, compileOtherClusters } from './cases/compile.js';
import { discoverCases, EvalUsageError, loadCase, type EvalCase } from './cases/load.js';
import { returnedText } from './cases/tokens.js';
import { installShim } from './install-shim.js';
import { compileFrozenPrometheus } from './prometheus/recordings.js';
import { startFrozenPrometheus } from './prometheus/server.js';
import { caseKeyOf, type CaseKey } from './score/offline.js';
import { scoreRun } from './score/score.js';
import { buildScorecard, renderScorecardMarkdown } from './scorecard.js';
import type { CellModelCalls, EvalCell, JudgeVerdict, Scorecard } from './types.js';
import { compactStamp } from '../util/time.js';

// `eval`: every case × agent × model × variant × repeat runs as a replay of the case into its own
// workspace (the case folder is only read), with the case's frozen-cluster kubectl first on PATH,
// and, when the case recorded its Prometheus, that Prometheus's stand-in answering its promql; then is
// scored from its report, result.json and kubectl call log. Cells run one after another.

export interface EvalOptions {
  input: string;
  cwd: string;
  agents: AgentName[];
  /** Models passed to the CLI; `undefined` = the configured or CLI default. */
  models: (string | undefined)[];
  variants: Variant[];
  repeat: number;
  /** Default: `<cwd>/evals/<suite>-<UTC timestamp>`. */
  out?: string;
  engine?: EngineName;
  /** agent.model from the configuration, to label cells that pass no model. */
  defaultModel?: string;
  reportSections: string[];
  maxIncidentBytes: number;
  forbiddenRoots?: string[];
  minScore?: number;
  /** Why an agent cannot run here at all (its CLI is not installed); its cells are errors, not runs. */
  cannotRun?: (agent: AgentName) => Promise<string | undefined>;
}

/** Grades a report against a case with a model; eval calls it only with --judge. */
export type Judge = (input: { evalCase: EvalCase; report: string }) => Promise<JudgeVerdict>;

export interface EvalDeps extends ReplayDeps {
  judge?: Judge;
}

const safe = (text: string) => text.replace(/[^A-Za-z0-9._-]+/g, '_');

/** What every cell of a case runs against: its frozen cluster's shim and, when recorded, its Prometheus. */
interface CaseStandIns {
  shimDir: string;
  /** The case's answer key: its objects' names, planted tokens and frozen cluster. */
  key: CaseKey;
  prometheus?: { url: string; now: string };
}

async function runCell(
  evalCase: EvalCase,
  standIns: CaseStandIns,
  cell: Pick<EvalCell, 'agent' | 'model' | 'variant' | 'repeat'> & { modelArg?: string },
  cellDir: string,
  options: EvalOptions,
  deps: EvalDeps,
): Promise<EvalCell> {
  const workspace = path.join(cellDir, 'workspace');
  const base: EvalCell = {
    case: evalCase.name,
    agent: cell.agent,
    model: cell.model,
    variant: cell.variant,
    repeat: cell.repeat,
    workspace,
    status: 'error',
    metrics: { kubectlCalls: 0, triageKubectlCalls: 0, unanswered: 0 },
  };
  const cannot = await options.cannotRun?.(cell.agent);
  if (cannot) return { ...base, error: cannot };
  let runDir: string;
  try {
    const result = await replay(
      {
        input: evalCase.dir,
        cwd: options.cwd,
        out: workspace,
        agent: cell.agent,
        ...(options.engine ? { engine: options.engine } : {}),
        ...(cell.modelArg ? { model: cell.modelArg } : {}),
        triage: cell.variant === 'no-preload' ? 'auto' : 'rerun',
        skipTriage: cell.variant === 'no-preload',
        maxIncidentBytes: options.maxIncidentBytes,
        ...(options.forbiddenRoots ? { forbiddenRoots: options.forbiddenRoots } : {}),
        pathPrepend: [standIns.shimDir],
        ...(standIns.prometheus ? { prometheus: standIns.prometheus } : {}),
      },
      deps,
    );
    runDir = result.runDir;
    base.runDir = runDir;
  } catch (err) {
    return { ...base, error: (err as Error).message };
  }
  const artifacts = await readRunArtifacts(workspace, runDir);
  const agentCalls = artifacts.calls.filter((c) => c.stage === 'agent');
  const facts = artifacts.result;
  const kubectlRecord = kubectlRecordOf(artifacts);
  // The judge grades first: its `incorrect` makes the answer wrong in the score.
  let judged: Pick<EvalCell, 'judge' | 'judgeError'> = {};
  if (deps.judge && artifacts.report !== undefined) {
    try {
      judged = { judge: await deps.judge({ evalCase, report: artifacts.report }) };
    } catch (err) {
      judged = { judgeError: (err as Error).message };
    }
  }
  const cellOut: EvalCell = {
    ...base,
    status: facts?.status ?? 'error',
    ...(facts?.evidence ? { evidence: facts.evidence } : {}),
    ...(kubectlRecord ? { kubectlRecord } : {}),
    metrics: {
      ...(facts?.durationMs !== undefined ? { durationMs: facts.durationMs } : {}),
      ...(facts?.tokens ? { tokens: facts.tokens } : {}),
      ...(facts?.costUsd !== undefined ? { costUsd: facts.costUsd } : {}),
      ...(facts?.turns !== undefined ? { turns: facts.turns } : {}),
      kubectlCalls: agentCalls.length,
      triageKubectlCalls: artifacts.calls.length - agentCalls.length,
      unanswered:
        agentCalls.filter((c) => c.answeredFrom === 'not-recorded' || c.answeredFrom === 'unsupported')
          .length + artifacts.promql.notRecorded,
      ...(artifacts.promql.calls > 0 ? { promqlCalls: artifacts.promql.calls } : {}),
      ...(facts?.measures ? { modelCalls: modelCallsOf(facts.measures) } : {}),
    },
    score: scoreRun({
      expected: evalCase.expected,
      report: artifacts.report,
      calls: artifacts.calls,
      objectNames: standIns.key.objectNames,
      planted: standIns.key.planted,
      returned: returnedText(artifacts.calls, standIns.key.cluster),
      reportSections: options.reportSections,
      ...(facts?.status ? { runStatus: facts.status } : {}),
      ...(judged.judge ? { judge: judged.judge.verdict } : {}),
    }),
    ...judged,
  };
  if (!facts) cellOut.error = artifacts.problems.join('; ');
  else if (facts.status !== 'succeeded' && facts.error) cellOut.error = facts.error;
  await writeFileAtomic(path.join(cellDir, 'score.json'), `${JSON.stringify(cellOut, null, 2)}\n`);
  return cellOut;
}

/**
 * A case's frozen cluster: its kubectl shim installed under the output folder and, when the case holds
 * recorded Prometheus answers, their stand-in server (closed after the case's cells).
 */
async function caseStandIns(
  evalCase: EvalCase,
  outDir: string,
): Promise<{ standIns: CaseStandIns; close: () => Promise<void> }> {
  const usage = (err: unknown): never => {
    throw new EvalUsageError((err as Error).message);
  };
  const cluster = await compileCluster(evalCase.dir, evalCase.name).catch(usage);
  const others = await compileOtherClusters(evalCase.dir, evalCase.name).catch(usage);
  const frozen = await compileFrozenPrometheus(evalCase.dir, evalCase.name, cluster.now).catch(usage);
  const shimDir = path.join(outDir, 'shims', evalCase.name);
  await installShim(shimDir, cluster, undefined, others);
  const key = await caseKeyOf(evalCase, cluster);
  const server = frozen ? await startFrozenPrometheus(frozen) : undefined;
  return {
    standIns: {
      shimDir,
      key,
      ...(server ? { prometheus: { url: server.url, now: cluster.now } } : {}),
    },
    close: async () => server?.close(),
  };
}

/** Every cell of one case: repeat × agent × model × variant, one after another. */
async function runCase(
  evalCase: EvalCase,
  standIns: CaseStandIns,
  outDir: string,
  options: EvalOptions,
  deps: EvalDeps,
): Promise<EvalCell[]> {
  const cells: EvalCell[] = [];
  for (let repeat = 1; repeat <= options.repeat; repeat++)
    for (const agent of options.agents)
      for (const modelArg of options.models)
        for (const variant of options.variants) {
          if (deps.signal?.aborted) return cells;
          const model = modelArg ?? options.defaultModel ?? 'default';
          const cellDir = path.join(
            outDir,
            'runs',
            evalCase.name,
            `${agent}--${safe(model)}--${variant}--r${repeat}`,
          );
          deps.log.info({ case: evalCase.name, agent, model, variant, repeat }, 'eval cell starting');
          const cell = { agent, model, variant, repeat, ...(modelArg ? { modelArg } : {}) };
          cells.push(await runCell(evalCase, standIns, cell, cellDir, options, deps));
        }
  return cells;
}

/** A cell's model calls from its result.json measures (fields an older result lacks are left out). */
function modelCallsOf(m: RunMeasuresRecord): CellModelCalls {
  return {
    calls: m.modelCalls,
    ...(m.model !== undefined ? { model: m.model } : {}),
    ...(m.firstCallInputTokens !== undefined ? { firstCallInputTokens: m.firstCallInputTokens } : {}),
    ...(m.firstModelCallMs !== undefined ? { firstModelCallMs: m.firstModelCallMs } : {}),
    ...(m.firstTokenMs !== undefined ? { firstTokenMs: m.firstTokenMs } : {}),
    input: m.inputTokens,
    ...(m.outputTokens !== undefined ? { output: m.outputTokens } : {}),
    ...(m.cacheReadTokens !== undefined ? { cacheRead: m.cacheReadTokens } : {}),
    ...(m.cacheWriteTokens !== undefined ? { cacheWrite: m.cacheWriteTokens } : {}),
    ...(m.cacheReadShare !== undefined ? { cacheReadShare: m.cacheReadShare } : {}),
  };
}

/** Runs the whole matrix and writes scorecard.md and scorecard.json into the output folder. */
export async function runEval(options: EvalOptions, deps: EvalDeps): Promise<Scorecard> {
  if (!Number.isInteger(options.repeat) || options.repeat < 1) {
    throw new EvalUsageError(`--repeat ${options.repeat}: expected a whole number of at least 1`);
  }
  const now = deps.now ?? Date.now;
  const caseDirs = await discoverCases(path.resolve(options.cwd, options.input));
  // Every answer key is checked before anything runs: a broken case fails fast, not after an hour.
  const cases = await Promise.all(caseDirs.map((d) => loadCase(d)));
  const suiteName = path.basename(path.resolve(options.cwd, options.input));
  const outDir = path.resolve(
    options.cwd,
    options.out ?? path.join('evals', `${safe(suiteName)}-${compactStamp(now())}`),
  );
  for (const c of cases) {
    const rel = path.relative(c.dir, outDir);
    if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))) {
      throw new EvalUsageError(
        `--out ${outDir} is inside the case ${c.dir}; an eval never writes into a case: choose another folder`,
      );
    }
  }
  await mkdir(outDir, { recursive: true });

  const cells: EvalCell[] = [];
  for (const evalCase of cases) {
    const { standIns, close } = await caseStandIns(evalCase, outDir);
    try {
      cells.push(...(await runCase(evalCase, standIns, outDir, options, deps)));
    } finally {
      await close();
    }
  }
  const scorecard = buildScorecard({
    suite: path.resolve(options.cwd, options.input),
    outDir,
    createdAt: new Date(now()).toISOString(),
    ...(options.engine ? { engine: options.engine } : {}),
    cases: cases.map((c) => c.name),
    repeat: options.repeat,
    judge: deps.judge !== undefined,
    cells,
    ...(options.minScore !== undefined ? { minScore: options.minScore } : {}),
  });
  await writeFileAtomic(path.join(outDir, 'scorecard.json'), `${JSON.stringify(scorecard, null, 2)}\n`);
  await writeFileAtomic(path.join(outDir, 'scorecard.md'), renderScorecardMarkdown(scorecard));
  return scorecard;
}
