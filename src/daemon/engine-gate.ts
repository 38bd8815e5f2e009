import type { Logger } from '../log/logger.js';
import type { RunExecutor } from '../run/types.js';

// While the engine does not answer, no run starts: queued incidents wait (burning no attempt) and the
// engine is checked every CHECK_MS; when it answers, runs resume.

const CHECK_MS = 2000;

export class EngineGate {
  /** What runs wait for; undefined while runs may start. */
  waitingFor: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly executor: RunExecutor,
    private readonly log: Logger,
    private readonly resume: () => void,
  ) {}

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** A run could not start for want of `what`: hold runs until the engine answers. */
  hold(what: string): void {
    if (this.waitingFor) return;
    this.waitingFor = what;
    this.log.warn({ waitingFor: what, checkEveryMs: CHECK_MS }, `no run starts until ${what} answers`);
    this.schedule();
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.check(), CHECK_MS);
    this.timer.unref();
  }

  private async check(): Promise<void> {
    const r = await this.executor.readiness().catch(() => undefined);
    const engine = r?.checks.find((c) => c.name.startsWith('engine'));
    if (!(engine?.ok ?? r?.ok)) return this.schedule();
    this.log.info(
      { waitedFor: this.waitingFor },
      `${this.waitingFor ?? 'the engine'} answers again; runs resume`,
    );
    this.waitingFor = undefined;
    this.resume();
  }
}
