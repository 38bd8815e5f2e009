import { hostname } from 'node:os';
import { mkdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { getAgent } from '../agents/index.js';
import type { AgentAdapter, AgentOutcome } from '../agents/types.js';
import { RUN_FILES, RunBundle, TRIAGE_DIR, runDirOf, scrubFile } from '../audit/bundle.js';
import type { AuditEventType, AuditLog } from '../audit/log.js';
import type { AgentName, Config, EngineName } from '../config/schema.js';
import { prepareContext } from '../context/prepare.js';
import { SkillsCache } from '../context/skills-cache.js';
import type { SkillsSnapshot } from '../context/types.js';
import { createEngine } from '../engines/index.js';
import { RUN_LABELS } from '../engines/labels.js';
import type { Engine, RunHandle, RunInfo } from '../engines/types.js';
import type { Logger } from '../log/logger.js';
import type { Redactor } from '../log/redact.js';
import { errorMessage, isTransient } from '../util/errors.js';
import { buildResult, checkReport, verdict } from './collect.js';
import {
  TailBuffer,
  invocationRecord,
  providerSettings,
  runLabels,
  writeInvocationFiles,
  type LaunchSpec,
} from './launch.js';
import { CONTAINER_WORKSPACE, OUTPUT_DIR, REPORT_FILE, prepareWritable, runLayout } from './layout.js';
import { supervise, type Supervised } from './supervise.js';
import type {
  PipelineMetrics,
  Readiness,
  RunExecutor,
  RunOutcome,
  RunRequest,
  SweepResult,
} from './types.js';

// The run pipeline: prepare (skills, triage, context, prompt) → launch (adapter + engine) → supervise
// (timeout, shutdown) → collect (exit, usage, report) → record (result.json, audit events).

/** The part of the skills cache the pipeline uses (src/context/skills-cache.ts `SkillsCache`). */
export interface SkillsCacheLike {
  acquire(): Promise<SkillsSnapshot>;
  readiness(): Promise<{ ready: boolean; sources: { name: string; available: boolean; detail?: string }[] }>;
}

export interface ExecutorDeps {
  config: Config;
  log: Logger;
  redactor: Redactor;
  secrets: Record<string, string>;
  audit: AuditLog;
  metrics?: PipelineMetrics;
  env: Record<string, string | undefined>;
  /** The engine for `config.engine` (others named by overrides are created on demand). */
  engine?: Engine;
  skills?: SkillsCacheLike;
  /** Goes into the daemon label of every run; default: the host name. */
  daemonId?: string;
  /** Adapter lookup (tests inject a fake); default: the registry in src/agents/index.ts. */
  agents?: (name: AgentName) => AgentAdapter;
  now?: () => Date;
}

const STDOUT_KEEP = 8 * 1024 * 1024;
const STDERR_KEEP = 1024 * 1024;
/** Waiting on a run found exited at adoption: its end is already known to the engine. */
const EXITED_WAIT_MS = 30_000;
/** The sweep spares runs younger than this: another daemon on the same engine may be starting them. */
export const SWEEP_MIN_AGE_MS = 60_000;

interface RunContext {
  request: Omit<RunRequest, 'attempt'>;
  log: Logger;
  bundle: RunBundle;
  engine: Engine;
  adapter: AgentAdapter;
  agent: AgentName;
  model?: string;
  startedAt: Date;
  reportHostPath: string;
  reportAgentPath: string;
  promptSha256?: string;
  triageStatus?: string;
  /** Collected by a daemon other than the one that launched it. */
  adopted?: boolean;
  audit: (type: AuditEventType, fields?: Record<string, unknown>) => Promise<void>;
}

/**
 * Why a run ended with SIGKILL that the daemon did not send. Podman does not report OOMKilled, so a
 * memory-limit kill shows only as exit 137; say what it most likely was instead of a bare exit code.
 */
export function killedFromOutside(supervised: Supervised, engine: EngineName): string | undefined {
  const { exit } = supervised;
  if (supervised.stoppedWith || exit.oomKilled) return undefined;
  if (exit.exitCode !== 137 && exit.signal !== 'SIGKILL') return undefined;
  return engine === 'process'
    ? 'the agent was killed with SIGKILL by something other than the daemon (often the kernel OOM killer): check the host memory and dmesg'
    : 'the agent was killed with SIGKILL (exit 137) by something other than the daemon, most likely the memory limit (docker.memory): raise docker.memory or check the engine events';
}

/** A skills cache of our own (none injected): periodic refresh starts with the first run that needs it. */
function ownSkillsCache(config: Config, log: Logger): SkillsCacheLike {
  const cache = new SkillsCache({ config, log });
  let started = false;
  return {
    acquire: () => {
      if (!started) {
        started = true;
        cache.start().catch((err: unknown) => log.error({ err: errorMessage(err) }, 'skills sync failed'));
      }
      return cache.acquire();
    },
    readiness: () => cache.readiness(),
  };
}

export function createRunExecutor(deps: ExecutorDeps): RunExecutor {
  const { config } = deps;
  const now = deps.now ?? (() => new Date());
  const daemonId = deps.daemonId ?? hostname();
  const agents = deps.agents ?? getAgent;
  const skills: SkillsCacheLike = deps.skills ?? ownSkillsCache(config, deps.log);
  const engines = new Map<string, Engine>();
  if (deps.engine) engines.set(deps.engine.name, deps.engine);
  /** Run ids that run() or adopt() is handling right now: the sweep never removes them. */
  const inFlight = new Set<string>();

  const engineFor = (name: EngineName): Engine => {
    let engine = engines.get(name);
    if (!engine) {
      engine = createEngine(name, { config, log: deps.log, env: deps.env });
      engines.set(name, engine);
    }
    return engine;
  };

  const auditFor =
    (request: Omit<RunRequest, 'attempt'>, log: Logger) =>
    async (type: AuditEventType, fields: Record<string, unknown> = {}): Promise<void> => {
      try {
        await deps.audit.append(path.join(request.workspace.dir, TRIAGE_DIR), {
          type,
          incidentId: request.workspace.incident.incidentId,
          runId: request.runId,
          ...fields,
        });
      } catch (err) {
        log.error({ err: errorMessage(err), type }, 'audit event could not be written');
      }
    };

  /** Streams agent output into the bundle's logs and keeps the tails for parseOutput. */
  const openOutput = (bundle: RunBundle) => {
    const stdoutLog = bundle.openLog(RUN_FILES.agentStdout);
    const stderrLog = bundle.openLog(RUN_FILES.agentStderr);
    const stdout = new TailBuffer(STDOUT_KEEP);
    const stderr = new TailBuffer(STDERR_KEEP);
    const state: { firstOutputAt?: Date } = {};
    const first = () => {
      state.firstOutputAt ??= now();
    };
    return {
      onStdout: (c: Buffer) => {
        first();
        stdout.push(c);
        stdoutLog.write(c);
      },
      onStderr: (c: Buffer) => {
        first();
        stderr.push(c);
        stderrLog.write(c);
      },
      stdout,
      stderr,
      state,
      close: () => Promise.all([stdoutLog, stderrLog].map((l) => l.close())),
    };
  };

  /** Supervised run → adapter outcome, report check, result.json and the `finished` event. */
  const collect = async (
    ctx: RunContext,
    supervised: Supervised,
    output: ReturnType<typeof openOutput>,
  ): Promise<RunOutcome> => {
    const started = performance.now();
    const { exit } = supervised;
    let outcome: AgentOutcome = ctx.adapter.parseOutput({
      exitCode: exit.exitCode,
      signal: exit.signal,
      timedOut: supervised.timedOut,
      stdout: output.stdout.text(),
      stderr: output.stderr.text(),
    });
    // The exit code is never masked, whatever the adapter read.
    outcome = { ...outcome, exitCode: exit.exitCode };
    // The report is the artifact people share: known secret values and token shapes are scrubbed from it.
    await scrubFile(ctx.reportHostPath, deps.redactor).catch((err: unknown) =>
      ctx.log.warn({ err, report: ctx.reportHostPath }, 'could not scrub secrets from the report'),
    );
    const report = await checkReport(
      ctx.reportHostPath,
      ctx.reportAgentPath,
      config.agent.min_report_bytes,
      config.agent.report_sections,
    );
    const engineError = exit.oomKilled
      ? `killed for memory (docker.memory ${config.docker.memory} bytes): raise docker.memory or lower what the agent loads`
      : (exit.error ?? killedFromOutside(supervised, ctx.engine.name));
    const v = verdict({
      timedOut: supervised.timedOut,
      interrupted: supervised.interrupted,
      outcome,
      report,
      minBytes: config.agent.min_report_bytes,
      ...(engineError ? { engineError } : {}),
    });
    const finishedAt = now();
    const result = buildResult({
      verdict: v,
      outcome,
      report,
      agent: ctx.agent,
      engine: ctx.engine.name,
      startedAt: ctx.startedAt,
      finishedAt,
      runId: ctx.request.runId,
      incidentId: ctx.request.workspace.incident.incidentId,
      ...(ctx.model ? { model: ctx.model } : {}),
      ...(ctx.promptSha256 ? { promptSha256: ctx.promptSha256 } : {}),
      ...(ctx.triageStatus ? { triageStatus: ctx.triageStatus } : {}),
      extra: {
        signal: exit.signal,
        oomKilled: exit.oomKilled,
        ...(supervised.stoppedWith ? { stoppedWith: supervised.stoppedWith } : {}),
        ...(exit.error ? { engineError: exit.error } : {}),
        output: { stdoutBytes: output.stdout.total, stderrBytes: output.stderr.total },
        // Time to the agent's first byte (compare shows it); not meaningful for an adopted run's replayed logs.
        ...(output.state.firstOutputAt && !ctx.adopted
          ? {
              firstOutputAt: output.state.firstOutputAt.toISOString(),
              firstOutputMs: output.state.firstOutputAt.getTime() - ctx.startedAt.getTime(),
            }
          : {}),
        ...(ctx.adopted ? { adopted: true } : {}),
      },
    });
    await ctx.bundle.writeJson(RUN_FILES.result, result);
    deps.metrics?.stage('collect', (performance.now() - started) / 1000);
    await ctx.audit('finished', {
      status: v.status,
      exitCode: exit.exitCode,
      agentStatus: outcome.status,
      durationMs: result.durationMs,
      ...(v.reason ? { reason: v.reason } : {}),
    });
    ctx.log.info(
      { status: v.status, exitCode: exit.exitCode, durationMs: result.durationMs, report: report.bytes },
      'agent run finished',
    );
    return { status: v.status, exitCode: exit.exitCode, ...(v.reason ? { reason: v.reason } : {}) };
  };

  /** A run that failed before or while launching: result.json says why, the outcome says whether to retry. */
  const failEarly = async (
    ctx: Partial<RunContext> & Pick<RunContext, 'request' | 'log' | 'audit' | 'startedAt'>,
    err: unknown,
    engineName: string,
    agent: string,
  ): Promise<RunOutcome> => {
    const transient = isTransient(err);
    const reason = errorMessage(err);
    ctx.log.error({ err: reason, transient }, 'agent run failed before it could finish');
    if (ctx.bundle) {
      const finishedAt = now();
      await ctx.bundle
        .writeJson(RUN_FILES.result, {
          status: 'failed',
          exitCode: null,
          agent,
          engine: engineName,
          startedAt: ctx.startedAt.toISOString(),
          finishedAt: finishedAt.toISOString(),
          durationMs: finishedAt.getTime() - ctx.startedAt.getTime(),
          tokens: { input: 0, output: 0 },
          report: { path: '', bytes: 0, missingSections: [] },
          runId: ctx.request.runId,
          incidentId: ctx.request.workspace.incident.incidentId,
          error: reason,
          transient,
        })
        .catch(() => undefined);
    }
    await ctx.audit('finished', { status: 'failed', reason, transient });
    return { status: 'failed', reason, exitCode: null, ...(transient ? { transient: true } : {}) };
  };

  const run = async (request: RunRequest): Promise<RunOutcome> => {
    inFlight.add(request.runId);
    try {
      return await runPipeline(request);
    } finally {
      inFlight.delete(request.runId);
    }
  };

  const runPipeline = async (request: RunRequest): Promise<RunOutcome> => {
    const startedAt = now();
    const overrides = request.overrides ?? {};
    const agent = overrides.agent ?? config.agent.name;
    const engineName = overrides.engine ?? config.engine;
    const model = overrides.model ?? config.agent.model;
    const log = request.log.child({ runId: request.runId, agent, engine: engineName });
    const audit = auditFor(request, log);
    const early: Partial<RunContext> & Pick<RunContext, 'request' | 'log' | 'audit' | 'startedAt'> = {
      request,
      log,
      audit,
      startedAt,
    };
    let snapshot: SkillsSnapshot | undefined;
    let hostHome: string | undefined;
    let handle: RunHandle | undefined;
    let engine: Engine | undefined;
    try {
      const bundle = await RunBundle.create(request.workspace.dir, request.runId, deps.redactor);
      early.bundle = bundle;
      await audit('preparing', {
        attempt: request.attempt,
        agent,
        engine: engineName,
        ...(model ? { model } : {}),
        ...(overrides.dryRun ? { dryRun: true } : {}),
      });
      const adapter = agents(agent);
      engine = engineFor(engineName);

      const skillsStarted = performance.now();
      snapshot = await skills.acquire();
      deps.metrics?.stage('skills', (performance.now() - skillsStarted) / 1000);
      await audit('skills_resolved', {
        sources: snapshot.sources.map((s) => ({ source: s.name, commit: s.commit })),
        unavailable: snapshot.unavailable,
      });

      const layout = runLayout({
        config,
        engine: engineName,
        workspaceDir: request.workspace.dir,
        runId: request.runId,
        bundleDir: bundle.dir,
        adapter,
        skills: snapshot,
        ...(overrides.pathPrepend ? { pathPrepend: overrides.pathPrepend, basePath: deps.env.PATH } : {}),
      });
      hostHome = layout.hostHome;
      await prepareWritable(
        { output: path.join(request.workspace.dir, OUTPUT_DIR), bundle: bundle.dir },
        engineName,
        config.docker.user,
      );
      await mkdir(layout.hostFilesDir, { recursive: true });

      // With skills.disable_triage_preload, prepare reports the triage as disabled.
      const triage = overrides.triage ?? { mode: 'run' as const };
      await audit('triage_started', { mode: triage.mode });
      const prepared = await prepareContext({
        config,
        workspace: request.workspace,
        agent,
        placement: adapter.placement,
        view: layout.view,
        bundle,
        skills: snapshot,
        log,
        triage,
        ...(overrides.subjects ? { subjects: overrides.subjects } : {}),
        ...(model ? { model } : {}),
        ...(deps.metrics ? { metrics: deps.metrics } : {}),
        signal: request.signal,
        ...(overrides.pathPrepend ? { pathPrepend: overrides.pathPrepend } : {}),
      });
      const t = prepared.context.triage;
      await audit('triage_finished', {
        status: t.status,
        ...(t.exitCode !== undefined ? { exitCode: t.exitCode } : {}),
        ...(t.durationMs !== undefined ? { durationMs: t.durationMs } : {}),
      });
      await audit('context_built', {
        totalTokens: prepared.context.totalTokens,
        promptSha256: prepared.promptSha256,
        incomplete: prepared.context.incomplete,
        overBudgetBy: prepared.context.overBudgetBy,
      });

      const launchStarted = performance.now();
      const invocation = adapter.buildInvocation({
        prompt: prepared.prompt,
        ...(model ? { model } : {}),
        maxTurns: config.agent.max_turns,
        extraArgs: config.agent.extra_args,
        paths: layout.paths,
        providers: providerSettings(config, deps.env),
        secrets: deps.secrets,
      });
      const fileMounts = await writeInvocationFiles(invocation, layout, engineName);
      const spec: LaunchSpec = {
        runId: request.runId,
        incidentId: request.workspace.incident.incidentId,
        labels: runLabels({
          daemonId,
          incidentId: request.workspace.incident.incidentId,
          runId: request.runId,
          agent,
        }),
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
      for (const value of Object.values(spec.secretEnv)) deps.redactor.add('agent secret', value);
      const launchedAt = now();
      await bundle.writeJson(
        RUN_FILES.invocation,
        invocationRecord({
          spec,
          engine: engineName,
          agent,
          ...(model ? { model } : {}),
          attempt: request.attempt,
          launchedAt,
          files: invocation.files,
          ...(hostHome ? { hostHome } : {}),
        }),
      );
      if (overrides.dryRun) {
        await audit('finished', {
          status: 'succeeded',
          dryRun: true,
          reason: 'dry run: prepared, not launched',
        });
        return {
          status: 'succeeded',
          reason: 'dry run: the context was prepared and the bundle written; the agent was not launched',
        };
      }
      if (request.signal.aborted) {
        await audit('finished', { status: 'interrupted', reason: 'daemon shutting down before launch' });
        return { status: 'interrupted', reason: 'the daemon shut down before the agent was launched' };
      }

      const output = openOutput(bundle);
      const ctx: RunContext = {
        request,
        log,
        bundle,
        engine,
        adapter,
        agent,
        ...(model ? { model } : {}),
        startedAt,
        reportHostPath: layout.hostReportPath,
        reportAgentPath: layout.paths.reportPath,
        promptSha256: prepared.promptSha256,
        triageStatus: t.status,
        audit,
      };
      let supervised: Supervised;
      try {
        handle = await engine.start({ ...spec, onStdout: output.onStdout, onStderr: output.onStderr });
        deps.metrics?.stage('launch', (performance.now() - launchStarted) / 1000);
        await audit('launched', {
          engine: engineName,
          id: handle.id,
          ...(engineName !== 'process' ? { image: spec.image } : {}),
        });
        log.info({ id: handle.id }, 'agent launched');
        supervised = await supervise({
          engine,
          handle,
          timeoutMs: config.agent.timeout,
          graceMs: config.agent.stop_grace,
          shutdownGraceMs: Math.min(
            config.agent.stop_grace,
            Math.floor(config.scheduling.shutdown_timeout / 3),
          ),
          signal: request.signal,
          log,
        });
        deps.metrics?.stage('agent', supervised.durationMs / 1000);
      } finally {
        await output.close();
      }
      return await collect(ctx, supervised, output);
    } catch (err) {
      return failEarly(early, err, engineName, agent);
    } finally {
      if (handle && engine && !config.docker.keep_containers) {
        await engine
          .remove(handle)
          .catch((err: unknown) =>
            log.error({ err: errorMessage(err), id: handle?.id }, 'could not remove the agent run'),
          );
      }
      snapshot?.release();
      if (hostHome) await rm(hostHome, { recursive: true, force: true }).catch(() => undefined);
    }
  };

  const adopt = async (request: Omit<RunRequest, 'attempt'>): Promise<RunOutcome | 'gone'> => {
    inFlight.add(request.runId);
    try {
      return await adoptRun(request);
    } finally {
      inFlight.delete(request.runId);
    }
  };

  const adoptRun = async (request: Omit<RunRequest, 'attempt'>): Promise<RunOutcome | 'gone'> => {
    const startedAt = now();
    const bundleDir = runDirOf(request.workspace.dir, request.runId);
    const record = await readFile(path.join(bundleDir, RUN_FILES.invocation), 'utf8').then(
      (t) =>
        JSON.parse(t) as {
          engine?: EngineName;
          agent?: AgentName;
          model?: string;
          launchedAt?: string;
          hostHome?: string;
        },
      () => undefined,
    );
    const engineName = record?.engine ?? request.overrides?.engine ?? config.engine;
    const log = request.log.child({ runId: request.runId, engine: engineName, adopted: true });
    const engine = engineFor(engineName);
    const found = await engine.list({ [RUN_LABELS.run]: request.runId });
    const info = found[0];
    if (!info) {
      log.info('run to adopt not found on the engine');
      return 'gone';
    }
    const audit = auditFor(request, log);
    const agent =
      (info.labels[RUN_LABELS.agent] as AgentName | undefined) ?? record?.agent ?? config.agent.name;
    const model = record?.model;
    await audit('adopted', { engine: engineName, id: info.handle.id, running: info.running });
    const bundle = new RunBundle(bundleDir, deps.redactor);
    try {
      const adapter = agents(agent);
      // Container engines replay the run's whole output from its start: the logs are rewritten. A process
      // engine cannot re-attach, so what the previous daemon wrote is kept.
      if (engine.name !== 'process') {
        await Promise.all(
          [RUN_FILES.agentStdout, RUN_FILES.agentStderr].map((f) => rm(bundle.path(f), { force: true })),
        );
      }
      const output = openOutput(bundle);
      const launchedAt = record?.launchedAt ? new Date(record.launchedAt) : startedAt;
      const remaining = info.running
        ? Math.max(1000, config.agent.timeout - (now().getTime() - launchedAt.getTime()))
        : EXITED_WAIT_MS;
      let supervised: Supervised;
      try {
        await engine.attach(info.handle, output.onStdout, output.onStderr);
        supervised = await supervise({
          engine,
          handle: info.handle,
          timeoutMs: remaining,
          graceMs: config.agent.stop_grace,
          shutdownGraceMs: Math.min(
            config.agent.stop_grace,
            Math.floor(config.scheduling.shutdown_timeout / 3),
          ),
          signal: request.signal,
          log,
        });
      } finally {
        await output.close();
      }
      const layoutReport = path.join(request.workspace.dir, OUTPUT_DIR, REPORT_FILE);
      const ctx: RunContext = {
        request,
        log,
        bundle,
        engine,
        adapter,
        agent,
        ...(model ? { model } : {}),
        startedAt: launchedAt,
        reportHostPath: layoutReport,
        reportAgentPath:
          engine.name === 'process'
            ? layoutReport
            : path.posix.join(CONTAINER_WORKSPACE, OUTPUT_DIR, REPORT_FILE),
        adopted: true,
        audit,
      };
      return await collect(ctx, supervised, output);
    } catch (err) {
      return failEarly({ request, log, audit, startedAt, bundle }, err, engineName, agent);
    } finally {
      if (!config.docker.keep_containers) {
        await engine
          .remove(info.handle)
          .catch((err: unknown) => log.error({ err: errorMessage(err) }, 'could not remove the adopted run'));
      }
      if (record?.hostHome)
        await rm(record.hostHome, { recursive: true, force: true }).catch(() => undefined);
    }
  };

  const readiness = async (): Promise<Readiness> => {
    const checks: Readiness['checks'] = [];
    try {
      await engineFor(config.engine).ping();
      checks.push({ name: `engine:${config.engine}`, ok: true });
    } catch (err) {
      checks.push({ name: `engine:${config.engine}`, ok: false, detail: errorMessage(err) });
    }
    try {
      const r = await skills.readiness();
      const missing = r.sources.filter((s) => !s.available);
      checks.push({
        name: 'skills',
        ok: r.ready,
        ...(missing.length
          ? { detail: missing.map((s) => `${s.name}: ${s.detail ?? 'unavailable'}`).join('; ') }
          : {}),
      });
    } catch (err) {
      checks.push({ name: 'skills', ok: false, detail: errorMessage(err) });
    }
    return { ok: checks.every((c) => c.ok), checks };
  };

  /**
   * Removes what earlier runs left on the engine when their removal failed (engine down at the time):
   * runs with our run label that are not running, not active and not in this executor's hands.
   */
  const sweep = async (activeRunIds: Iterable<string>): Promise<SweepResult> => {
    const result: SweepResult = { removed: [], failed: [] };
    const log = deps.log.child({ engine: config.engine });
    if (config.docker.keep_containers) return result;
    const active = new Set(activeRunIds);
    let engine: Engine;
    let found: RunInfo[];
    try {
      engine = engineFor(config.engine);
      found = await engine.list({});
    } catch (err) {
      log.warn({ err: errorMessage(err) }, 'start-up sweep could not list the engine runs');
      result.failed.push({ id: '', error: errorMessage(err) });
      return result;
    }
    const youngest = now().getTime() - SWEEP_MIN_AGE_MS;
    for (const info of found) {
      const runId = info.labels[RUN_LABELS.run];
      if (!runId || info.running || active.has(runId) || inFlight.has(runId)) continue;
      if (info.createdAt && info.createdAt.getTime() > youngest) continue;
      try {
        await engine.remove(info.handle);
        result.removed.push(info.handle.id);
        log.info(
          { id: info.handle.id, runId, incidentId: info.labels[RUN_LABELS.incident] },
          'removed a finished agent run left on the engine',
        );
      } catch (err) {
        result.failed.push({ id: info.handle.id, error: errorMessage(err) });
        log.warn(
          { err: errorMessage(err), id: info.handle.id, runId },
          'could not remove a left-over agent run',
        );
      }
    }
    return result;
  };

  return { run, adopt, readiness, sweep };
}
