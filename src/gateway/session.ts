import type { CapReached, Caps, ModelCallRecord, RunTotals } from './types.js';
import { NO_USAGE } from './types.js';
import type { DailyLedger } from './ledger.js';

export { DailyLedger } from './ledger.js';

// One run's identity at the gateway: its token, its spend so far and its caps. The gateway asks
// `refusal()` before forwarding a call and hands every finished call to `record()`.

export interface SessionHooks {
  /** Called once per finished call, in order; the call log writes it. */
  onCall(record: ModelCallRecord): Promise<void>;
  /** Called the first time the run reaches a cap. */
  onCap?(cap: CapReached): void;
  /** Called for each 429/529 retried. */
  onRetry?(provider: string): void;
}

export class RunSession {
  readonly totals: RunTotals = { calls: 0, tokens: { ...NO_USAGE }, costUsd: 0, retries: 0 };
  /** The first cap the run reached; the run ends failed naming it. */
  capReached: CapReached | undefined;
  live = true;

  constructor(
    readonly runId: string,
    readonly token: string,
    private readonly caps: Caps,
    private readonly ledger: DailyLedger,
    private readonly hooks: SessionHooks,
  ) {}

  /** The cap that stops the next call, or undefined when it may go. */
  refusal(): CapReached | undefined {
    const { caps, totals } = this;
    const spentTokens = totals.tokens.input + totals.tokens.output;
    const over = (cap: CapReached['cap'], limit: number | undefined, used: number): CapReached | undefined =>
      limit !== undefined && used >= limit ? { cap, limit, used } : undefined;
    const found =
      over('budget.max_tokens', caps.maxTokens, spentTokens) ??
      over('budget.max_usd', caps.maxUsd, totals.costUsd) ??
      over('budget.max_model_calls', caps.maxModelCalls, totals.calls) ??
      over('budget.daily_usd', caps.dailyUsd, this.ledger.spent());
    if (found) this.reached(found);
    return found;
  }

  retried(provider: string): void {
    this.totals.retries++;
    this.hooks.onRetry?.(provider);
  }

  async record(call: ModelCallRecord, at: Date): Promise<void> {
    this.count(call, at);
    await this.hooks.onCall(call);
  }

  /**
   * Counts a call an earlier daemon recorded (adoption), without recording it again; its cost is already
   * in the day's spend when that is kept on disk.
   */
  restore(call: ModelCallRecord): void {
    this.count(call, new Date(call.at), !this.ledger.persisted);
  }

  private count(call: ModelCallRecord, at: Date, daily = true): void {
    if (call.refused === undefined) {
      const t = this.totals;
      t.calls++;
      t.firstCallAt ??= at;
      const end = new Date(at.getTime() + Math.round(call.latencyMs));
      if (!t.lastEndAt || end > t.lastEndAt) t.lastEndAt = end;
      if (call.toolUse && call.status < 400) t.firstToolAt ??= end;
      t.tokens = {
        input: t.tokens.input + call.tokens.input,
        output: t.tokens.output + call.tokens.output,
        cacheRead: t.tokens.cacheRead + call.tokens.cacheRead,
        cacheWrite: t.tokens.cacheWrite + call.tokens.cacheWrite,
      };
      if (call.costUsd) {
        t.costUsd += call.costUsd;
        if (daily) this.ledger.add(call.costUsd);
      }
      // A call that took the run over a cap ends it there: the answer already went to the agent, the
      // next call is refused, and the run is failed even if the agent makes none.
      this.refusal();
    }
  }

  private reached(cap: CapReached): void {
    if (this.capReached) return;
    this.capReached = cap;
    this.hooks.onCap?.(cap);
  }
}

/** The reason a run stopped at a cap, as result.json and the state say it. */
export function capMessage(cap: CapReached): string {
  const fmt = (v: number) => (cap.cap.endsWith('usd') ? `$${v.toFixed(4)}` : String(v));
  return `${cap.cap} (${fmt(cap.limit)}) reached: the run used ${fmt(cap.used)}; the model gateway refused further model calls`;
}
