// The model gateway's shared types: the providers it fronts, one recorded model call, a run's caps.

/** The provider APIs the gateway fronts, each under its own path prefix (`/<id>/…`). */
export type ProviderId = 'anthropic' | 'openai' | 'gemini';
export const PROVIDER_IDS: readonly ProviderId[] = ['anthropic', 'openai', 'gemini'];

/** Token counts of one call, as the provider reported them. `input` includes cached input. */
export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export const NO_USAGE: Usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };

/** One line of `model-calls.jsonl`. */
export interface ModelCallRecord {
  at: string;
  provider: ProviderId;
  method: string;
  /** Path below the provider's base URL, without the query string (it may carry a key). */
  path: string;
  model?: string;
  status: number;
  stream: boolean;
  latencyMs: number;
  /** Time from the request to the first byte of the provider's answer. */
  ttfbMs?: number;
  tokens: Usage;
  costUsd?: number;
  /** Provider 429/529 answers retried by the gateway. */
  retries: number;
  /** The answer asks the agent to call a tool (a tool_use block, a function call). */
  toolUse?: boolean;
  /**
   * Set when the gateway refused the call itself, never forwarding it: the cap (`budget.max_tokens`, …)
   * or the gateway's own rule (a RefusalReason) that stopped it.
   */
  refused?: string;
  /** The call failed without a provider answer (connection refused, reset). */
  error?: string;
  /** Only with gateway.record_bodies (redacted). */
  request?: string;
  response?: string;
}

/** Per-run and daily spend caps (config `budget:`); absent = no cap. */
export interface Caps {
  maxTokens?: number;
  maxUsd?: number;
  maxModelCalls?: number;
  dailyUsd?: number;
}

export type CapName = 'budget.max_tokens' | 'budget.max_usd' | 'budget.max_model_calls' | 'budget.daily_usd';

/** A cap the run reached: named as the user configures it. */
export interface CapReached {
  cap: CapName;
  limit: number;
  used: number;
}

/**
 * Why the gateway refused a call itself (`refused` in model-calls.jsonl): a spend cap, or one of its own
 * rules: the call was for another provider than the run's, or not one of the model endpoints, its body
 * was over `gateway.max_request_body`, or the run had `gateway.max_calls_in_flight` calls under way.
 */
export type RefusalReason =
  | CapName
  | 'gateway.provider'
  | 'gateway.endpoint'
  | 'gateway.max_request_body'
  | 'gateway.max_calls_in_flight';

/** What a call not yet answered may still spend; held against the caps until its usage is known. */
export interface Estimate {
  tokens: number;
  usd: number;
}

/** The gateway's limits on what it takes in (config `gateway.*`). */
export interface GatewayLimits {
  /** Largest request body read; a larger one is answered 413 unread. */
  maxRequestBytes: number;
  /** Calls one run may have under way at once; one more is answered 429. */
  maxCallsInFlight: number;
  /** Output tokens a call is assumed to produce, at most, until its usage is known (budget.reserve_output_tokens). */
  reserveOutputTokens: number;
}

/** A run's spend so far. */
export interface RunTotals {
  calls: number;
  tokens: Usage;
  costUsd: number;
  retries: number;
  /** Time of the first model call. */
  firstCallAt?: Date;
  /** The first model call (the earliest started): what it sent and when its answer's first byte came. */
  firstCall?: FirstCall;
  /** When the first answer asking the agent to call a tool ended: the first investigation turn. */
  firstToolAt?: Date;
  /** When the last model call so far ended. */
  lastEndAt?: Date;
  /** Input tokens by model, for the model that did the run's work (the one that took the most). */
  inputByModel: Record<string, number>;
}

/** A run's first model call: the prompt its agent started from, and how long the model took to answer. */
export interface FirstCall {
  inputTokens: number;
  cacheRead: number;
  model?: string;
  /** When the first byte of its answer arrived (absent when none did). */
  firstByteAt?: Date;
}
