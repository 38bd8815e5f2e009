import { waitFor } from '../../util/backoff.js';
import { TransientError } from '../../util/errors.js';
import { makeDirs } from '../../util/fs.js';
import { acquireLease, type LeaseIdentity } from '../../workspace/lease.js';

// Serialising intake per key across replicas sharing the root: a lease file per key. (In this process,
// work for one key goes through a KeyedQueue: util/keyed-queue.ts.)

export interface FileLockOptions {
  identity: LeaseIdentity;
  /** A lock not released for this long is taken over (its holder is presumed stuck). */
  ttlMs: number;
  /** How long to wait for another replica's lock before giving up (a 503 with Retry-After). */
  timeoutMs: number;
  now?: () => number;
}

/** Runs `fn` holding `<dir>/.triage/lease`; `dir` is created when missing. */
export async function withFileLock<T>(
  dir: string,
  options: FileLockOptions,
  fn: () => Promise<T>,
): Promise<T> {
  makeDirs(dir);
  const start = Date.now();
  // Held for one batch: after a crash it is stale whatever it holds, so its content is not synced.
  const got = await waitFor(
    () => acquireLease(dir, options.identity, { ttlMs: options.ttlMs, now: options.now, durable: false }),
    (g) => g.acquired,
    { waitMs: options.timeoutMs, delayMs: 2, maxDelayMs: 50 },
  );
  if (!got.acquired)
    throw new TransientError(
      `intake lock ${dir} is held by ${got.holder?.holder ?? 'another replica'}: gave up after ${Date.now() - start} ms; the sender should retry`,
      { code: 'EINTAKELOCK' },
    );
  try {
    return await fn();
  } finally {
    await got.lease.release();
  }
}
