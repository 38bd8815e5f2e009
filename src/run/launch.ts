import { keepRuns } from '../config/schema.js';
import { RUN_FILES } from '../workspace/layout.js';
import { writeRunManifest } from '../workspace/run-record.js';
import type { AgentInvocation } from '../agents/types.js';
import type { RunHandle } from '../engines/types.js';
import type { RunProgress } from '../workspace/state.js';
import { errorMessage } from '../util/errors.js';
import type { Launchable, RunGateway } from '../gateway/run.js';
import type { RunCleanup } from './cleanup.js';
import type { PipelineEnv } from './env.js';
import {
  invocationRecord,
  providerSettings,
  runLabels,
  writeInvocationFiles,
  type LaunchSpec,
} from './invocation.js';
import { planRunGateway } from './model-gateway.js';
import { planRunFiles, type RunFiles } from './pod-files.js';
import { openOutput, type RunOutput } from './output.js';
import { ProgressTracker } from './progress.js';
import { agentAccess, shareRunInputs } from './share-run.js';
import type { LaunchedRun, PreparedRun } from './stages.js';
import { triageGaps, unreachableOf } from './evidence.js';
import { allEnded } from '../util/promises.js';

// Launch: the adapter's invocation joined to the engine (planLaunch: files, manifest, invocation.json;
// a dry run stops there), then the broker and the agent started (launch: the incident is `running`).

export type { LaunchSpec } from './invocation.js';

/** What planLaunch() made: the engine's spec, and the run's identity at the model gateway. */
export interface LaunchPlan {
  spec: LaunchSpec;
  gateway: RunGateway | undefined;
  /** An agent pod's files (engines that copy mounts): its token, opened when the agent starts. */
  files: RunFiles | undefined;
  /**
   * The manifest and the invocation record, being written: awaited before the agent starts (the engine
   * creates its container meanwhile), or before a run that ends unlaunched (a dry run) says it ended.
   */
  records: Promise<void>;
}

/**
 * What the run readied for its agent's start failed (its records, kubectl broker or model gateway), not
 * the engine: the run is not held back waiting for the engine.
 */
export class StartNotReady extends Error {
  constructor(cause: unknown) {
    super(errorMessage(cause), { cause });
    this.name = 'StartNotReady';
  }
}

/**
 * Joins the adapter's invocation to the engine: writes the files it hands the agent, and begins the
 * manifest an adopting daemon reads and the redacted invocation record. Nothing is started yet (a dry
 * run stops here).
 */
export async function planLaunch(
  env: PipelineEnv,
  run: PreparedRun,
  cleanup: RunCleanup,
): Promise<LaunchPlan> {
  const gateway = await openRunGateway(env, run, cleanup);
  const { spec, invocation } = await launchSpec(env, run, gateway);
  await shareWithAgent(env, run);
  const files = planRunFiles(env, {
    engine: run.engine,
    bundle: run.bundle,
    runId: run.request.runId,
    workspaceDir: run.request.workspace.dir,
  });
  // The token dies with the run, whatever stage it ends at.
  if (files) cleanup.defer('run files', () => files.stop());
  // In a container the gateway bridge runs first and starts the CLI (its loopback port is the gateway);
  // in a pod a shell that sets the model keys to the run token from its file (never in the Job spec).
  const wrapped = gateway?.wrap(spec) ?? spec;
  const records = writeLaunchRecords(env, run, { spec, wrapped, invocation, gateway, files });
  // Awaited by launch() or by a run that ends unlaunched; never left unhandled in between.
  records.catch(() => undefined);
  const secretEnv = wrapped.secretEnv ?? spec.secretEnv;
  return {
    spec: { ...spec, command: wrapped.command, args: wrapped.args, env: wrapped.env, secretEnv },
    gateway,
    files,
    records,
  };
}

/** Shares what the agent reads of its run folder with it, now that everything it reads is written. */
async function shareWithAgent(env: PipelineEnv, run: PreparedRun): Promise<void> {
  const { engine, request, bundle, log } = run;
  const access = agentAccess(engine.placement, engine.capabilities, env.config.docker.user);
  const given = await shareRunInputs(request.workspace.dir, bundle.dir, access);
  if (given.kind !== access.kind)
    log.warn(
      { group: access.kind === 'group' ? access.gid : undefined },
      "the run folder's agent inputs could not be given to the agent's group; they are readable by all users",
    );
}

/** The run's identity at the model gateway (none without one), stopped whatever stage the run ends at. */
async function openRunGateway(
  env: PipelineEnv,
  run: PreparedRun,
  cleanup: RunCleanup,
): Promise<RunGateway | undefined> {
  const { request, bundle, engine, layout } = run;
  // With the gateway the agent's provider settings point at it and every model key is the run's token.
  const gateway = await planRunGateway({
    config: env.config,
    host: env.gateway,
    adapter: run.adapter,
    env: env.env,
    engine,
    runId: request.runId,
    bundleDir: bundle.dir,
    agentRunDir: layout.view.runDir,
    ...(env.podBroker ? { podBroker: env.podBroker } : {}),
    redact: (text) => env.redactor.redact(text),
  });
  // The token dies with the run, whatever stage it ends at.
  if (gateway) cleanup.defer('model gateway', () => gateway.stop());
  return gateway;
}

/** The adapter's invocation as the engine's spec, its files written; its secret values join the redactor. */
async function launchSpec(
  env: PipelineEnv,
  run: PreparedRun,
  gateway: RunGateway | undefined,
): Promise<{ spec: LaunchSpec; invocation: AgentInvocation }> {
  const { config } = env;
  const { request, bundle, adapter, engine, layout, context } = run;
  const invocation = adapter.buildInvocation({
    prompt: context.prompt,
    ...(run.model ? { model: run.model } : {}),
    maxTurns: config.agent.max_turns,
    extraArgs: config.agent.extra_args,
    paths: layout.paths,
    providers: { ...providerSettings(config, env.env), ...gateway?.providers },
    secrets: gateway ? gateway.secrets(env.secrets) : env.secrets,
    permissions: run.guard.permissions,
    extraTools: config.agent.extra_tools,
  });
  const fileMounts = await writeInvocationFiles(invocation, layout, engine.placement);
  const incidentId = request.workspace.incident.incidentId;
  const spec: LaunchSpec = {
    runId: request.runId,
    incidentId,
    labels: runLabels({ daemonId: env.daemonId, incidentId, runId: request.runId, agent: run.agent }),
    image: config.agent.image,
    command: config.agent.command ?? invocation.command,
    args: invocation.args,
    env: { ...invocation.env, ...layout.env },
    secretEnv: invocation.secretEnv,
    stdin: invocation.stdin,
    workdir: layout.workdir,
    mounts: [...layout.mounts, ...fileMounts],
    tmpfs: layout.tmpfs,
    stateDir: bundle.dir,
    timeoutMs: config.agent.timeout,
  };
  for (const value of Object.values(spec.secretEnv)) env.redactor.add('agent secret', value);
  return { spec, invocation };
}

/** The manifest an adopting daemon reads and the redacted invocation record (invocation.json). */
async function writeLaunchRecords(
  env: PipelineEnv,
  run: PreparedRun,
  launch: {
    spec: LaunchSpec;
    wrapped: Launchable;
    invocation: AgentInvocation;
    gateway: RunGateway | undefined;
    files: RunFiles | undefined;
  },
): Promise<void> {
  const { request, bundle, engine, layout } = run;
  const { spec, wrapped, invocation, gateway, files } = launch;
  const launchedAt = env.now();
  const image = engine.placement === 'container' ? spec.image : undefined;
  const hostHome = layout.hostHome ? { hostHome: layout.hostHome } : {};
  const model = run.model ? { model: run.model } : {};
  // Two files, written side by side: each is durable on its own, neither depends on the other.
  const manifest = writeRunManifest(bundle, {
    schemaVersion: 1,
    runId: request.runId,
    incidentId: spec.incidentId,
    attempt: request.attempt ?? 0,
    engine: engine.name,
    agent: run.agent,
    ...model,
    ...(image ? { image } : {}),
    launchedAt: launchedAt.toISOString(),
    report: { hostPath: layout.hostReportPath, agentPath: layout.paths.reportPath },
    ...hostHome,
    ...(gateway ? { gateway: gateway.manifest() } : {}),
    ...(files ? { files: { tokenSha256: files.tokenSha256 } } : {}),
    // What an adopting daemon needs for the run's result and its evidence check.
    promptSha256: run.context.promptSha256,
    triageStatus: run.context.context.triage.status,
    knownGaps: [
      ...(run.access?.knownGaps ?? []),
      ...triageGaps(run.context.context.triage, env.config.context.triage_log_cap),
    ],
    ...(unreachableOf(run.access) ? { unreachable: unreachableOf(run.access) } : {}),
  });
  const record = bundle.writeJson(
    RUN_FILES.invocation,
    invocationRecord({
      spec,
      ...(wrapped !== spec ? { wrapper: wrapped } : {}),
      engine: engine.name,
      placement: engine.placement,
      agent: run.agent,
      ...model,
      attempt: request.attempt ?? 0,
      launchedAt,
      files: invocation.files,
      ...hostHome,
    }),
  );
  await Promise.all([manifest, record]);
}

/** Starts the planned run (the broker first) and reports `launched`: the incident is `running` from here. */
export async function launch(
  env: PipelineEnv,
  run: PreparedRun,
  plan: LaunchPlan,
  cleanup: RunCleanup,
  plannedAt: number,
): Promise<LaunchedRun> {
  const { gateway, files } = plan;
  const { engine, log, request } = run;
  const progress = new ProgressTracker(run.adapter.progress?.(), env.now(), env.now);
  const report = (p: RunProgress) => void request.onStage?.({ type: 'progress', progress: p });
  let handle: RunHandle | undefined;
  // The credentials were refused: stop the agent now instead of letting its CLI retry for minutes.
  const stopForAuth = () => {
    if (handle) void engine.signal(handle, 'SIGTERM').catch(() => undefined);
  };
  const output = openOutput(run.bundle, env.now, (chunk, stream) => {
    if (stream !== 'stdout') return;
    const update = progress.push(chunk);
    if (!update) return;
    report(progress.snapshot());
    if (update.retrying) log.warn({ retrying: update.retrying }, 'the agent CLI is retrying the model API');
    if (update.authFailure) {
      log.warn({ reason: update.authFailure }, 'the model API refused the credentials; stopping the agent');
      stopForAuth();
    }
  });
  // Live progress from the gateway: the same figures for every CLI.
  gateway?.watch((totals) => {
    progress.gateway(totals);
    report(progress.snapshot());
  });
  try {
    handle = await startAgent(env, run, { plan, output, plannedAt }, cleanup);
  } catch (err) {
    progress.stop();
    await output.close();
    throw err;
  }
  // The store's Launched transition logs "agent launched" at info; this one only adds the engine id.
  log.debug({ id: handle.id }, 'agent started on the engine');
  if (progress.authFailure) stopForAuth();
  progress.beat(report, log);
  return {
    ...run,
    handle,
    output,
    guard: run.guard,
    ...(gateway ? { gateway } : {}),
    ...(files ? { files } : {}),
    report: { hostPath: run.layout.hostReportPath, agentPath: run.layout.paths.reportPath },
    timeoutMs: env.config.agent.timeout,
    origin: {
      kind: 'launched',
      promptSha256: run.context.promptSha256,
      triageStatus: run.context.context.triage.status,
      triageGaps: triageGaps(run.context.context.triage, env.config.context.triage_log_cap),
    },
    progress,
  };
}

async function startAgent(
  env: PipelineEnv,
  run: PreparedRun,
  started: { plan: LaunchPlan; output: RunOutput; plannedAt: number },
  cleanup: RunCleanup,
): Promise<RunHandle> {
  const { engine } = run;
  const { plan, output } = started;
  const { spec, gateway, files } = plan;
  // The records are on disk, and the broker, the gateway and the pod's files are open, before the agent
  // can start (and call them); the engine creates its container meanwhile. All end before a failure is
  // told, so the clean-up never runs beside one still opening.
  let notReady: { err: unknown } | undefined;
  const beforeStart = async () => {
    try {
      await allEnded([plan.records, run.guard.start(), gateway?.start(), files?.start(spec)]);
    } catch (err) {
      notReady = { err };
      throw err;
    }
  };
  let handle: RunHandle;
  try {
    handle = await engine.start({
      ...spec,
      ...(files?.token ? { filesToken: files.token } : {}),
      beforeStart,
      onStdout: output.onStdout,
      onStderr: output.onStderr,
    });
  } catch (err) {
    throw notReady ? new StartNotReady(notReady.err) : err;
  }
  if (!keepRuns(env.config))
    cleanup.defer('agent run', () =>
      engine
        .remove(handle)
        .catch((err: unknown) =>
          run.log.error({ err: errorMessage(err), id: handle.id }, 'could not remove the agent run'),
        ),
    );
  env.metrics?.stage('launch', (performance.now() - started.plannedAt) / 1000);
  const image = engine.placement === 'container' ? spec.image : undefined;
  await run.request.onStage?.({
    type: 'launched',
    engine: engine.name,
    id: handle.id,
    ...(image ? { image } : {}),
  });
  return handle;
}
