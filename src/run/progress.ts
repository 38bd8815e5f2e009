import type { ProgressReader, ProgressUpdate } from '../agents/shared/progress.js';
import type { RunProgress } from '../workspace/state.js';
import type { Logger } from '../log/logger.js';

// A run's progress while the agent works: what its CLI's event stream says (turns, tokens, last tool),
// the elapsed time, a heartbeat in the log, and the first sign that the model API refused the key.

const REPORT_EVERY_MS = 5_000;
const LOG_EVERY_MS = 60_000;

export class ProgressTracker {
  private turns = 0;
  private tokens = { input: 0, output: 0 };
  private lastTool: string | undefined;
  /** Tokens come from the model gateway once it has seen a call: the same source for every CLI. */
  private fromGateway = false;
  /** The CLI's latest model API retry, until a turn shows it got through. */
  private retrying: string | undefined;
  private timers: NodeJS.Timeout[] = [];
  /** Set when the CLI's events show the credentials were refused. */
  authFailure: string | undefined;

  constructor(
    private readonly reader: ProgressReader | undefined,
    private readonly startedAt: Date,
    private readonly now: () => Date,
  ) {}

  snapshot(): RunProgress {
    const now = this.now();
    return {
      turns: this.turns,
      tokens: { ...this.tokens },
      ...(this.lastTool ? { lastTool: this.lastTool } : {}),
      ...(this.retrying ? { retrying: this.retrying } : {}),
      elapsedMs: now.getTime() - this.startedAt.getTime(),
      updatedAt: now.toISOString(),
    };
  }

  /** A chunk of the agent's stdout; returns what changed. */
  push(chunk: Buffer): ProgressUpdate | undefined {
    const update = this.reader?.push(chunk);
    if (!update) return undefined;
    if (update.turns !== undefined) {
      this.turns = update.turns;
      this.retrying = undefined;
    }
    if (update.retrying) this.retrying = update.retrying;
    if (update.tokens && !this.fromGateway) this.tokens = update.tokens;
    if (update.lastTool) this.lastTool = update.lastTool;
    if (update.authFailure) this.authFailure ??= update.authFailure;
    return update;
  }

  /**
   * The run's totals at the model gateway after a call: its tokens replace the CLI's own reading; its
   * call count stands for the turns of a CLI that reports none (Goose).
   */
  gateway(totals: { calls: number; tokens: { input: number; output: number } }): void {
    this.fromGateway = true;
    this.tokens = { input: totals.tokens.input, output: totals.tokens.output };
    if (!this.reader) this.turns = totals.calls;
  }

  /** While the agent runs: report progress now and then (elapsed time moves on), log a heartbeat. */
  beat(report: (progress: RunProgress) => void, log: Logger): void {
    this.timers.push(setInterval(() => report(this.snapshot()), REPORT_EVERY_MS));
    this.timers.push(
      setInterval(() => log.info({ progress: this.snapshot() }, 'agent still running'), LOG_EVERY_MS),
    );
    for (const t of this.timers) t.unref();
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }
}
