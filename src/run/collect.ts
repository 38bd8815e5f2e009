import { scrubFile } from '../workspace/bundle.js';
import { checkReport, type ReportCheck } from '../audit/report.js';
import { writeRunResult, type RunResult, type ValidatorRecord } from '../workspace/run-record.js';
import type { AgentOutcome, AgentRunOutput } from '../agents/types.js';
import { errorMessage } from '../util/errors.js';
import { runMeasures, type RunMeasures } from '../gateway/measures.js';
import type { ModelUsage } from '../shared/types.js';
import type { GatewaySummary } from '../gateway/run.js';
import { capMessage } from '../gateway/session.js';
import type { PipelineEnv } from './env.js';
import { bridgeImageProblem, bridgeInImage } from './bridge-image.js';
import { checkRunEvidence } from './evidence.js';
import { buildResult, killedFromOutside, recordedFiles, verdict, type Verdict } from './result.js';
import type { CollectedRun, LaunchedRun, RunStart } from './stages.js';
import type { Supervised } from './supervise.js';
import type { ReturnedSummary } from './pod-files.js';

// Collect: what a launched (or adopted) run left — exit, the adapter's reading of its output, the
// report (scrubbed, checked, validated), the kubectl calls — turned into result.json, the `finished`
// audit event and the outcome the daemon records.

/** The one-line answer the agent gave at the end (the user prompt asks for it), if any. */
export function answerOf(outcome: AgentOutcome): string | undefined {
  const text = outcome.finalMessage?.trim();
  if (!text) return undefined;
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 500 ? `${flat.slice(0, 499)}…` : flat;
}

export async function collect(
  env: PipelineEnv,
  run: LaunchedRun,
  supervised: Supervised,
): Promise<CollectedRun> {
  const started = performance.now();
  const { exit } = supervised;
  const { runOutput, outcome: read } = readOutcome(run, supervised);
  // An agent pod's last upload has landed (it makes it before its container ends): nothing more is taken.
  const returned = await run.files?.finish(exit.error);
  const report = await reportOf(env, run);
  const validator = await validateReport(env, run, report);
  const { outcome, gateway } = await withGatewayFigures(run, read);
  const judged = judgeRun(env, run, { supervised, outcome, report, gateway });
  const v = await withBridgeProblem(env, run, exit, withLostReport(judged, report, returned));
  if (returned?.reason)
    run.log.warn(
      { lost: returned.lost, reason: returned.reason },
      "the agent's pod did not return everything",
    );
  // The broker stops with the agent; the CLI's own refusals join the guard's in the call log.
  const kubectl = await run.guard?.finish(run.adapter.deniedCalls?.(runOutput) ?? []);
  const evidence = await checkRunEvidence(env, run, report.exists, kubectl?.guard);
  const cluster = clusterRecord(run);
  const measures = gateway ? runMeasures(gateway, run.startedAt) : undefined;
  if (measures) env.metrics?.modelUsage?.(modelUsageOf(measures));
  const extra = {
    ...(validator ? { validator } : {}),
    ...(returned ? { returned } : {}),
    ...(kubectl ? { kubectl } : {}),
    ...(evidence ? { evidence } : {}),
    ...(cluster?.name ? { cluster: { ...cluster, name: cluster.name } } : {}),
    ...(gateway ? { gateway: { ...gateway, source: gateway.calls > 0 ? 'gateway' : 'agent' } } : {}),
    // The seed's measures, from the gateway's record of the run's model calls.
    ...(measures?.firstModelCallMs !== undefined ? { firstModelCallMs: measures.firstModelCallMs } : {}),
    ...(measures ? { measures } : {}),
  };
  const result = resultOf(env, run, { supervised, outcome, report, verdict: v, extra });
  await writeRunResult(run.bundle, result);
  env.metrics?.stage('collect', (performance.now() - started) / 1000);
  await recordFinished(run, { exit, outcome, report, verdict: v, result });
  return {
    status: v.status,
    exitCode: exit.exitCode,
    ...(v.reason ? { reason: v.reason } : {}),
    result,
    ...(report.text !== undefined ? { report: report.text } : {}),
  };
}

/** A run's measures as /metrics counts them. */
function modelUsageOf(m: RunMeasures): ModelUsage {
  return {
    model: m.model ?? 'unknown',
    calls: m.modelCalls,
    input: m.inputTokens,
    output: m.outputTokens,
    cacheRead: m.cacheReadTokens,
    cacheWrite: m.cacheWriteTokens,
    ...(m.firstCallInputTokens !== undefined ? { firstCallInputTokens: m.firstCallInputTokens } : {}),
    ...(m.firstModelCallMs !== undefined ? { firstModelCallMs: m.firstModelCallMs } : {}),
    ...(m.firstTokenMs !== undefined ? { firstTokenMs: m.firstTokenMs } : {}),
  };
}

/** What the CLI left on exit, as the adapter reads it, with an auth failure seen in its progress. */
function readOutcome(
  run: LaunchedRun,
  supervised: Supervised,
): { runOutput: AgentRunOutput; outcome: AgentOutcome } {
  const { exit } = supervised;
  const runOutput: AgentRunOutput = {
    exitCode: exit.exitCode,
    signal: exit.signal,
    timedOut: supervised.timedOut,
    stdout: run.output.stdout.text(),
    stderr: run.output.stderr.text(),
  };
  // The exit code is never masked, whatever the adapter read.
  let outcome: AgentOutcome = { ...run.adapter.parseOutput(runOutput), exitCode: exit.exitCode };
  const authFailure = run.progress.authFailure;
  if (authFailure) outcome = { ...outcome, status: 'auth_failed', error: authFailure };
  return { runOutput, outcome };
}

/** Stops the run's gateway; its token and cost figures replace the CLI's when it saw model calls. */
async function withGatewayFigures(
  run: LaunchedRun,
  read: AgentOutcome,
): Promise<{ outcome: AgentOutcome; gateway: GatewaySummary | undefined }> {
  // The gateway saw every model call: its figures are the run's, the same for every CLI. The token
  // dies with the agent, and the call log is complete before it is digested.
  await run.gateway?.stop();
  const gateway = run.gateway?.summary();
  if (!gateway || gateway.calls === 0) return { outcome: read, gateway };
  const outcome = {
    ...read,
    tokens: { input: gateway.tokens.input, output: gateway.tokens.output },
    costUsd: gateway.costUsd,
  };
  return { outcome, gateway };
}

/** How the agent's run ended: what supervision saw, what the adapter read, the report's check. */
interface AgentEnd {
  supervised: Supervised;
  outcome: AgentOutcome;
  report: ReportCheck;
}

/** The run's verdict: the engine's own failure, the report and the outcome, then a spend cap reached. */
function judgeRun(
  env: PipelineEnv,
  run: LaunchedRun,
  r: AgentEnd & { gateway: GatewaySummary | undefined },
): Verdict {
  const { config } = env;
  const { supervised, gateway } = r;
  const { exit } = supervised;
  const engineError = exit.oomKilled
    ? `killed for memory (docker.memory ${config.docker.memory} bytes): raise docker.memory or lower what the agent loads`
    : (exit.error ?? killedFromOutside(supervised, run.engine));
  const v = verdict({
    timedOut: supervised.timedOut,
    interrupted: supervised.interrupted,
    outcome: r.outcome,
    report: r.report,
    minBytes: config.agent.min_report_bytes,
    ...(engineError ? { engineError } : {}),
  });
  // A run stopped at a spend cap failed for that reason, whatever its CLI made of the refusal.
  if (gateway?.capReached && v.status !== 'interrupted')
    return { status: 'failed', reason: capMessage(gateway.capReached) };
  return v;
}

/** A run failed for want of a report its pod never returned: the reason says so. */
function withLostReport(v: Verdict, report: ReportCheck, returned: ReturnedSummary | undefined): Verdict {
  if (v.status !== 'failed' || report.present || !returned?.lost.includes('report') || !returned.reason)
    return v;
  return { ...v, reason: `${v.reason ?? 'no report'}; ${returned.reason}` };
}

/**
 * A failed run whose container ran the gateway's bridge in an image that cannot run it (no `node`: the
 * engine's init only says "failed to exec pid1"): the reason says so and what to do. The engine is asked
 * once per image; a probe that cannot be made leaves the reason as it was.
 */
async function withBridgeProblem(
  env: PipelineEnv,
  run: LaunchedRun,
  exit: Supervised['exit'],
  v: Verdict,
): Promise<Verdict> {
  if (v.status !== 'failed' || exit.exitCode === 0 || !run.gateway || !bridgeInImage(run.engine)) return v;
  const problem = await bridgeImageProblem(run.engine, env.config.agent.image).catch((err: unknown) => {
    run.log.debug({ err: errorMessage(err) }, 'could not probe the agent image for node');
    return undefined;
  });
  return problem ? { ...v, reason: problem } : v;
}

/** The cluster result.json records: the routed registry entry and what its access check found. */
function clusterRecord(run: LaunchedRun) {
  const routed = clusterOf(run);
  if (!routed && !run.access) return undefined;
  return {
    ...(run.access ? { name: run.access.cluster.name } : {}),
    ...routed,
    ...(run.access
      ? {
          reachable: run.access.cluster.reachable,
          ...(run.access.cluster.detail ? { detail: run.access.cluster.detail } : {}),
        }
      : {}),
  };
}

/** The `finished` audit event and the log line that close the run. */
async function recordFinished(
  run: LaunchedRun,
  r: {
    exit: Supervised['exit'];
    outcome: AgentOutcome;
    report: ReportCheck;
    verdict: Verdict;
    result: { durationMs: number };
  },
): Promise<void> {
  const { exit, outcome, report, verdict: v, result } = r;
  await run.audit('finished', {
    status: v.status,
    exitCode: exit.exitCode,
    agentStatus: outcome.status,
    durationMs: result.durationMs,
    ...(v.reason ? { reason: v.reason } : {}),
    ...(await recordedFiles(run.bundle.dir, report.exists ? run.report.hostPath : undefined)),
  });
  run.log.info(
    { status: v.status, exitCode: exit.exitCode, durationMs: result.durationMs, reportBytes: report.bytes },
    'agent run finished',
  );
}

/**
 * The report, scrubbed of known secret values and token shapes (it is the artifact people share), then
 * checked. Only through real folders of the workspace: the agent may have swapped output/ for a link.
 */
async function reportOf(env: PipelineEnv, run: LaunchedRun): Promise<ReportCheck> {
  const workspaceDir = run.request.workspace.dir;
  const { hostPath, agentPath } = run.report;
  await scrubFile(hostPath, env.redactor, undefined, workspaceDir).catch((err: unknown) =>
    run.log.warn({ err: errorMessage(err), report: hostPath }, 'could not scrub secrets from the report'),
  );
  const { report_sections, min_report_bytes } = env.config.agent;
  return checkReport(hostPath, report_sections, min_report_bytes, agentPath, workspaceDir);
}

/** result.json: the fixed fields, then what this run adds (signal, output sizes, validator, kubectl). */
function resultOf(
  env: PipelineEnv,
  run: LaunchedRun,
  r: AgentEnd & { verdict: Verdict; extra: Record<string, unknown> },
) {
  const { exit } = r.supervised;
  const { output, origin } = run;
  const answer = answerOf(r.outcome);
  return buildResult({
    verdict: r.verdict,
    outcome: r.outcome,
    report: r.report,
    agent: run.agent,
    engine: run.engine.name,
    startedAt: run.startedAt,
    finishedAt: env.now(),
    runId: run.request.runId,
    incidentId: run.request.workspace.incident.incidentId,
    ...(run.model ? { model: run.model } : {}),
    ...(origin.promptSha256 ? { promptSha256: origin.promptSha256 } : {}),
    ...(origin.triageStatus ? { triageStatus: origin.triageStatus } : {}),
    ...(answer ? { answer } : {}),
    extra: {
      signal: exit.signal,
      oomKilled: exit.oomKilled,
      ...(r.supervised.stoppedWith ? { stoppedWith: r.supervised.stoppedWith } : {}),
      ...(exit.error ? { engineError: exit.error } : {}),
      output: { stdoutBytes: output.stdout.total, stderrBytes: output.stderr.total },
      // Time to the agent's first byte (compare shows it); not meaningful for an adopted run's replayed logs.
      ...(output.firstOutputAt && origin.kind === 'launched'
        ? {
            firstOutputAt: output.firstOutputAt.toISOString(),
            firstOutputMs: output.firstOutputAt.getTime() - run.startedAt.getTime(),
          }
        : {}),
      ...(origin.kind === 'adopted' ? { adopted: true } : {}),
      ...r.extra,
    },
  });
}

/**
 * Runs the triage skill's report validator on the report (looked up while preparing) and records it in
 * the audit trail. A non-compliant report does not fail the run: the report is still the investigation
 * the on-call engineer needs, and re-running the agent for a formatting problem would cost a whole
 * investigation; result.json's `validator.verdict` says it, next to `report.missingSections`.
 */
async function validateReport(
  env: PipelineEnv,
  run: LaunchedRun,
  report: ReportCheck,
): Promise<ValidatorRecord | undefined> {
  const lookup = run.reportValidator;
  if (lookup.kind === 'none') return undefined;
  let record: ValidatorRecord;
  if (lookup.kind === 'unusable') record = { verdict: 'skipped', reason: lookup.reason };
  else if (!report.exists)
    record = {
      skill: lookup.validator.skill,
      command: lookup.validator.command,
      verdict: 'skipped',
      reason: report.refused ?? 'there is no report to validate',
    };
  else
    record = await (
      await import('../context/report-validator.js')
    ).runReportValidator(lookup.validator, {
      workspaceDir: run.request.workspace.dir,
      reportHostPath: run.report.hostPath,
      env: env.env,
      redact: (text) => env.redactor.redact(text),
      signal: run.request.signal,
      killGraceMs: env.config.skills.triage.kill_grace,
      marker: `validate-${run.request.runId}`,
    });
  await run.audit('report_validated', { ...record });
  run.log.info(
    { verdict: record.verdict, exitCode: record.exitCode },
    'report validated by the triage skill',
  );
  return record;
}

/** The registry entry result.json records (none without `clusters:`, as before the registry). */
export function clusterOf(run: Pick<RunStart, 'cluster'>): RunResult['cluster'] {
  const c = run.cluster;
  return c && 'entry' in c && c.configured ? c.record : undefined;
}
