import type { Logger } from '../log/logger.js';
import { waitFor } from '../util/backoff.js';
import { errorMessage } from '../util/errors.js';
import { KeyedQueue } from '../util/keyed-queue.js';
import { readEntry } from '../workspace/outbox.js';
import type { OutboxEntry } from './types.js';

// When deliveries are attempted: one timer per outbox entry (at its recorded next attempt), one
// attempt in flight per entry (the per-key queue: wake-ups that arrive while one runs make one more
// attempt after it), and a way to wait for some to end. What an attempt does is not here.

/** A lock held by a live process elsewhere, or an attempt that could not run: look again after this long. */
export const BUSY_RETRY_MS = 30_000;
/** Longest timer Node.js can set. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** How often `settle` reads the outbox while it waits. */
const SETTLE_POLL_MS = 200;

/** When an entry is due: its recorded next attempt, else now. */
export function dueAt(entry: OutboxEntry, now: number): number {
  const at = entry.nextAttemptAt ? Date.parse(entry.nextAttemptAt) : NaN;
  return Number.isNaN(at) ? now : at;
}

export class DeliveryScheduler {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly attempts = new KeyedQueue<{ workspaceDir: string; key: string }, void>(
    async (_id, wakeUps) => {
      const [first] = wakeUps;
      if (first && !this.closedFlag) await this.attemptOnce(first.workspaceDir, first.key);
      return wakeUps.map(() => undefined);
    },
  );
  private readonly inFlight = new Set<Promise<void>>();
  private closedFlag = false;

  constructor(
    private readonly attempt: (workspaceDir: string, key: string) => Promise<void>,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {}

  get closed(): boolean {
    return this.closedFlag;
  }

  /** Attempts the entry at `at` (replacing an earlier timer for it); nothing once closed. */
  schedule(workspaceDir: string, key: string, at: number): void {
    if (this.closedFlag) return;
    const id = `${workspaceDir}\0${key}`;
    const existing = this.timers.get(id);
    if (existing) clearTimeout(existing);
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, at - this.now()));
    const timer = setTimeout(() => {
      this.timers.delete(id);
      void this.run(workspaceDir, key);
    }, delay);
    // Deliveries never keep a process alive on their own: the daemon lives anyway, commands use settle().
    timer.unref();
    this.timers.set(id, timer);
  }

  /**
   * Resolves when the given deliveries are delivered or failed, or when `timeoutMs` passes (they stay
   * scheduled and recorded). Keeps the process alive while it waits.
   */
  async settle(workspaceDir: string, keys: string[], timeoutMs: number): Promise<OutboxEntry[]> {
    const read = async (): Promise<OutboxEntry[]> =>
      (await Promise.all(keys.map((key) => readEntry(workspaceDir, key)))).filter(
        (e): e is OutboxEntry => e !== undefined,
      );
    return waitFor(read, (known) => known.every((e) => e.status !== 'pending'), {
      waitMs: timeoutMs,
      delayMs: SETTLE_POLL_MS,
      maxDelayMs: SETTLE_POLL_MS,
      now: this.now,
    });
  }

  /** Stops scheduling and waits up to `timeoutMs` for attempts in flight. */
  async close(timeoutMs: number): Promise<void> {
    this.closedFlag = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    const inFlight = [...this.inFlight];
    if (inFlight.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(inFlight),
      new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
  }

  private run(workspaceDir: string, key: string): Promise<void> {
    const attempt = this.attempts.submit(`${workspaceDir}\0${key}`, { workspaceDir, key });
    this.inFlight.add(attempt);
    void attempt.finally(() => this.inFlight.delete(attempt));
    return attempt;
  }

  private attemptOnce(workspaceDir: string, key: string): Promise<void> {
    return this.attempt(workspaceDir, key).catch((err: unknown) => {
      this.log.error(
        { workspace: workspaceDir, key, err: errorMessage(err) },
        'delivery attempt could not run; trying again later',
      );
      this.schedule(workspaceDir, key, this.now() + BUSY_RETRY_MS);
    });
  }
}
