import type { Logger } from '../log/logger.js';
import { errorMessage } from '../util/errors.js';

// What a run holds until it ends (a skills snapshot, the kubectl broker, a per-run HOME, the agent's
// container), released in reverse order of acquisition whichever stage the run stopped at. Each stage
// registers what it acquires as it acquires it, so a failure halfway through a stage leaks nothing.

export class RunCleanup {
  private readonly steps: { what: string; release: () => Promise<unknown> | void }[] = [];

  constructor(private readonly log: Logger) {}

  /** Registers a release, run at the end (latest first). */
  defer(what: string, release: () => Promise<unknown> | void): void {
    this.steps.push({ what, release });
  }

  /** Runs every release, latest first; one that throws is logged and the rest still run. */
  async run(): Promise<void> {
    for (let step = this.steps.pop(); step; step = this.steps.pop()) {
      try {
        await step.release();
      } catch (err) {
        this.log.error({ err: errorMessage(err), what: step.what }, 'could not release what the run held');
      }
    }
  }
}
