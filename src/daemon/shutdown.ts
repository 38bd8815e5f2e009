import type { Config } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';
import { settledWithin } from './lifecycle.js';
import type { RunSlot } from './run-slot.js';

// Stopping the runs at shutdown: wait up to shutdown_timeout (logging the countdown), then abort them
// (the pipeline escalates SIGINT → SIGTERM → SIGKILL), and record the ones that ignore even that.

type ShutdownConfig = Pick<Config, 'scheduling' | 'agent'>;

/**
 * How long runs still going at shutdown_timeout get to stop once aborted: the pipeline escalates
 * SIGINT → SIGTERM → SIGKILL with stop_grace between, so both steps and a second are allowed for.
 */
export const interruptGraceMs = (config: ShutdownConfig): number => config.agent.stop_grace * 2 + 1000;

/**
 * The longest drainRuns can take: shutdown_timeout, then the interrupt grace. What an orchestrator's
 * stop timeout (Kubernetes terminationGracePeriodSeconds) must exceed, with room for the state writes
 * and the HTTP close that follow.
 */
export const worstCaseDrainMs = (config: ShutdownConfig): number =>
  config.scheduling.shutdown_timeout + interruptGraceMs(config);

export async function drainRuns(
  active: Map<string, RunSlot>,
  config: ShutdownConfig,
  log: Logger,
  now: () => number,
): Promise<void> {
  const timeoutMs = config.scheduling.shutdown_timeout;
  const deadline = now() + timeoutMs;
  const countdown = setInterval(() => {
    if (active.size > 0)
      log.info(
        { runs: active.size, leftMs: Math.max(0, deadline - now()) },
        'shutdown: waiting for in-flight runs',
      );
  }, 5000);
  countdown.unref();
  try {
    log.info({ inFlight: active.size, timeoutMs }, 'intake stopped, waiting for in-flight runs');
    if (
      await settledWithin(
        [...active.values()].map((r) => r.done),
        timeoutMs,
      )
    )
      return;
    const left = [...active.values()];
    log.warn(
      { runs: left.map((r) => r.runId), timeoutMs },
      `in-flight runs did not finish within ${timeoutMs} ms; interrupting them`,
    );
    for (const run of left)
      run.controller.abort(new Error(`daemon shutdown: runs did not finish within ${timeoutMs} ms`));
    const graceMs = interruptGraceMs(config);
    if (
      await settledWithin(
        left.map((r) => r.done),
        graceMs,
      )
    )
      return;
    log.error(
      { runs: [...active.values()].map((r) => r.runId), graceMs },
      `runs did not stop within ${graceMs} ms of being interrupted; recording them interrupted`,
    );
    await Promise.allSettled([...active.values()].map((run) => run.interruptUnstopped()));
  } finally {
    clearInterval(countdown);
  }
}

/**
 * SIGTERM/SIGINT stop gracefully; a second one during shutdown forces it: runs still going are
 * recorded interrupted (the next start adopts them) and the process exits.
 */
export function onSignals(
  proc: NodeJS.Process,
  log: Logger,
  timeoutMs: number,
  stop: () => void,
  force: () => Promise<unknown>,
): () => void {
  let received = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    received++;
    if (received === 1) {
      log.info({ signal, timeoutMs }, 'signal received, shutting down (send it again to force)');
      return stop();
    }
    log.warn({ signal }, 'second signal: forcing shutdown now');
    void force().then(() => proc.exit(130));
  };
  proc.on('SIGTERM', onSignal);
  proc.on('SIGINT', onSignal);
  return () => {
    proc.off('SIGTERM', onSignal);
    proc.off('SIGINT', onSignal);
  };
}

/** Runs each closing step in order; a step that fails is logged and the next one runs all the same. */
export async function closeInOrder(steps: [string, () => Promise<unknown>][], log: Logger): Promise<void> {
  for (const [step, close] of steps) {
    try {
      await close();
    } catch (err) {
      log.error({ step, err: errorMessage(err) }, 'shutdown step failed; going on with the next');
    }
  }
}
