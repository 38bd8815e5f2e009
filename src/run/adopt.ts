import { rm } from 'node:fs/promises';
import path from 'node:path';
import { RunBundle } from '../workspace/bundle.js';
import { RUN_FILES, OUTPUT_DIR, REPORT_FILE, runDirOf } from '../workspace/layout.js';
import { readRunManifest, type RunManifest } from '../workspace/run-record.js';
import { AGENT_NAMES, ENGINE_NAMES, keepRuns, type AgentName, type EngineName } from '../config/schema.js';
import { RUN_LABELS } from '../engines/labels.js';
import type { Engine, RunInfo } from '../engines/types.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';
import type { RunRequest } from './types.js';
import type { RunCleanup } from './cleanup.js';
import { chooseCluster } from './cluster.js';
import type { AuditFn, PipelineEnv } from './env.js';
import { resumeGuard } from './kubectl-guard.js';
import { CONTAINER_WORKSPACE } from './layout.js';
import { openOutput } from './output.js';
import { ProgressTracker } from './progress.js';
import { resumeModelGateway } from './model-gateway.js';
import { resumeRunFiles } from './pod-files.js';
import type { LaunchedRun, LaunchOrigin, ReportPaths, RunStart } from './stages.js';

// Adoption: a run that a daemon which died had launched re-enters the pipeline as a LaunchedRun, from
// its manifest and the engine: its broker listening again, its whole output re-read, the time it has
// left as its budget. It is then supervised and collected like any run. A run the engine no longer
// has, or that was created but never started, is `gone`: re-queued.

/** Waiting on a run found exited at adoption: its end is already known to the engine. */
const EXITED_WAIT_MS = 30_000;

const asAgent = (v: string | undefined): AgentName | undefined => AGENT_NAMES.find((n) => n === v);
const asEngine = (v: string | undefined): EngineName | undefined => ENGINE_NAMES.find((n) => n === v);

/** A run a dead daemon launched, as the engine and its manifest describe it. */
export interface OrphanRun {
  start: RunStart;
  bundle: RunBundle;
  engine: Engine;
  info: RunInfo;
  manifest: RunManifest | undefined;
}

/** The run to adopt, or `gone` when the engine has no started run for it. */
export async function findOrphan(
  env: PipelineEnv,
  request: Omit<RunRequest, 'attempt'>,
  auditFor: (log: Logger) => AuditFn,
  cleanup: RunCleanup,
): Promise<OrphanRun | 'gone'> {
  const { config } = env;
  const bundleDir = runDirOf(request.workspace.dir, request.runId);
  const manifestRead = await readRunManifest(bundleDir);
  const manifest = manifestRead.ok ? manifestRead.value : undefined;
  const engineName = asEngine(manifest?.engine) ?? request.overrides?.engine ?? config.engine;
  const log = request.log.child({ engine: engineName, adopted: true });
  const engine = await env.engineFor(engineName);
  const info = await engine.find(request.runId, bundleDir);
  if (!info) {
    log.info('run to adopt not found on the engine');
    return 'gone';
  }
  if (!(await startedRun(engine, info, log))) return 'gone';
  const start: RunStart = {
    request,
    log,
    audit: auditFor(log),
    agent: asAgent(info.labels[RUN_LABELS.agent]) ?? asAgent(manifest?.agent) ?? config.agent.name,
    engineName,
    model: manifest?.model,
    startedAt: manifest ? new Date(manifest.launchedAt) : env.now(),
    // The broker goes on against the cluster the run was prepared for.
    cluster: chooseCluster(env, request),
  };
  if (!keepRuns(config))
    cleanup.defer('adopted run', () =>
      engine
        .remove(info.handle)
        .catch((err: unknown) => log.error({ err: errorMessage(err) }, 'could not remove the adopted run')),
    );
  if (manifest?.hostHome) {
    const home = manifest.hostHome;
    cleanup.defer('per-run HOME', () => rm(home, { recursive: true, force: true }));
  }
  const bundle = await RunBundle.create(request.workspace.dir, request.runId, env.redactor);
  await start.audit('reattached', { engine: engineName, id: info.handle.id, running: info.running });
  return { start, bundle, engine, info, manifest };
}

/** False (after removing it) for a run created but never started: the daemon died between the two. */
async function startedRun(engine: Engine, info: RunInfo, log: Logger): Promise<boolean> {
  if (info.started) return true;
  log.info({ id: info.handle.id }, 'run to adopt was created but never started; removing it');
  await engine
    .remove(info.handle)
    .catch((err: unknown) => log.warn({ err: errorMessage(err) }, 'could not remove it'));
  return false;
}

/** The orphan as a launched run: broker back, report validator looked up again, whole output re-read. */
export async function reattach(
  env: PipelineEnv,
  found: OrphanRun,
  cleanup: RunCleanup,
): Promise<LaunchedRun> {
  const { config } = env;
  const { start, engine, info, bundle } = found;
  const adapter = await env.agents(start.agent);
  // A running agent gets its kubectl broker back before anything else.
  const guard = info.running ? await resumeGuard(env, { start, bundle, engine }) : undefined;
  if (guard) cleanup.defer('kubectl broker', () => guard.stop());
  // And its model gateway: the agent calls the same socket (container) or address (host) with the same
  // token, which the new daemon knows by its hash.
  const resumed = info.running
    ? await resumeModelGateway({
        config,
        host: env.gateway,
        adapter,
        env: env.env,
        engine,
        runId: start.request.runId,
        bundleDir: bundle.dir,
        manifest: found.manifest?.gateway,
        ...(env.podBroker ? { podBroker: env.podBroker } : {}),
        redact: (text) => env.redactor.redact(text),
      })
    : undefined;
  const gateway = resumed?.gateway;
  if (gateway) cleanup.defer('model gateway', () => gateway.stop());
  if (resumed) {
    await start.audit('gateway_resumed', {
      address: resumed.address,
      listening: resumed.lost === undefined,
      ...(resumed.lost ? { reason: resumed.lost } : {}),
    });
    if (resumed.lost) start.log.warn({ reason: resumed.lost }, 'adopted run lost its model gateway');
  }
  // An agent pod goes on returning what its agent writes: the new daemon takes it, by the token's hash.
  const files = await resumeRunFiles(
    env,
    { engine, bundle, runId: start.request.runId, workspaceDir: start.request.workspace.dir },
    found.manifest?.files?.tokenSha256,
  );
  if (files) cleanup.defer('run files', () => files.stop());
  // The report validator as the skills cache has it now (the launching daemon's lookup died with it).
  const snapshot = await env.skills.acquire();
  cleanup.defer('skills snapshot', () => snapshot.release());
  const { findReportValidator } = await import('../context/report-validator.js');
  const reportValidator = await findReportValidator(config, snapshot);
  if (engine.capabilities.reattachOutput)
    await Promise.all(
      [RUN_FILES.agentStdout, RUN_FILES.agentStderr].map((f) => rm(bundle.path(f), { force: true })),
    );
  const output = openOutput(bundle, env.now);
  try {
    await engine.attach(info.handle, output.onStdout, output.onStderr);
  } catch (err) {
    await output.close();
    throw err;
  }
  const timeoutMs = info.running
    ? Math.max(1000, config.agent.timeout - (env.now().getTime() - start.startedAt.getTime()))
    : EXITED_WAIT_MS;
  return {
    ...start,
    bundle,
    adapter,
    engine,
    handle: info.handle,
    output,
    guard,
    ...(gateway ? { gateway } : {}),
    ...(files ? { files } : {}),
    reportValidator,
    report: reportPaths(start, engine, found.manifest),
    timeoutMs,
    origin: adoptedOrigin(found.manifest),
    progress: new ProgressTracker(undefined, start.startedAt, env.now),
  };
}

/** What the launching daemon recorded of the run's context (nothing from a manifest older than that). */
function adoptedOrigin(manifest: RunManifest | undefined): LaunchOrigin {
  return {
    kind: 'adopted',
    ...(manifest?.promptSha256 ? { promptSha256: manifest.promptSha256 } : {}),
    ...(manifest?.triageStatus ? { triageStatus: manifest.triageStatus } : {}),
    ...(manifest?.knownGaps ? { knownGaps: manifest.knownGaps } : {}),
    ...(manifest?.unreachable ? { unreachable: manifest.unreachable } : {}),
  };
}

function reportPaths(start: RunStart, engine: Engine, manifest: RunManifest | undefined): ReportPaths {
  const hostPath =
    manifest?.report.hostPath ?? path.join(start.request.workspace.dir, OUTPUT_DIR, REPORT_FILE);
  const agentPath =
    manifest?.report.agentPath ??
    (engine.placement === 'host' ? hostPath : path.posix.join(CONTAINER_WORKSPACE, OUTPUT_DIR, REPORT_FILE));
  return { hostPath, agentPath };
}
