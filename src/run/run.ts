import { RunBundle } from '../workspace/bundle.js';
import type { Logger } from '../log/logger.js';
import type { RunOutcome, RunRequest } from './types.js';
import { findOrphan, reattach } from './adopt.js';
import { RunCleanup } from './cleanup.js';
import { chooseCluster } from './cluster.js';
import { clusterAccess } from './access.js';
import { collect } from './collect.js';
import type { AuditFn, PipelineEnv } from './env.js';
import { failEarly, type FailureSource } from './fail-early.js';
import { launch, planLaunch, StartNotReady, type LaunchPlan } from './launch.js';
import type { PreparedRun, RunStart } from './stages.js';
import { superviseRun } from './supervise.js';

// One run through the stages: prepare → launch → supervise → collect, and adoption re-entering at
// launched. What the stages acquire is released at the end whatever stage the run stopped at.

export type AuditFactory = (request: Omit<RunRequest, 'attempt'>) => (log: Logger) => AuditFn;

/** A run as it begins (RunStart): its agent, engine, model and cluster chosen from the request and the configuration. */
export function begin(env: PipelineEnv, request: RunRequest, auditFor: AuditFactory): RunStart {
  const { config } = env;
  const overrides = request.overrides ?? {};
  const agent = overrides.agent ?? config.agent.name;
  const engineName = overrides.engine ?? config.engine;
  const log = request.log.child({ agent, engine: engineName });
  return {
    request,
    log,
    audit: auditFor(request)(log),
    agent,
    engineName,
    model: overrides.model ?? config.agent.model,
    startedAt: env.now(),
    cluster: chooseCluster(env, request),
  };
}

export async function runPipeline(
  env: PipelineEnv,
  request: RunRequest,
  auditFor: AuditFactory,
): Promise<RunOutcome> {
  const start = begin(env, request, auditFor);
  const cleanup = new RunCleanup(start.log);
  let bundle: RunBundle | undefined;
  let source: FailureSource;
  try {
    // An engine that does not answer is waited for: no preparation (triage) is wasted on it.
    source = 'engine';
    await (await env.engineFor(start.engineName)).ping();
    source = undefined;
    const access = await clusterAccess(env, start);
    if (access) start.access = access;
    bundle = await RunBundle.create(request.workspace.dir, request.runId, env.redactor);
    // The context pipeline (tokenizer, disclosure, triage) loads with the first run, not at start-up.
    const { prepare } = await import('./prepare.js');
    const prepared = await prepare(env, start, bundle, cleanup);
    const plannedAt = performance.now();
    const plan = await planLaunch(env, prepared, cleanup);
    const early = await notLaunched(prepared, plan);
    if (early) return early;
    source = 'engine';
    const launched = await launch(env, prepared, plan, cleanup, plannedAt);
    source = undefined;
    return await collect(env, launched, await superviseRun(env, launched));
  } catch (err) {
    // What the run readied for the start failed, not the engine: said as its own error.
    if (err instanceof StartNotReady) return failEarly(env, start, bundle, err.cause);
    return failEarly(env, start, bundle, err, source);
  } finally {
    await cleanup.run();
  }
}

/** A dry run ends once prepared (its records written); a daemon shutting down launches nothing more. */
async function notLaunched(run: PreparedRun, plan: LaunchPlan): Promise<RunOutcome | undefined> {
  const dryRun = run.request.overrides?.dryRun === true;
  const aborted = run.request.signal.aborted;
  if (!dryRun && !aborted) return undefined;
  await plan.records;
  if (dryRun) {
    await run.audit('finished', {
      status: 'succeeded',
      dryRun: true,
      reason: 'dry run: prepared, not launched',
    });
    return {
      status: 'succeeded',
      reason: 'dry run: the context was prepared and the bundle written; the agent was not launched',
    };
  }
  await run.audit('finished', { status: 'interrupted', reason: 'daemon shutting down before launch' });
  return { status: 'interrupted', reason: 'the daemon shut down before the agent was launched' };
}

/** A run a dead daemon launched: found on the engine, re-entered as launched, supervised and collected. */
export async function adoptRun(
  env: PipelineEnv,
  request: Omit<RunRequest, 'attempt'>,
  auditFor: AuditFactory,
): Promise<RunOutcome | 'gone'> {
  const cleanup = new RunCleanup(request.log);
  try {
    const orphan = await findOrphan(env, request, auditFor(request), cleanup);
    if (orphan === 'gone') return 'gone';
    try {
      const launched = await reattach(env, orphan, cleanup);
      return await collect(env, launched, await superviseRun(env, launched));
    } catch (err) {
      return await failEarly(env, orphan.start, orphan.bundle, err);
    }
  } finally {
    await cleanup.run();
  }
}
