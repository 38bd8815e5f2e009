import { rm } from 'node:fs/promises';
import path from 'node:path';
import { type RunBundle } from '../workspace/bundle.js';
import { RUN_FILES, OUTPUT_DIR } from '../workspace/layout.js';
import { buildContext, type BuildInput, type BuiltContext } from '../context/build.js';
import { clusterNotice, withProbedPermissions } from './access.js';
import { findReportValidator } from '../context/report-validator.js';
import type { SkillsSnapshot } from '../context/types.js';
import { ensureOwnDir } from '../util/safe-path.js';
import type { RunCleanup } from './cleanup.js';
import { prepareClusterAccess, routedCluster, type RunCluster } from './cluster.js';
import type { PipelineEnv } from './env.js';
import { guardFor } from './kubectl-guard.js';
import { prepareWritable, runLayout, skillMounts, type RunLayout } from './layout.js';
import { preloadAlertMetrics } from './alert-metrics.js';
import { triagePromql } from './prometheus.js';
import { refusePlantedAgentFiles } from './planted.js';
import type { PreparedRun, RunStart } from './stages.js';

// Prepare: the place a run happens in — its bundle, the agent adapter and engine, the skills snapshot,
// the kubectl guard and the layout (where the agent sees what) — then its context, built by
// src/context/build.ts (triage, budget, disclosure, prompt). The incident is `preparing` meanwhile;
// nothing is launched. What it acquires is registered with `cleanup` as it is acquired.

export async function prepare(
  env: PipelineEnv,
  start: RunStart,
  bundle: RunBundle,
  cleanup: RunCleanup,
): Promise<PreparedRun> {
  const { request, audit } = start;
  const cluster = routedCluster(env, start);
  const kubeconfig = await prepareClusterAccess(env, cluster, bundle.dir, start.access);
  await audit('preparing', {
    attempt: request.attempt,
    agent: start.agent,
    engine: start.engineName,
    // Without `clusters:` there is one kubeconfig and nothing to record, as before the registry.
    ...(cluster.configured ? { cluster: cluster.record } : {}),
    ...(start.model ? { model: start.model } : {}),
    ...(request.overrides?.dryRun ? { dryRun: true } : {}),
  });
  const adapter = await env.agents(start.agent);
  const engine = await env.engineFor(start.engineName);
  // On the host the agent also sees the workspaces root above its folder (Claude reads CLAUDE.md upwards).
  await refusePlantedAgentFiles(
    request.workspace.dir,
    engine.placement === 'host' ? [path.dirname(request.workspace.dir)] : [],
  );
  const snapshot = await acquireSkills(env, start, cleanup);
  const guard = await guardFor(env, { start, bundle, engine });
  cleanup.defer('kubectl broker', () => guard.stop());
  const layout = await layOut(env, { start, bundle, engine, adapter, guard }, cluster);
  if (layout.hostHome) {
    const home = layout.hostHome;
    cleanup.defer('per-run HOME', () => rm(home, { recursive: true, force: true }));
  }
  const context = await contextFor(env, { start, bundle, adapter, snapshot, layout, guard }, kubeconfig);
  const reportValidator = await findReportValidator(env.config, snapshot);
  if (reportValidator.kind === 'unusable')
    start.log.warn({ reason: reportValidator.reason }, "the triage skill's report validator cannot be run");
  return { ...start, bundle, adapter, engine, snapshot, guard, layout, context, reportValidator };
}

async function acquireSkills(
  env: PipelineEnv,
  start: RunStart,
  cleanup: RunCleanup,
): Promise<SkillsSnapshot> {
  const began = performance.now();
  const snapshot = await env.skills.acquire();
  cleanup.defer('skills snapshot', () => snapshot.release());
  env.metrics?.stage('skills', (performance.now() - began) / 1000);
  await start.audit('skills_resolved', {
    sources: snapshot.sources.map((s) => ({ source: s.name, commit: s.commit })),
    unavailable: snapshot.unavailable,
  });
  return snapshot;
}

/** Where the agent sees what (paths, mounts, PATH), the guard's kubectl installed, writable folders ready. */
async function layOut(
  env: PipelineEnv,
  run: Pick<PreparedRun, 'bundle' | 'engine' | 'adapter' | 'guard'> & { start: RunStart },
  cluster: RunCluster,
): Promise<RunLayout> {
  const { config } = env;
  const { start, bundle, engine, adapter, guard } = run;
  const { request } = start;
  const agentPath = [...guard.pathPrepend, ...(request.overrides?.pathPrepend ?? [])];
  const layout = runLayout({
    // With the kubectl guard the kubeconfig stays with the daemon: the agent's view is built without it.
    // Without it the agent gets its cluster's kubeconfig file (the entry's context is not applied there).
    config: { ...config, kubeconfig: guard.withholdKubeconfig ? undefined : cluster.entry.kubeconfig },
    placement: engine.placement,
    workspaceDir: request.workspace.dir,
    runId: request.runId,
    bundleDir: bundle.dir,
    adapter,
    ...(agentPath.length > 0 ? { pathPrepend: agentPath, basePath: env.env.PATH } : {}),
  });
  await guard.install(layout.view.runDir);
  await prepareWritable(
    {
      workspace: request.workspace.dir,
      output: path.join(request.workspace.dir, OUTPUT_DIR),
      bundle: bundle.dir,
    },
    engine.placement,
    config.docker.user,
    undefined,
    engine.capabilities.agentGroup,
  );
  await ensureOwnDir(layout.hostFilesDir, request.workspace.dir);
  return layout;
}

/**
 * What buildContext is given for a run: its workspace (with the permissions probed when the producer
 * wrote none), the triage mode, subjects, model, its cluster, past investigations and the notice of an
 * unreachable cluster. A launched run and its dry run (`triage-runner context`, preview.ts) share it.
 */
export async function contextInput(
  env: PipelineEnv,
  start: RunStart,
  parts: Pick<BuildInput, 'bundle' | 'skills' | 'view' | 'placement'>,
  kubeconfig: string | undefined,
): Promise<BuildInput> {
  const { request } = start;
  const overrides = request.overrides ?? {};
  const notice = clusterNotice(start.access);
  const workspace = await withProbedPermissions(env, start);
  return {
    ...parts,
    config: env.config,
    workspace,
    agent: start.agent,
    log: start.log,
    // With skills.disable_triage_preload, the build reports the triage as disabled.
    triage: overrides.triage ?? { mode: 'run' },
    ...(overrides.subjects ? { subjects: overrides.subjects } : {}),
    ...(start.model ? { model: start.model } : {}),
    ...(overrides.pathPrepend ? { pathPrepend: overrides.pathPrepend } : {}),
    // The run's cluster registry entry, and nothing else.
    cluster: { ...(kubeconfig ? { kubeconfig } : {}) },
    ...(overrides.previousInvestigations === false ? {} : { previousRoot: env.config.workspaces_root }),
    ...(notice ? { clusterNotice: notice } : {}),
    signal: request.signal,
  };
}

/** The run's context (src/context/build.ts), its prompt parts in the bundle, its skills mounted. */
async function contextFor(
  env: PipelineEnv,
  run: Pick<PreparedRun, 'bundle' | 'adapter' | 'snapshot' | 'layout' | 'guard'> & { start: RunStart },
  kubeconfig: string | undefined,
): Promise<BuiltContext> {
  const { start, bundle, adapter, snapshot, layout, guard } = run;
  const { audit } = start;
  const triage = start.request.overrides?.triage ?? { mode: 'run' as const };
  await audit('triage_started', { mode: triage.mode });
  const parts = { bundle, skills: snapshot, view: layout.view, placement: adapter.placement };
  const input = await contextInput(env, start, parts, kubeconfig);
  // The triage script's kubectl calls go through the run's broker too, recorded `by: triage`.
  const runsScript = triage.mode === 'run' && !env.config.skills.disable_triage_preload;
  const triageBroker = runsScript ? await guard.startTriage() : undefined;
  // The alert's own expression, evaluated beside the triage script (a replay that reuses or skips the
  // triage skips it too: it would read today's values, not the incident's).
  const { request } = start;
  const alertMetrics =
    triage.mode === 'run'
      ? preloadAlertMetrics({
          config: env.config,
          workspace: input.workspace,
          bundle,
          runDir: layout.view.runDir,
          promql: (argv) => triagePromql(guard, argv, request.signal, env.now),
        })
      : undefined;
  const context = await buildContext({
    ...input,
    ...(env.metrics ? { metrics: env.metrics } : {}),
    ...(triageBroker ? { kubectlGuard: triageBroker.guardDir } : {}),
    ...(alertMetrics ? { alertMetrics } : {}),
  }).finally(() => triageBroker?.stop());
  await bundle.writeJson(RUN_FILES.promptParts, context.prompt);
  // The skills the prompt names, one folder each where the agent's CLI discovers them.
  layout.mounts.push(...skillMounts(layout.paths.home, adapter, context.skills));
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
  return context;
}
