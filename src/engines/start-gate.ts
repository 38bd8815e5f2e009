import type { RunSpec } from './types.js';

/**
 * A run's `beforeStart`, begun when the engine's `start` begins. `passed()` is awaited right before the
 * agent's process starts; a `start` that fails before that awaits `settled()` first, so the caller's
 * clean-up never races what `beforeStart` is still opening. Its failure is held until then, never
 * reported as unhandled.
 */
export class StartGate {
  private readonly pending: Promise<void> | undefined;

  constructor(beforeStart: RunSpec['beforeStart']) {
    // Called in a promise chain: a beforeStart that throws at once is a rejection like any other.
    this.pending = beforeStart ? Promise.resolve().then(beforeStart) : undefined;
    this.pending?.catch(() => undefined);
  }

  /** Resolves once `beforeStart` has (at once without one); rejects with its error. */
  passed(): Promise<void> {
    return this.pending ?? Promise.resolve();
  }

  /** Resolves once `beforeStart` has ended, whichever way. */
  async settled(): Promise<void> {
    await this.pending?.catch(() => undefined);
  }
}
