// The one backoff: exponential delays with "equal jitter" (half the delay fixed, half random), so that
// replicas retrying the same thing spread out. Pure, for schedules written to disk (an incident's
// retryAt, an outbox entry's nextAttemptAt), and the same curve for in-process waits (`waitFor`).

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

/** Delay before the attempt after `attempt` failures: base × 2^(attempt-1), capped, jittered to [50%, 100%]. */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + (random() * exp) / 2);
}

export interface WaitOptions {
  /** Give up after this long (ms). */
  waitMs: number;
  /** First pause between tries, doubled up to `maxDelayMs` (no jitter: one process polls its own file). */
  delayMs?: number;
  maxDelayMs?: number;
  now?: () => number;
}

/**
 * Tries `attempt` until it answers `done`, pausing with a doubling delay, until `waitMs` has passed;
 * returns the last answer either way (the caller says what giving up means). The one wait-for-lock loop.
 */
export async function waitFor<T>(
  attempt: () => Promise<T>,
  done: (answer: T) => boolean,
  options: WaitOptions,
): Promise<T> {
  const now = options.now ?? Date.now;
  const deadline = now() + options.waitMs;
  const maxDelay = options.maxDelayMs ?? 100;
  for (let delay = options.delayMs ?? 2; ; delay = Math.min(delay * 2, maxDelay)) {
    const answer = await attempt();
    const left = deadline - now();
    if (done(answer) || left <= 0) return answer;
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
  }
}
