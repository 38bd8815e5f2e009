import type {
  CapName,
  CapReached,
  Caps,
  Estimate,
  FirstCall,
  ModelCallRecord,
  ProviderId,
  RefusalReason,
  RunTotals,
} from './types.js';
import { NO_USAGE } from './types.js';
import type { DailyLedger } from './ledger.js';

export { DailyLedger } from './ledger.js';

// One run's identity at the gateway: its token, its provider, its spend so far and its caps. The
// gateway asks `admit()` before it reads a call's body: a call under way holds a place against
// `gateway.max_calls_in_flight` and its estimated spend against every cap until `record()` counts
// what it really spent, so calls made in parallel see each other.

export interface SessionHooks {
  /** Called once per finished call, in order; the call log writes it. */
  onCall(record: ModelCallRecord): Promise<void>;
  /** Called the first time the run reaches a cap. */
  onCap?(cap: CapReached): void;
  /** Called for each 429/529 retried. */
  onRetry?(provider: string): void;
}

/** The gateway's own answer to a call it does not forward. */
export interface Refusal {
  reason: RefusalReason;
  status: 400 | 403 | 404 | 405 | 413 | 429;
  message: string;
}

/** A call let through: it holds its estimate against the caps until it ends. */
export interface Admission {
  /** Replaces the estimate held (the body was read: its size and its model are known). */
  update(estimate: Estimate): void;
  /** Gives the place and the estimate back; idempotent. `record()` calls it as the call is counted. */
  release(): void;
}

export interface RunSessionInit {
  runId: string;
  /** Empty for a run taken back from its token's hash (the daemon never learns the token again). */
  token: string;
  /** The provider the run's agent calls: the only one its token opens. */
  provider: ProviderId;
  caps: Caps;
  ledger: DailyLedger;
  hooks: SessionHooks;
  /** Calls under way at once (`gateway.max_calls_in_flight`); unlimited when absent. */
  maxCallsInFlight?: number;
}

/** How long a refused agent is asked to wait (retry-after) before it tries again. */
export const RETRY_AFTER_S = 2;

export class RunSession {
  readonly totals: RunTotals = {
    calls: 0,
    tokens: { ...NO_USAGE },
    costUsd: 0,
    retries: 0,
    inputByModel: {},
  };
  /** The first cap the run reached; the run ends failed naming it. */
  capReached: CapReached | undefined;
  live = true;
  readonly runId: string;
  readonly token: string;
  readonly provider: ProviderId;
  private readonly caps: Caps;
  private readonly ledger: DailyLedger;
  private readonly hooks: SessionHooks;
  private readonly maxCallsInFlight: number;
  private inFlight = 0;
  /** What the calls under way may spend, by their estimates. */
  private readonly held: Estimate = { tokens: 0, usd: 0 };

  constructor(init: RunSessionInit) {
    this.runId = init.runId;
    this.token = init.token;
    this.provider = init.provider;
    this.caps = init.caps;
    this.ledger = init.ledger;
    this.hooks = init.hooks;
    this.maxCallsInFlight = init.maxCallsInFlight ?? Number.POSITIVE_INFINITY;
  }

  /** Calls under way now. */
  get callsInFlight(): number {
    return this.inFlight;
  }

  /** Each cap with its limit and what counts against it: spent so far, and held by calls under way. */
  private ledgers(): { cap: CapName; limit: number | undefined; used: number; held: number }[] {
    const { caps, totals, held } = this;
    return [
      {
        cap: 'budget.max_tokens',
        limit: caps.maxTokens,
        used: totals.tokens.input + totals.tokens.output,
        held: held.tokens,
      },
      { cap: 'budget.max_usd', limit: caps.maxUsd, used: totals.costUsd, held: held.usd },
      { cap: 'budget.max_model_calls', limit: caps.maxModelCalls, used: totals.calls, held: this.inFlight },
      {
        cap: 'budget.daily_usd',
        limit: caps.dailyUsd,
        used: this.ledger.spent(),
        held: this.ledger.held(),
      },
    ];
  }

  /** The cap the run has spent, which stops every further call, or undefined while none is. */
  refusal(): CapReached | undefined {
    const spent = this.ledgers().find((l) => l.limit !== undefined && l.used >= l.limit);
    if (!spent || spent.limit === undefined) return undefined;
    const found: CapReached = { cap: spent.cap, limit: spent.limit, used: spent.used };
    this.reached(found);
    return found;
  }

  /**
   * May a call go now? A spent cap refuses it for good (400); so many calls under way, or calls under
   * way holding the rest of a cap, refuse it for now (429: retry once they end). Otherwise it is
   * admitted and holds `estimate` until it is recorded.
   */
  admit(estimate: Estimate): { admitted: Admission } | { refused: Refusal } {
    const spent = this.refusal();
    if (spent)
      return { refused: { reason: spent.cap, status: 400, message: `triage-runner: ${capMessage(spent)}` } };
    if (this.inFlight >= this.maxCallsInFlight) {
      const message = `triage-runner: the run has ${this.inFlight} model calls under way, its most at once (gateway.max_calls_in_flight); retry when one ends`;
      return { refused: { reason: 'gateway.max_calls_in_flight', status: 429, message } };
    }
    const busy = this.ledgers().find((l) => l.limit !== undefined && l.used + l.held >= l.limit);
    if (busy && busy.limit !== undefined) {
      const message = `triage-runner: ${heldMessage(busy.cap, busy.limit, busy.used, busy.held, this.inFlight)}`;
      return { refused: { reason: busy.cap, status: 429, message } };
    }
    return { admitted: this.hold(estimate) };
  }

  private hold(first: Estimate): Admission {
    let current: Estimate | undefined = { tokens: 0, usd: 0 };
    const shift = (next: Estimate) => {
      if (!current) return;
      this.held.tokens += next.tokens - current.tokens;
      this.held.usd += next.usd - current.usd;
      this.ledger.hold(next.usd - current.usd);
      current = next;
    };
    this.inFlight++;
    shift(first);
    return {
      update: shift,
      release: () => {
        if (!current) return;
        shift({ tokens: 0, usd: 0 });
        current = undefined;
        this.inFlight--;
        // Sums of fractions given back leave a rounding residue: none is left once no call is under way.
        if (this.inFlight === 0) Object.assign(this.held, { tokens: 0, usd: 0 });
      },
    };
  }

  retried(provider: string): void {
    this.totals.retries++;
    this.hooks.onRetry?.(provider);
  }

  /** Counts a finished call (giving back what it held) and hands it to the call log. */
  async record(call: ModelCallRecord, at: Date, admission?: Admission): Promise<void> {
    admission?.release();
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
      // Calls made in parallel end in any order: the first call is the one that started first.
      if (!t.firstCallAt || at < t.firstCallAt) {
        t.firstCallAt = at;
        t.firstCall = firstCallOf(call, at);
      }
      if (call.model) t.inputByModel[call.model] = (t.inputByModel[call.model] ?? 0) + call.tokens.input;
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

function firstCallOf(call: ModelCallRecord, at: Date): FirstCall {
  return {
    inputTokens: call.tokens.input,
    cacheRead: call.tokens.cacheRead,
    ...(call.model ? { model: call.model } : {}),
    ...(call.ttfbMs !== undefined ? { firstByteAt: new Date(at.getTime() + Math.round(call.ttfbMs)) } : {}),
  };
}

const money = (cap: CapName) => (v: number) => (cap.endsWith('usd') ? `$${v.toFixed(4)}` : String(v));

/** The reason a run stopped at a cap, as result.json and the state say it. */
export function capMessage(cap: CapReached): string {
  const fmt = money(cap.cap);
  return `${cap.cap} (${fmt(cap.limit)}) reached: the run used ${fmt(cap.used)}; the model gateway refused further model calls`;
}

/** Why a call waits: the calls under way hold what is left of a cap. */
function heldMessage(cap: CapName, limit: number, used: number, held: number, inFlight: number): string {
  const fmt = money(cap);
  const amount = cap.endsWith('usd') ? fmt(held) : String(Math.round(held));
  const spent =
    cap === 'budget.daily_usd'
      ? `today's runs used ${fmt(used)} and calls under way may use ${amount} more`
      : `the run used ${fmt(used)} and its ${inFlight} model calls under way may use ${amount} more`;
  return `${cap} (${fmt(limit)}): ${spent}; retry when they end`;
}
