import { isWaitTimeout } from '../engines/labels.js';
import type { Engine, RunExit, RunHandle, StopSignal } from '../engines/types.js';
import type { Logger } from '../log/logger.js';

// Supervision of one run: wait for it with a wall-clock deadline; past the deadline, or when the
// daemon shuts down, stop it gracefully (SIGINT lets an agent end its turn), then SIGTERM, then SIGKILL.

export const ESCALATION: StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGKILL'];
/** How long to wait for the engine to report the end of a run after SIGKILL. */
export const KILL_WAIT_MS = 15_000;

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

export async function supervise(input: SuperviseInput): Promise<Supervised> {
  const { engine, handle, log } = input;
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);

  const waitFor = (ms: number, abortable: boolean): Promise<Waited> => {
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<Waited>((resolve) => {
      if (!abortable) return;
      if (input.signal.aborted) return resolve({ kind: 'abort' });
      onAbort = () => resolve({ kind: 'abort' });
      input.signal.addEventListener('abort', onAbort, { once: true });
    });
    const waited = engine.wait(handle, Math.max(1, ms)).then(
      (exit): Waited => ({ kind: 'exit', exit }),
      (err: unknown): Waited => {
        if (isWaitTimeout(err)) return { kind: 'timeout' };
        throw err;
      },
    );
    return Promise.race([waited, aborted]).finally(() => {
      if (onAbort) input.signal.removeEventListener('abort', onAbort);
    });
  };

  const first = await waitFor(input.timeoutMs, true);
  if (first.kind === 'exit')
    return { exit: first.exit, timedOut: false, interrupted: false, durationMs: elapsed() };

  const timedOut = first.kind === 'timeout';
  const grace = timedOut ? input.graceMs : (input.shutdownGraceMs ?? input.graceMs);
  log.warn(
    { runId: handle.runId, id: handle.id, timeoutMs: input.timeoutMs, graceMs: grace },
    timedOut ? 'agent run timed out; stopping it' : 'daemon shutting down; stopping the agent run',
  );
  for (const sig of ESCALATION) {
    await engine.signal(handle, sig);
    const r = await waitFor(sig === 'SIGKILL' ? KILL_WAIT_MS : grace, false);
    if (r.kind === 'exit')
      return { exit: r.exit, timedOut, interrupted: !timedOut, stoppedWith: sig, durationMs: elapsed() };
    log.warn(
      { runId: handle.runId, signal: sig, waitedMs: sig === 'SIGKILL' ? KILL_WAIT_MS : grace },
      'agent still running after signal',
    );
  }
  return {
    exit: {
      exitCode: null,
      signal: 'SIGKILL',
      oomKilled: false,
      error: `run ${handle.id} did not end within ${KILL_WAIT_MS} ms of SIGKILL`,
    },
    timedOut,
    interrupted: !timedOut,
    stoppedWith: 'SIGKILL',
    durationMs: elapsed(),
  };
}
