import { earlyResult, writeRunResult, type RunResult } from '../workspace/run-record.js';
import type { RunBundle } from '../workspace/bundle.js';
import { errorMessage, isTransient } from '../util/errors.js';
import type { RunOutcome } from './types.js';
import type { PipelineEnv } from './env.js';
import { clusterOf } from './collect.js';
import { recordedFiles } from './result.js';
import type { RunStart } from './stages.js';

// A run that failed before its agent ran to the end (an engine that does not answer, a broken persona,
// a start refused): result.json says why when the bundle exists, and the outcome says whether to retry
// or to wait for the engine.

/** Where a failure came from, when the run should wait for it instead of burning an attempt. */
export type FailureSource = 'engine' | undefined;

/** A run that failed before or while launching: result.json says why, the outcome whether to retry. */
export async function failEarly(
  env: PipelineEnv,
  start: RunStart,
  bundle: RunBundle | undefined,
  err: unknown,
  source?: FailureSource,
): Promise<RunOutcome> {
  const transient = isTransient(err);
  const reason = errorMessage(err);
  const waitFor = transient && source === 'engine' ? 'the container engine' : undefined;
  start.log.error(
    { err: reason, transient, ...(waitFor ? { waitFor } : {}) },
    'agent run failed before it could finish',
  );
  let result: RunResult | undefined;
  if (bundle) {
    result = earlyResult({
      status: 'failed',
      agent: start.agent,
      engine: start.engineName,
      startedAt: start.startedAt,
      finishedAt: env.now(),
      runId: start.request.runId,
      incidentId: start.request.workspace.incident.incidentId,
      error: reason,
      transient,
      ...(waitFor ? { waitFor } : {}),
    });
    const cluster = clusterOf(start);
    if (cluster) result.cluster = cluster;
    await writeRunResult(bundle, result).catch(() => undefined);
  }
  await start.audit('finished', {
    status: 'failed',
    reason,
    transient,
    ...(waitFor ? { waitFor } : {}),
    ...(bundle ? await recordedFiles(bundle.dir) : {}),
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
