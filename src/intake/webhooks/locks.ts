import { mkdir } from 'node:fs/promises';
import { TransientError } from '../../util/errors.js';
import { acquireLease, type LeaseIdentity } from '../lease.js';

// Serialising intake per key: in this process a batcher (work for one key runs one batch at a time,
// and whatever arrives meanwhile goes into the next batch: one lock and one write per batch, not per
// alert), across replicas sharing the root a lease file per key.

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
}

/** Runs `process(key, items)` for one key at a time, batching items that arrive while it runs. */
export class KeyedBatcher<I, O> {
  private readonly queues = new Map<string, Waiting<I, O>[]>();

  constructor(
    private readonly process: (key: string, items: I[]) => Promise<O[]>,
    private readonly maxBatch = 512,
  ) {}

  submit(key: string, item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      const queue = this.queues.get(key);
      if (queue) {
        queue.push({ item, resolve, reject });
        return;
      }
      const fresh: Waiting<I, O>[] = [{ item, resolve, reject }];
      this.queues.set(key, fresh);
      void this.drain(key, fresh);
    });
  }

  /** Keys with work queued or running. */
  get busy(): number {
    return this.queues.size;
  }

  private async drain(key: string, queue: Waiting<I, O>[]): Promise<void> {
    // Yield once so that items of the same tick (one webhook's alerts) form one batch.
    await Promise.resolve();
    while (queue.length > 0) {
      const batch = queue.splice(0, this.maxBatch);
      try {
        const results = await this.process(
          key,
          batch.map((w) => w.item),
        );
        batch.forEach((w, i) => w.resolve(results[i] as O));
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    this.queues.delete(key);
  }
}

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
  await mkdir(dir, { recursive: true });
  const start = Date.now();
  let delay = 2;
  for (;;) {
    // Held for one batch: after a crash it is stale whatever it holds, so its content is not synced.
    const got = await acquireLease(dir, options.identity, {
      ttlMs: options.ttlMs,
      now: options.now,
      durable: false,
    });
    if (got.acquired) {
      try {
        return await fn();
      } finally {
        await got.lease.release();
      }
    }
    const waited = Date.now() - start;
    if (waited >= options.timeoutMs)
      throw new TransientError(
        `intake lock ${dir} is held by ${got.holder?.holder ?? 'another replica'}: gave up after ${waited} ms; the sender should retry`,
        { code: 'EINTAKELOCK' },
      );
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 50);
  }
}
