import path from 'node:path';
import { clusterNotice } from './cluster.js';
import { RUN_FILES, RunBundle } from '../../audit/bundle.js';
import { prepareContext, type PreparedContext } from '../../context/prepare.js';
import { findReportValidator } from '../../context/report-validator.js';
import { ensureOwnDir } from '../../util/safe-path.js';
import type { PipelineEnv, RunContext } from './context.js';
import { guardFor } from './kubectl-guard.js';
import { refusePlantedAgentFiles } from './planted.js';
import { OUTPUT_DIR, prepareWritable, runLayout, skillMounts, type RunLayout } from './layout.js';

// Prepare: the run bundle, the skills snapshot, where the agent sees things, the triage script and
// the token-budgeted prompt. The incident is in `preparing` meanwhile; nothing is launched yet.

export interface PreparedRun {
  layout: RunLayout;
  context: PreparedContext;
}

export async function prepareRun(env: PipelineEnv, ctx: RunContext): Promise<PreparedRun> {
  const { config } = env;
  const { request, log, audit } = ctx;
  const overrides = request.overrides ?? {};
  const bundle = await RunBundle.create(request.workspace.dir, request.runId, env.redactor);
  ctx.bundle = bundle;
  await audit('preparing', {
    attempt: request.attempt,
    agent: ctx.agent,
    engine: ctx.engineName,
    ...(ctx.model ? { model: ctx.model } : {}),
    ...(overrides.dryRun ? { dryRun: true } : {}),
  });
  const adapter = await env.agents(ctx.agent);
  ctx.adapter = adapter;
  const engine = await env.engineFor(ctx.engineName);
  ctx.engine = engine;
  // On the host the agent also sees the workspaces root above its folder (Claude reads CLAUDE.md upwards).
  await refusePlantedAgentFiles(
    request.workspace.dir,
    engine.placement === 'host' ? [path.dirname(request.workspace.dir)] : [],
  );

  const skillsStarted = performance.now();
  const snapshot = await env.skills.acquire();
  ctx.snapshot = snapshot;
  env.metrics?.stage('skills', (performance.now() - skillsStarted) / 1000);
  await audit('skills_resolved', {
    sources: snapshot.sources.map((s) => ({ source: s.name, commit: s.commit })),
    unavailable: snapshot.unavailable,
  });

  const guard = await guardFor(env, ctx);
  ctx.guard = guard;
  const agentPath = [...guard.pathPrepend, ...(overrides.pathPrepend ?? [])];
  const layout = runLayout({
    // With the kubectl guard the kubeconfig stays with the daemon: the agent's view is built without it.
    config: guard.withholdKubeconfig ? { ...config, kubeconfig: undefined } : config,
    placement: engine.placement,
    workspaceDir: request.workspace.dir,
    runId: request.runId,
    bundleDir: bundle.dir,
    adapter,
    ...(agentPath.length > 0 ? { pathPrepend: agentPath, basePath: env.env.PATH } : {}),
  });
  await guard.install(layout.view.runDir);
  ctx.hostHome = layout.hostHome;
  await prepareWritable(
    {
      workspace: request.workspace.dir,
      output: path.join(request.workspace.dir, OUTPUT_DIR),
      bundle: bundle.dir,
    },
    engine.placement,
    config.docker.user,
  );
  await ensureOwnDir(layout.hostFilesDir, request.workspace.dir);

  // With skills.disable_triage_preload, prepare reports the triage as disabled.
  const triage = overrides.triage ?? { mode: 'run' as const };
  await audit('triage_started', { mode: triage.mode });
  const context = await prepareContext({
    config,
    workspace: request.workspace,
    agent: ctx.agent,
    placement: adapter.placement,
    view: layout.view,
    bundle,
    skills: snapshot,
    log,
    triage,
    ...(overrides.subjects ? { subjects: overrides.subjects } : {}),
    ...(ctx.model ? { model: ctx.model } : {}),
    ...(env.metrics ? { metrics: env.metrics } : {}),
    ...(overrides.pathPrepend ? { pathPrepend: overrides.pathPrepend } : {}),
    ...(clusterNotice(ctx) ? { clusterNotice: clusterNotice(ctx) } : {}),
    signal: request.signal,
  });
  await bundle.writeJson(RUN_FILES.promptParts, context.prompt);
  // The skills the prompt names, one folder each where the agent's CLI discovers them.
  layout.mounts.push(...skillMounts(layout.paths.home, adapter, context.skills));
  ctx.reportValidator = await findReportValidator(config, snapshot);
  if (ctx.reportValidator.kind === 'unusable')
    log.warn({ reason: ctx.reportValidator.reason }, "the triage skill's report validator cannot be run");
  const t = context.context.triage;
  await audit('triage_finished', {
    status: t.status,
    ...(t.exitCode !== undefined ? { exitCode: t.exitCode } : {}),
    ...(t.durationMs !== undefined ? { durationMs: t.durationMs } : {}),
  });
  await audit('context_built', {
    totalTokens: context.context.totalTokens,
    promptSha256: context.promptSha256,
    incomplete: context.context.incomplete,
    overBudgetBy: context.context.overBudgetBy,
  });
  return { layout, context };
}
