import { rm } from 'node:fs/promises';
import { RUN_FILES, RunBundle, runDirOf } from '../../audit/bundle.js';
import { readRunManifest } from '../../audit/run-record.js';
import { AGENT_NAMES, ENGINE_NAMES, keepRuns, type AgentName, type EngineName } from '../../config/schema.js';
import { RUN_LABELS } from '../../engines/labels.js';
import type { RunInfo } from '../../engines/types.js';
import { errorMessage } from '../../util/errors.js';
import type { RunOutcome, RunRequest } from '../types.js';
import type { AuditFn, PipelineEnv, RunContext } from './context.js';
import { collectRun, failEarly } from './finish.js';
import { resumeGuard } from './kubectl-guard.js';
import { CONTAINER_WORKSPACE, OUTPUT_DIR, REPORT_FILE } from './layout.js';
import { openOutput } from './output.js';
import { supervise, type Supervised } from './supervise.js';
import path from 'node:path';

// Adoption: a run that a daemon which died had launched. Found through the engine (by its run id and
// state folder), its whole output re-read, supervised for the time it has left and collected like any
// run. A run the engine no longer has, or that was created but never started, is `gone`: re-queued.

/** Waiting on a run found exited at adoption: its end is already known to the engine. */
const EXITED_WAIT_MS = 30_000;

const asAgent = (v: string | undefined): AgentName | undefined =>
  (AGENT_NAMES as readonly string[]).includes(v ?? '') ? (v as AgentName) : undefined;
const asEngine = (v: string | undefined): EngineName | undefined =>
  (ENGINE_NAMES as readonly string[]).includes(v ?? '') ? (v as EngineName) : undefined;

export async function adoptRun(
  env: PipelineEnv,
  request: Omit<RunRequest, 'attempt'>,
  auditFor: (log: RunRequest['log']) => AuditFn,
): Promise<RunOutcome | 'gone'> {
  const { config } = env;
  const startedAt = env.now();
  const bundleDir = runDirOf(request.workspace.dir, request.runId);
  const manifestRead = await readRunManifest(bundleDir);
  const manifest = manifestRead.ok ? manifestRead.value : undefined;
  const engineName = asEngine(manifest?.engine) ?? request.overrides?.engine ?? config.engine;
  const log = request.log.child({ engine: engineName, adopted: true });
  const engine = await env.engineFor(engineName);
  const info: RunInfo | undefined = await engine.find(request.runId, bundleDir);
  if (!info) {
    log.info('run to adopt not found on the engine');
    return 'gone';
  }
  if (!info.started) {
    // Created, never started: the daemon died between the two. No agent ever ran; run it again.
    log.info({ id: info.handle.id }, 'run to adopt was created but never started; removing it');
    await engine
      .remove(info.handle)
      .catch((err: unknown) => log.warn({ err: errorMessage(err) }, 'could not remove it'));
    return 'gone';
  }
  const agent = asAgent(info.labels[RUN_LABELS.agent]) ?? asAgent(manifest?.agent) ?? config.agent.name;
  const audit = auditFor(log);
  const ctx: RunContext = {
    request,
    log,
    startedAt: manifest ? new Date(manifest.launchedAt) : startedAt,
    agent,
    engineName,
    ...(manifest?.model ? { model: manifest.model } : {}),
    audit,
    bundle: await RunBundle.create(request.workspace.dir, request.runId, env.redactor),
    engine,
  };
  await audit('reattached', { engine: engineName, id: info.handle.id, running: info.running });
  try {
    ctx.adapter = await env.agents(agent);
    // A running agent gets its kubectl broker back before anything else.
    if (info.running) ctx.guard = await resumeGuard(env, ctx);
    // The report validator as the skills cache has it now (the launching daemon's lookup died with it).
    ctx.snapshot = await env.skills.acquire();
    const { findReportValidator } = await import('../../context/report-validator.js');
    ctx.reportValidator = await findReportValidator(config, ctx.snapshot);
    const supervised = await reattach(env, ctx, info);
    const hostPath = manifest?.report.hostPath ?? path.join(request.workspace.dir, OUTPUT_DIR, REPORT_FILE);
    const agentPath =
      manifest?.report.agentPath ??
      (engine.placement === 'host'
        ? hostPath
        : path.posix.join(CONTAINER_WORKSPACE, OUTPUT_DIR, REPORT_FILE));
    return await collectRun(env, ctx, { ...supervised, report: { hostPath, agentPath }, adopted: true });
  } catch (err) {
    return failEarly(env, ctx, err);
  } finally {
    await ctx.guard?.stop();
    ctx.snapshot?.release();
    if (!keepRuns(config)) {
      await engine
        .remove(info.handle)
        .catch((err: unknown) => log.error({ err: errorMessage(err) }, 'could not remove the adopted run'));
    }
    if (manifest?.hostHome)
      await rm(manifest.hostHome, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** Re-reads the run's whole output into fresh logs and supervises it for the time it has left. */
async function reattach(
  env: PipelineEnv,
  ctx: RunContext,
  info: RunInfo,
): Promise<{ supervised: Supervised; output: ReturnType<typeof openOutput> }> {
  const { config } = env;
  const bundle = ctx.bundle as RunBundle;
  const engine = ctx.engine;
  if (!engine) throw new Error('reattach without an engine');
  if (engine.capabilities.reattachOutput) {
    await Promise.all(
      [RUN_FILES.agentStdout, RUN_FILES.agentStderr].map((f) => rm(bundle.path(f), { force: true })),
    );
  }
  const output = openOutput(bundle, env.now);
  const remaining = info.running
    ? Math.max(1000, config.agent.timeout - (env.now().getTime() - ctx.startedAt.getTime()))
    : EXITED_WAIT_MS;
  try {
    await engine.attach(info.handle, output.onStdout, output.onStderr);
    const supervised = await supervise({
      engine,
      handle: info.handle,
      timeoutMs: remaining,
      graceMs: config.agent.stop_grace,
      shutdownGraceMs: Math.min(config.agent.stop_grace, Math.floor(config.scheduling.shutdown_timeout / 3)),
      signal: ctx.request.signal,
      log: ctx.log,
    });
    return { supervised, output };
  } finally {
    await output.close();
  }
}
