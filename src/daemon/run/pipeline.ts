import { hostname } from 'node:os';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { getAgent } from '../../agents/index.js';
import type { SkillsCache } from '../../context/skills-cache.js';
import type { AgentAdapter } from '../../agents/types.js';
import { TRIAGE_DIR } from '../../audit/bundle.js';
import type { AuditEventType, AuditLog } from '../../audit/log.js';
import { keepRuns, type AgentName, type Config, type EngineName } from '../../config/schema.js';
import { createEngine } from '../../engines/index.js';
import { RUN_LABELS } from '../../engines/labels.js';
import type { Engine, RunHandle, RunInfo } from '../../engines/types.js';
import type { Logger } from '../../log/logger.js';
import type { Redactor } from '../../log/redact.js';
import { errorMessage } from '../../util/errors.js';
import type {
  PipelineMetrics,
  Readiness,
  RunExecutor,
  RunOutcome,
  RunRequest,
  SweepResult,
} from '../types.js';
import { adoptRun } from './adopt.js';
import type { AuditFn, PipelineEnv, RunContext, SkillsCacheLike } from './context.js';
import { collectRun, failEarly, type FailureSource } from './finish.js';
import { planLaunch, startAgent } from './launch.js';
import { openOutput } from './output.js';
import { prepareRun } from './prepare.js';
import { supervise } from './supervise.js';

// The run pipeline: prepare (skills, triage, context, prompt) → launch (adapter + engine) → supervise
// (timeout, shutdown) → collect (exit, usage, report) → result.json and the `finished` event. The daemon
// records the state transitions; this module reports its stages through `request.onStage`.

export type { SkillsCacheLike } from './context.js';

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

/** The sweep spares runs younger than this: another daemon on the same engine may be starting them. */
export const SWEEP_MIN_AGE_MS = 60_000;

/** A skills cache of our own (none injected): loaded when first needed, its refresh timer stopped at close. */
function ownSkillsCache(config: Config, log: Logger): SkillsCacheLike {
  let cache: Promise<SkillsCache> | undefined;
  const open = () => {
    cache ??= import('../../context/skills-cache.js').then(({ SkillsCache }) => {
      const c = new SkillsCache({ config, log });
      c.start().catch((err: unknown) => log.error({ err: errorMessage(err) }, 'skills sync failed'));
      return c;
    });
    return cache;
  };
  return {
    acquire: async () => (await open()).acquire(),
    readiness: async () => (await open()).readiness(),
    stop: async () => (await cache)?.stop(),
  };
}

export function createRunExecutor(deps: ExecutorDeps): RunExecutor {
  const { config } = deps;
  const engines = new Map<string, Promise<Engine>>();
  if (deps.engine) engines.set(deps.engine.name, Promise.resolve(deps.engine));
  /** Run ids that run() or adopt() is handling right now: the sweep never removes them. */
  const inFlight = new Set<string>();
  const env: PipelineEnv = {
    config,
    redactor: deps.redactor,
    secrets: deps.secrets,
    env: deps.env,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    now: deps.now ?? (() => new Date()),
    daemonId: deps.daemonId ?? hostname(),
    agents: deps.agents ?? getAgent,
    skills: deps.skills ?? ownSkillsCache(config, deps.log),
    engineFor: (name: EngineName): Promise<Engine> => {
      let engine = engines.get(name);
      if (!engine) {
        engine = createEngine(name, { config, log: deps.log, env: deps.env });
        // A failed creation (bad configuration) is reported, and tried again next time.
        engine.catch(() => engines.delete(name));
        engines.set(name, engine);
      }
      return engine;
    },
  };

  const auditFor =
    (request: Omit<RunRequest, 'attempt'>) =>
    (log: Logger): AuditFn =>
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

  const tracked = async <T>(runId: string, work: () => Promise<T>): Promise<T> => {
    inFlight.add(runId);
    try {
      return await work();
    } finally {
      inFlight.delete(runId);
    }
  };

  const runPipeline = async (request: RunRequest): Promise<RunOutcome> => {
    const overrides = request.overrides ?? {};
    const agent = overrides.agent ?? config.agent.name;
    const engineName = overrides.engine ?? config.engine;
    const model = overrides.model ?? config.agent.model;
    const log = request.log.child({ agent, engine: engineName });
    const ctx: RunContext = {
      request,
      log,
      startedAt: env.now(),
      agent,
      engineName,
      ...(model ? { model } : {}),
      audit: auditFor(request)(log),
    };
    let handle: RunHandle | undefined;
    let stage: FailureSource;
    try {
      // An engine that does not answer is waited for: no preparation (triage) is wasted on it.
      stage = 'engine';
      await (await env.engineFor(engineName)).ping();
      stage = undefined;
      const prepared = await prepareRun(env, ctx);
      const plannedAt = performance.now();
      const spec = await planLaunch(env, ctx, prepared);
      if (overrides.dryRun) {
        await ctx.audit('finished', {
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
        await ctx.audit('finished', { status: 'interrupted', reason: 'daemon shutting down before launch' });
        return { status: 'interrupted', reason: 'the daemon shut down before the agent was launched' };
      }
      const output = openOutput(ctx.bundle as NonNullable<RunContext['bundle']>, env.now);
      let supervised;
      try {
        stage = 'engine';
        handle = await startAgent(env, ctx, spec, output, plannedAt);
        stage = undefined;
        log.info({ id: handle.id }, 'agent launched');
        supervised = await supervise({
          engine: ctx.engine as Engine,
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
        env.metrics?.stage('agent', supervised.durationMs / 1000);
      } finally {
        await output.close();
      }
      return await collectRun(env, ctx, {
        supervised,
        output,
        report: { hostPath: prepared.layout.hostReportPath, agentPath: prepared.layout.paths.reportPath },
        promptSha256: prepared.context.promptSha256,
        triageStatus: prepared.context.context.triage.status,
      });
    } catch (err) {
      return failEarly(env, ctx, err, stage);
    } finally {
      await cleanup(ctx, handle);
    }
  };

  const cleanup = async (ctx: RunContext, handle: RunHandle | undefined): Promise<void> => {
    if (handle && ctx.engine && !keepRuns(config)) {
      await ctx.engine
        .remove(handle)
        .catch((err: unknown) =>
          ctx.log.error({ err: errorMessage(err), id: handle.id }, 'could not remove the agent run'),
        );
    }
    ctx.snapshot?.release();
    await ctx.guard?.stop();
    if (ctx.hostHome) await rm(ctx.hostHome, { recursive: true, force: true }).catch(() => undefined);
  };

  const readiness = async (): Promise<Readiness> => {
    const checks: Readiness['checks'] = [];
    try {
      await (await env.engineFor(config.engine)).ping();
      checks.push({ name: `engine:${config.engine}`, ok: true });
    } catch (err) {
      checks.push({ name: `engine:${config.engine}`, ok: false, detail: errorMessage(err) });
    }
    try {
      const r = await env.skills.readiness();
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
    if (keepRuns(config)) return result;
    const active = new Set(activeRunIds);
    let engine: Engine;
    let found: RunInfo[];
    try {
      engine = await env.engineFor(config.engine);
      found = await engine.list({});
    } catch (err) {
      log.warn({ err: errorMessage(err) }, 'start-up sweep could not list the engine runs');
      result.failed.push({ id: '', error: errorMessage(err) });
      return result;
    }
    const youngest = env.now().getTime() - SWEEP_MIN_AGE_MS;
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

  const close = async (): Promise<void> => {
    const results = await Promise.allSettled([
      ...[...engines.values()].map(async (e) => (await e).close()),
      Promise.resolve(env.skills.stop?.()),
    ]);
    for (const r of results)
      if (r.status === 'rejected')
        deps.log.warn({ err: errorMessage(r.reason) }, 'closing the run pipeline failed');
  };

  return {
    run: (request) => tracked(request.runId, () => runPipeline(request)),
    adopt: (request) => tracked(request.runId, () => adoptRun(env, request, auditFor(request))),
    readiness,
    sweep,
    close,
  };
}
