import path from 'node:path';
import { scrubFile } from '../../audit/bundle.js';
import { fileDigest, folderDigests } from '../../audit/digest.js';
import { checkReport, type ReportCheck } from '../../audit/report.js';
import { earlyResult, writeRunResult, type RunResult, type ValidatorRecord } from '../../audit/run-record.js';
import type { AgentOutcome } from '../../agents/types.js';
import { errorMessage, isTransient } from '../../util/errors.js';
import type { RunOutcome } from '../types.js';
import { capMessage } from '../../gateway/session.js';
import { buildResult, killedFromOutside, verdict, type Verdict } from './collect.js';
import type { PipelineEnv, RunContext } from './context.js';
import type { RunOutput } from './output.js';
import type { Supervised } from './supervise.js';

// The end of a run: what it left turned into result.json, the `finished` audit event and the outcome
// the daemon records — for a run that went all the way, and for one that failed before or at launch.

export interface CollectInput {
  supervised: Supervised;
  output: RunOutput;
  report: { hostPath: string; agentPath: string };
  promptSha256?: string;
  triageStatus?: string;
  /** Collected by a daemon other than the one that launched it. */
  adopted?: boolean;
  /** The agent's events showed the model API refusing the credentials (it was stopped for it). */
  authFailure?: string;
}

/** The one-line answer the agent gave at the end (the user prompt asks for it), if any. */
export function answerOf(outcome: AgentOutcome): string | undefined {
  const text = outcome.finalMessage?.trim();
  if (!text) return undefined;
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 500 ? `${flat.slice(0, 499)}…` : flat;
}

export async function collectRun(
  env: PipelineEnv,
  ctx: RunContext,
  input: CollectInput,
): Promise<RunOutcome> {
  const { config } = env;
  const { bundle, adapter, engine } = ctx;
  if (!bundle || !adapter || !engine) throw new Error('collect before launch');
  const started = performance.now();
  const { supervised, output } = input;
  const { exit } = supervised;
  const runOutput = {
    exitCode: exit.exitCode,
    signal: exit.signal,
    timedOut: supervised.timedOut,
    stdout: output.stdout.text(),
    stderr: output.stderr.text(),
  };
  let outcome: AgentOutcome = adapter.parseOutput(runOutput);
  // The exit code is never masked, whatever the adapter read.
  outcome = { ...outcome, exitCode: exit.exitCode };
  if (input.authFailure) outcome = { ...outcome, status: 'auth_failed', error: input.authFailure };
  // The report is the artifact people share: known secret values and token shapes are scrubbed from it.
  // Only through real folders of the workspace: the agent may have swapped output/ for a link.
  const workspaceDir = ctx.request.workspace.dir;
  await scrubFile(input.report.hostPath, env.redactor, undefined, workspaceDir).catch((err: unknown) =>
    ctx.log.warn(
      { err: errorMessage(err), report: input.report.hostPath },
      'could not scrub secrets from the report',
    ),
  );
  const report = await checkReport(
    input.report.hostPath,
    config.agent.report_sections,
    config.agent.min_report_bytes,
    input.report.agentPath,
    workspaceDir,
  );
  const validator = await validateReport(env, ctx, input.report.hostPath, report);
  const engineError = exit.oomKilled
    ? `killed for memory (docker.memory ${config.docker.memory} bytes): raise docker.memory or lower what the agent loads`
    : (exit.error ?? killedFromOutside(supervised, engine));
  // The gateway saw every model call: its figures are the run's, the same for every CLI.
  // The token dies with the agent; the call log is complete before it is digested.
  await ctx.gateway?.stop();
  const gateway = ctx.gateway?.summary();
  if (gateway && gateway.calls > 0) {
    outcome = {
      ...outcome,
      tokens: { input: gateway.tokens.input, output: gateway.tokens.output },
      costUsd: gateway.costUsd,
    };
  }
  let v: Verdict = verdict({
    timedOut: supervised.timedOut,
    interrupted: supervised.interrupted,
    outcome,
    report,
    minBytes: config.agent.min_report_bytes,
    ...(engineError ? { engineError } : {}),
  });
  // A run stopped at a spend cap failed for that reason, whatever its CLI made of the refusal.
  if (gateway?.capReached && v.status !== 'interrupted')
    v = { status: 'failed', reason: capMessage(gateway.capReached) };
  const answer = answerOf(outcome);
  // The broker stops with the agent; the CLI's own refusals join the guard's in the call log.
  const kubectl = await ctx.guard?.finish(adapter.deniedCalls?.(runOutput) ?? []);
  const result = buildResult({
    verdict: v,
    outcome,
    report,
    agent: ctx.agent,
    engine: engine.name,
    startedAt: ctx.startedAt,
    finishedAt: env.now(),
    runId: ctx.request.runId,
    incidentId: ctx.request.workspace.incident.incidentId,
    ...(ctx.model ? { model: ctx.model } : {}),
    ...(input.promptSha256 ? { promptSha256: input.promptSha256 } : {}),
    ...(input.triageStatus ? { triageStatus: input.triageStatus } : {}),
    ...(answer ? { answer } : {}),
    extra: {
      signal: exit.signal,
      oomKilled: exit.oomKilled,
      ...(supervised.stoppedWith ? { stoppedWith: supervised.stoppedWith } : {}),
      ...(exit.error ? { engineError: exit.error } : {}),
      output: { stdoutBytes: output.stdout.total, stderrBytes: output.stderr.total },
      // Time to the agent's first byte (compare shows it); not meaningful for an adopted run's replayed logs.
      ...(output.firstOutputAt && !input.adopted
        ? {
            firstOutputAt: output.firstOutputAt.toISOString(),
            firstOutputMs: output.firstOutputAt.getTime() - ctx.startedAt.getTime(),
          }
        : {}),
      ...(input.adopted ? { adopted: true } : {}),
      ...(validator ? { validator } : {}),
      ...(kubectl ? { kubectl } : {}),
      ...(gateway ? { gateway: { ...gateway, source: gateway.calls > 0 ? 'gateway' : 'agent' } } : {}),
      // The seed's first measure: how long from the run's start to its first model call.
      ...(gateway?.firstCallAt
        ? { firstModelCallMs: Date.parse(gateway.firstCallAt) - ctx.startedAt.getTime() }
        : {}),
    },
  });
  await writeRunResult(bundle, result);
  env.metrics?.stage('collect', (performance.now() - started) / 1000);
  await ctx.audit('finished', {
    status: v.status,
    exitCode: exit.exitCode,
    agentStatus: outcome.status,
    durationMs: result.durationMs,
    ...(v.reason ? { reason: v.reason } : {}),
    ...(await recordedFiles(bundle.dir, report.exists ? input.report.hostPath : undefined)),
  });
  ctx.log.info(
    { status: v.status, exitCode: exit.exitCode, durationMs: result.durationMs, reportBytes: report.bytes },
    'agent run finished',
  );
  return { status: v.status, exitCode: exit.exitCode, ...(v.reason ? { reason: v.reason } : {}), result };
}

/**
 * Runs the triage skill's report validator on the report (looked up while preparing) and records it in
 * the audit trail. A non-compliant report does not fail the run: the report is still the investigation
 * the on-call engineer needs, and re-running the agent for a formatting problem would cost a whole
 * investigation; result.json's `validator.verdict` says it, next to `report.missingSections`.
 */
async function validateReport(
  env: PipelineEnv,
  ctx: RunContext,
  reportHostPath: string,
  report: ReportCheck,
): Promise<ValidatorRecord | undefined> {
  const lookup = ctx.reportValidator;
  if (!lookup || lookup.kind === 'none') return undefined;
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
      await import('../../context/report-validator.js')
    ).runReportValidator(lookup.validator, {
      workspaceDir: ctx.request.workspace.dir,
      reportHostPath,
      env: env.env,
      redact: (text) => env.redactor.redact(text),
      signal: ctx.request.signal,
      killGraceMs: env.config.skills.triage.kill_grace,
      marker: `validate-${ctx.request.runId}`,
    });
  await ctx.audit('report_validated', { ...record });
  ctx.log.info(
    { verdict: record.verdict, exitCode: record.exitCode },
    'report validated by the triage skill',
  );
  return record;
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

/** Where a failure came from, when the run should wait for it instead of burning an attempt. */
export type FailureSource = 'engine' | undefined;

/** A run that failed before or while launching: result.json says why, the outcome whether to retry. */
export async function failEarly(
  env: PipelineEnv,
  ctx: RunContext,
  err: unknown,
  source?: FailureSource,
): Promise<RunOutcome> {
  const transient = isTransient(err);
  const reason = errorMessage(err);
  const waitFor = transient && source === 'engine' ? 'the container engine' : undefined;
  ctx.log.error(
    { err: reason, transient, ...(waitFor ? { waitFor } : {}) },
    'agent run failed before it could finish',
  );
  let result: RunResult | undefined;
  if (ctx.bundle) {
    result = earlyResult({
      status: 'failed',
      agent: ctx.agent,
      engine: ctx.engineName,
      startedAt: ctx.startedAt,
      finishedAt: env.now(),
      runId: ctx.request.runId,
      incidentId: ctx.request.workspace.incident.incidentId,
      error: reason,
      transient,
      ...(waitFor ? { waitFor } : {}),
    });
    await writeRunResult(ctx.bundle, result).catch(() => undefined);
  }
  await ctx.audit('finished', {
    status: 'failed',
    reason,
    transient,
    ...(waitFor ? { waitFor } : {}),
    ...(ctx.bundle ? await recordedFiles(ctx.bundle.dir) : {}),
  });
  return {
    status: 'failed',
    reason,
    exitCode: null,
    ...(transient ? { transient: true } : {}),
    ...(waitFor ? { waitFor } : {}),
    ...(result ? { result } : {}),
  };
}
