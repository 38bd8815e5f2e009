import { keepRuns } from '../config/schema.js';
import { RUN_LABELS } from '../engines/labels.js';
import type { Engine, RunInfo } from '../engines/types.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';
import type { SweepResult } from './types.js';
import type { PipelineEnv } from './env.js';

/** The sweep spares runs younger than this: another daemon on the same engine may be starting them. */
export const SWEEP_MIN_AGE_MS = 60_000;

/**
 * Removes what earlier runs left on the engine when their removal failed (engine down at the time):
 * runs with our run label that are not running, not active and not in this executor's hands.
 */
export async function sweep(
  env: PipelineEnv,
  log: Logger,
  activeRunIds: Iterable<string>,
  inFlight: ReadonlySet<string>,
): Promise<SweepResult> {
  const { config } = env;
  const result: SweepResult = { removed: [], failed: [] };
  log = log.child({ engine: config.engine });
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
}
