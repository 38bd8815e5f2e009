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
  /** Set when the gateway refused the call itself: the cap that was reached. */
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

/** A cap the run reached: named as the user configures it. */
export interface CapReached {
  cap: 'budget.max_tokens' | 'budget.max_usd' | 'budget.max_model_calls' | 'budget.daily_usd';
  limit: number;
  used: number;
}

/** A run's spend so far. */
export interface RunTotals {
  calls: number;
  tokens: Usage;
  costUsd: number;
  retries: number;
  /** Time of the first model call. */
  firstCallAt?: Date;
  /** When the first answer asking the agent to call a tool ended: the first investigation turn. */
  firstToolAt?: Date;
  /** When the last model call so far ended. */
  lastEndAt?: Date;
}
