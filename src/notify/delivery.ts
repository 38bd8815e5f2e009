import { backoffDelay } from '../util/backoff.js';

// How a delivery attempt fails, and when the next one happens. A failure is either worth retrying
// (network, timeout, 5xx, 429 with its Retry-After, 408) or permanent (any other 4xx, a sink's own
// refusal such as Slack's `channel_not_found`): a permanent failure is recorded and never retried.

export type FailureKind = 'retry' | 'permanent';

export interface DeliveryErrorDetails {
  status?: number;
  code?: string;
  /** The response body (cut to RESPONSE_CHARS); redacted before it is recorded. */
  response?: string;
  /** From a 429's Retry-After: the next attempt waits at least this long. */
  retryAfterMs?: number;
  /** The request may have reached the sink (timeout, connection lost after sending): reconcile first. */
  uncertain?: boolean;
  cause?: unknown;
}

export class DeliveryError extends Error {
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly response: string | undefined;
  readonly retryAfterMs: number | undefined;
  readonly uncertain: boolean;
  constructor(
    message: string,
    readonly kind: FailureKind,
    details: DeliveryErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'DeliveryError';
    this.status = details.status;
    this.code = details.code;
    this.response = details.response;
    this.retryAfterMs = details.retryAfterMs;
    this.uncertain = details.uncertain ?? false;
  }
}

/** Response bodies are kept to this many characters in the outbox and audit log. */
export const RESPONSE_CHARS = 2000;

const cut = (text: string): string =>
  text.length <= RESPONSE_CHARS ? text : `${text.slice(0, RESPONSE_CHARS)}… (${text.length} characters)`;

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The error for an HTTP answer outside 2xx: 429, 408 and 5xx are retried; other 4xx are permanent. */
export function httpFailure(
  what: string,
  status: number,
  body: string,
  retryAfter: string | null,
  now: number,
): DeliveryError {
  const retryAfterMs = status === 429 ? parseRetryAfter(retryAfter, now) : undefined;
  const retryable = status === 429 || status === 408 || status >= 500;
  const advice = retryable
    ? retryAfterMs !== undefined
      ? `retrying after ${retryAfterMs} ms (Retry-After)`
      : 'retrying with backoff'
    : 'not retried: fix the sink configuration and re-send with `triage-runner notify`';
  return new DeliveryError(`${what} answered HTTP ${status}; ${advice}`, retryable ? 'retry' : 'permanent', {
    status,
    response: cut(body),
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

/** Failures before any byte reached the sink: the request was certainly not acted on. */
export const NOT_CONNECTED: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

export interface HttpAnswer {
  status: number;
  headers: Headers;
  body: string;
}

/**
 * POSTs (or GETs) with a timeout; a network failure or a timeout is a retryable DeliveryError marked
 * uncertain (the sink may have acted on it). The caller decides what a non-2xx answer means.
 */
export async function request(
  fetchFn: typeof fetch,
  what: string,
  url: string,
  init: { method?: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  timeoutMs: number,
): Promise<HttpAnswer> {
  let response: Response;
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    response = await fetchFn(url, {
      method: init.method ?? 'POST',
      headers: init.headers,
      ...(init.body !== undefined ? { body: init.body } : {}),
      // A redirect is answered as is (3xx: a permanent failure), never followed with the signed body.
      redirect: 'manual',
      signal: deadline,
    });
  } catch (err) {
    // The deadline fired (it is what aborted the request), recognised by the signal, not by a name.
    const timedOut = deadline.aborted;
    const cause = (err as { cause?: { code?: string } }).cause;
    const code = timedOut ? 'ETIMEDOUT' : (cause?.code ?? (err as NodeJS.ErrnoException).code);
    throw new DeliveryError(
      timedOut
        ? `${what} did not answer within ${timeoutMs} ms (notify.request_timeout); retrying`
        : `${what} could not be reached (${code ?? (err as Error).message}); retrying`,
      'retry',
      { uncertain: !NOT_CONNECTED.has(code ?? ''), cause: err, ...(code ? { code } : {}) },
    );
  }
  let body = '';
  try {
    body = await response.text();
  } catch {
    // A body cut off after the status line: the status is what matters.
  }
  return { status: response.status, headers: response.headers, body };
}

/** The answer when it is 2xx; otherwise the failure it means (see httpFailure). */
export function expectSuccess(what: string, answer: HttpAnswer, now: number): HttpAnswer {
  if (answer.status >= 200 && answer.status < 300) return answer;
  throw httpFailure(what, answer.status, answer.body, answer.headers.get('retry-after'), now);
}

/** A JSON answer's body, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * Delay before attempt `failures + 1`: base × 2^(failures-1), capped, with jitter in [50%, 100%] so that
 * replicas retrying the same sink spread out; a Retry-After is honoured in full, even past the cap.
 */
export function nextDelayMs(
  failures: number,
  policy: RetryPolicy,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.max(retryAfterMs, 0);
  return backoffDelay(failures, { baseMs: policy.baseDelayMs, maxMs: policy.maxDelayMs }, random);
}
