import { hostname } from 'node:os';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { SkillsCache } from '../../context/skills-cache.js';
import type { AgentAdapter } from '../../agents/types.js';
import { TRIAGE_DIR } from '../../audit/bundle.js';
import type { AuditEventType, AuditLog } from '../../audit/log.js';
import { keepRuns, type AgentName, type Config, type EngineName } from '../../config/schema.js';
import { createEngine } from '../../engines/index.js';
import { createGatewayHost, providerOfAgent } from '../../gateway/host.js';
import { resolveCommand } from '../../util/process.js';
import { RUN_LABELS } from '../../engines/labels.js';
import type { Engine, RunHandle, RunInfo } from '../../engines/types.js';
import type { RunProgress } from '../../incident/types.js';
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
import { ProgressTracker } from './progress.js';
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
  const gateway = config.gateway.enabled
    ? createGatewayHost({
        config,
        secrets: deps.secrets,
        env: deps.env,
        ...(deps.now ? { now: deps.now } : {}),
        onCap: (cap) => deps.metrics?.modelCapReached?.(cap.cap),
        onRetry: (provider) => deps.metrics?.modelRetry?.(provider),
      })
    : undefined;
  const env: PipelineEnv = {
    ...(gateway ? { gateway } : {}),
    config,
    redactor: deps.redactor,
    secrets: deps.secrets,
    env: deps.env,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    now: deps.now ?? (() => new Date()),
    daemonId: deps.daemonId ?? hostname(),
    // The adapters (and their settings writers) load with the first run, not at start-up.
    agents: deps.agents ?? (async (name) => (await import('../../agents/index.js')).getAgent(name)),
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

  /**
   * A run's audit events: appended in order without waiting for each (the log writes those that queue up
   * together); the `finished` event waits until every event before it is durable.
   */
  const auditFor =
    (request: Omit<RunRequest, 'attempt'>) =>
    (log: Logger): AuditFn => {
      const pending = new Set<Promise<void>>();
      return (type: AuditEventType, fields: Record<string, unknown> = {}): Promise<void> => {
        const written = deps.audit
          .append(path.join(request.workspace.dir, TRIAGE_DIR), {
            type,
            incidentId: request.workspace.incident.incidentId,
            runId: request.runId,
            ...fields,
          })
          .then(
            () => undefined,
            (err: unknown) => log.error({ err: errorMessage(err), type }, 'audit event could not be written'),
          );
        pending.add(written);
        void written.then(() => pending.delete(written));
        return type === 'finished' ? Promise.all([...pending]).then(() => undefined) : Promise.resolve();
      };
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
      // The context pipeline (tokenizer, disclosure, triage) loads with the first run, not at start-up.
      const { prepareRun } = await import('./prepare.js');
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
      const progress = new ProgressTracker(ctx.adapter?.progress?.(), env.now(), env.now);
      const report = (p: RunProgress) => void request.onStage?.({ type: 'progress', progress: p });
      // The credentials were refused: stop the agent now instead of letting its CLI retry for minutes.
      const stopForAuth = () => {
        if (handle && ctx.engine) void ctx.engine.signal(handle, 'SIGTERM').catch(() => undefined);
      };
      const output = openOutput(ctx.bundle as NonNullable<RunContext['bundle']>, env.now, (chunk, stream) => {
        if (stream !== 'stdout') return;
        const update = progress.push(chunk);
        if (!update) return;
        report(progress.snapshot());
        if (update.authFailure) {
          log.warn(
            { reason: update.authFailure },
            'the model API refused the credentials; stopping the agent',
          );
          stopForAuth();
        }
      });
      let supervised;
      try {
        stage = 'engine';
        handle = await startAgent(env, ctx, spec, output, plannedAt);
        stage = undefined;
        log.info({ id: handle.id }, 'agent launched');
        if (progress.authFailure) stopForAuth();
        progress.beat(report, log);
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
        progress.stop();
        await output.close();
      }
      return await collectRun(env, ctx, {
        supervised,
        output,
        report: { hostPath: prepared.layout.hostReportPath, agentPath: prepared.layout.paths.reportPath },
        promptSha256: prepared.context.promptSha256,
        triageStatus: prepared.context.context.triage.status,
        ...(progress.authFailure ? { authFailure: progress.authFailure } : {}),
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
    await ctx.gateway?.stop();
    if (ctx.hostHome) await rm(ctx.hostHome, { recursive: true, force: true }).catch(() => undefined);
  };

  /**
   * Can an incident run now? The engine answers; the agent can start there (the image exists, or the CLI
   * is on PATH); its API key is set. Skills that cannot be fetched leave the daemon ready but degraded:
   * runs go on without them.
   */
  const readiness = async (): Promise<Readiness> => {
    const checks: Readiness['checks'] = [];
    const check = async (name: string, probe: () => Promise<string | undefined>) => {
      try {
        const problem = await probe();
        checks.push({ name, ok: problem === undefined, ...(problem ? { detail: problem } : {}) });
      } catch (err) {
        checks.push({ name, ok: false, detail: errorMessage(err) });
      }
    };
    const engine = await env.engineFor(config.engine).catch((err: unknown) => err as Error);
    await check(`engine:${config.engine}`, async () => {
      if (engine instanceof Error) throw engine;
      await engine.ping();
      return undefined;
    });
    if (!(engine instanceof Error)) await check('agent', () => agentProblem(engine));
    await check('api-key', async () => keyProblem(await env.agents(config.agent.name)));
    await modelCheck(checks);
    try {
      const r = await env.skills.readiness();
      const missing = r.sources.filter((s) => !s.available);
      checks.push({
        name: 'skills',
        ok: true,
        ...(missing.length
          ? {
              degraded: true,
              detail: `runs go on without: ${missing.map((s) => `${s.name}: ${s.detail ?? 'unavailable'}`).join('; ')}`,
            }
          : {}),
      });
    } catch (err) {
      checks.push({ name: 'skills', ok: true, degraded: true, detail: errorMessage(err) });
    }
    return { ok: checks.every((c) => c.ok), degraded: checks.some((c) => c.degraded), checks };
  };

  /** Why the configured agent cannot start on `engine`, or undefined. */
  const agentProblem = async (engine: Engine): Promise<string | undefined> => {
    const image = config.agent.image;
    if (engine.placement === 'container') {
      if (engine.hasImage && !(await engine.hasImage(image)))
        return `agent image ${image} is not on the ${engine.name} engine: build it with \`docker build -t ${image} runners/\` (offline: \`bash .ci/build-agent-image.sh\`), or set agent.image`;
      return undefined;
    }
    const command = config.agent.command ?? config.agent.name;
    if (await resolveCommand(command, deps.env.PATH)) return undefined;
    return `agent CLI ${command} is not on the daemon's PATH: install it (npm install -g ${(await env.agents(config.agent.name)).npmPackage ?? command}) or set agent.command to its path`;
  };

  /**
   * The provider answers through the gateway with the configured key (its models listing): a refused
   * key makes the daemon not ready; a provider that cannot be reached leaves it ready but degraded.
   */
  const modelCheck = async (checks: Readiness['checks']): Promise<void> => {
    const provider = providerOfAgent(
      config.agent.name,
      config.providers.goose_provider ?? deps.env.GOOSE_PROVIDER,
    );
    if (!gateway || !provider) return;
    const problem = await gateway.preflight(provider);
    if (!problem)
      checks.push({ name: 'model-gateway', ok: true, detail: `${provider} answers through the gateway` });
    else if (/refused the configured key|has no /.test(problem))
      checks.push({ name: 'model-gateway', ok: false, detail: problem });
    else checks.push({ name: 'model-gateway', ok: true, degraded: true, detail: problem });
  };

  /** Why the configured agent has no API key, or undefined. */
  const keyProblem = (adapter: AgentAdapter): string | undefined => {
    const keys =
      adapter.authSecrets?.({ gooseProvider: config.providers.goose_provider ?? deps.env.GOOSE_PROVIDER }) ??
      [];
    if (keys.length === 0 || keys.some((k) => deps.secrets[k])) return undefined;
    return `agent ${adapter.id} needs ${keys.join(' or ')}, which is not set: set the variable (or the secret configured for it under secrets:) where the daemon runs`;
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
      gateway?.close(),
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
