import { isWaitTimeout } from '../engines/labels.js';
import type { Engine, RunExit, RunHandle, StopSignal } from '../engines/types.js';
import type { Logger } from '../log/logger.js';
import { errorMessage, isTransient } from '../util/errors.js';
import { escalate, gracefulSteps } from '../util/process-group.js';
import type { PipelineEnv } from './env.js';
import type { LaunchedRun } from './stages.js';

// Supervision of one run: wait for it with a wall-clock deadline; past the deadline, or when the
// daemon shuts down, stop it gracefully (SIGINT lets an agent end its turn), then SIGTERM, then SIGKILL.

/** How long to wait for the engine to report the end of a run after SIGKILL. */
export const KILL_WAIT_MS = 15_000;
/** Pause between attempts to reach an engine that stopped answering mid-run. */
export const ENGINE_RETRY_MS = 2_000;

export interface SuperviseInput {
  engine: Engine;
  handle: RunHandle;
  /** Wall-clock budget left for the run. */
  timeoutMs: number;
  /** Wait between SIGINT and SIGTERM, and between SIGTERM and SIGKILL. */
  graceMs: number;
  /** Grace used when stopping for shutdown (usually shorter, to fit the daemon's shutdown timeout). */
  shutdownGraceMs?: number;
  signal: AbortSignal;
  log: Logger;
  /** Pause between attempts to reach an engine that stopped answering (default ENGINE_RETRY_MS). */
  engineRetryMs?: number;
  /** How long to wait after SIGKILL (default KILL_WAIT_MS). */
  killWaitMs?: number;
}

export interface Supervised {
  exit: RunExit;
  timedOut: boolean;
  interrupted: boolean;
  /** The last signal sent, when the run had to be stopped. */
  stoppedWith?: StopSignal;
  durationMs: number;
}

type Waited = { kind: 'exit'; exit: RunExit } | { kind: 'timeout' } | { kind: 'abort' };

/**
 * Supervises one run. An engine that stops answering mid-run (a transient error) does not end the
 * supervision: the wait is retried until the deadline and the stop signals are still sent, so that the
 * timeout holds once the engine is back and the run is never given up while its agent may still run.
 */
export function supervise(input: SuperviseInput): Promise<Supervised> {
  return new Supervision(input).run();
}

/** One supervision: the wait with its deadline, then the stop escalation; notes an unreachable engine. */
class Supervision {
  private readonly started = performance.now();
  private engineError: string | undefined;
  private readonly retryMs: number;
  private readonly killWaitMs: number;

  constructor(private readonly input: SuperviseInput) {
    this.retryMs = input.engineRetryMs ?? ENGINE_RETRY_MS;
    this.killWaitMs = input.killWaitMs ?? KILL_WAIT_MS;
  }

  private elapsed(): number {
    return Math.round(performance.now() - this.started);
  }

  async run(): Promise<Supervised> {
    const first = await this.waitFor(this.input.timeoutMs, true);
    if (first.kind === 'exit')
      return { exit: first.exit, timedOut: false, interrupted: false, durationMs: this.elapsed() };
    return this.stop(first.kind === 'timeout');
  }

  /** Past the deadline or at shutdown: SIGINT, SIGTERM, SIGKILL, each given its time to end the run. */
  private async stop(timedOut: boolean): Promise<Supervised> {
    const { input } = this;
    const { engine, handle, log } = input;
    const grace = timedOut ? input.graceMs : (input.shutdownGraceMs ?? input.graceMs);
    log.warn(
      { runId: handle.runId, id: handle.id, timeoutMs: input.timeoutMs, graceMs: grace },
      timedOut ? 'agent run timed out; stopping it' : 'daemon shutting down; stopping the agent run',
    );
    let ended: RunExit | undefined;
    // Only the signals the engine can deliver (a Kubernetes Job has no SIGINT).
    const steps = gracefulSteps(grace, this.killWaitMs).filter((s) =>
      engine.capabilities.signals.includes(s.signal),
    );
    const stoppedWith = await escalate(
      steps,
      (sig) => this.send(sig),
      async (ms) => {
        const r = await this.waitFor(ms, false);
        if (r.kind === 'exit') ended = r.exit;
        return r.kind === 'exit';
      },
      (step) =>
        log.warn(
          { runId: handle.runId, signal: step.signal, waitedMs: step.waitMs },
          'agent still running after signal',
        ),
    );
    if (ended && stoppedWith)
      return { exit: ended, timedOut, interrupted: !timedOut, stoppedWith, durationMs: this.elapsed() };
    return {
      exit: {
        exitCode: null,
        signal: 'SIGKILL',
        oomKilled: false,
        error:
          `run ${handle.id} did not end within ${this.killWaitMs} ms of SIGKILL` +
          (this.engineError ? `; the engine did not answer: ${this.engineError}` : ''),
      },
      timedOut,
      interrupted: !timedOut,
      stoppedWith: 'SIGKILL',
      durationMs: this.elapsed(),
    };
  }

  private pause(ms: number, abortable: boolean): Promise<void> {
    const { signal } = this.input;
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      if (abortable) signal.addEventListener('abort', done, { once: true });
    });
  }

  /** Waits up to `ms`, retrying while the engine cannot be reached. */
  private async waitFor(ms: number, abortable: boolean): Promise<Waited> {
    const { handle, log, signal } = this.input;
    const deadline = performance.now() + ms;
    for (;;) {
      try {
        const left = Math.max(1, deadline - performance.now());
        return await this.waitOnce(left, abortable);
      } catch (err) {
        if (!isTransient(err)) throw err;
        this.engineError = errorMessage(err);
        const left = deadline - performance.now();
        log.warn(
          {
            runId: handle.runId,
            id: handle.id,
            err: this.engineError,
            retryInMs: this.retryMs,
            leftMs: Math.round(left),
          },
          'lost contact with the engine while waiting for the agent run; retrying',
        );
        if (left <= 0) return { kind: 'timeout' };
        await this.pause(Math.min(this.retryMs, left), abortable);
        if (abortable && signal.aborted) return { kind: 'abort' };
      }
    }
  }

  /** Sends a stop signal; an unreachable engine is logged and the escalation goes on. */
  private async send(sig: StopSignal): Promise<void> {
    const { engine, handle, log } = this.input;
    try {
      await engine.signal(handle, sig);
    } catch (err) {
      if (!isTransient(err)) throw err;
      this.engineError = errorMessage(err);
      log.warn({ runId: handle.runId, signal: sig, err: this.engineError }, 'could not signal the agent run');
    }
  }

  private waitOnce(ms: number, abortable: boolean): Promise<Waited> {
    const { engine, handle, signal } = this.input;
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<Waited>((resolve) => {
      if (!abortable) return;
      if (signal.aborted) return resolve({ kind: 'abort' });
      onAbort = () => resolve({ kind: 'abort' });
      signal.addEventListener('abort', onAbort, { once: true });
    });
    const waited = engine.wait(handle, Math.max(1, ms)).then(
      (exit): Waited => ({ kind: 'exit', exit }),
      (err: unknown): Waited => {
        if (isWaitTimeout(err)) return { kind: 'timeout' };
        throw err;
      },
    );
    return Promise.race([waited, aborted]).finally(() => {
      if (onAbort) signal.removeEventListener('abort', onAbort);
    });
  }
}

/**
 * The supervise stage: follows a launched (or adopted) run until it ends, within the time it has left,
 * then stops following its progress and closes its output (the logs are complete for collect).
 */
export async function superviseRun(env: PipelineEnv, run: LaunchedRun): Promise<Supervised> {
  const { config } = env;
  try {
    const supervised = await supervise({
      engine: run.engine,
      handle: run.handle,
      timeoutMs: run.timeoutMs,
      graceMs: config.agent.stop_grace,
      shutdownGraceMs: Math.min(config.agent.stop_grace, Math.floor(config.scheduling.shutdown_timeout / 3)),
      signal: run.request.signal,
      log: run.log,
    });
    if (run.origin.kind === 'launched') env.metrics?.stage('agent', supervised.durationMs / 1000);
    return supervised;
  } finally {
    run.progress.stop();
    await run.output.close();
  }
}
