// The one per-key serial queue: work for one key runs one batch at a time, in arrival order, and
// whatever arrives for that key meanwhile goes into the next batch (one lock and one write per batch,
// not per item). Keys run independently. Used by the incident store (batches of one: each change is
// computed from the one before), the audit log and HTTP intake.

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
}

/** Runs `process(key, items)` for one key at a time, batching items that arrive while it runs. */
export class KeyedQueue<I, O> {
  private readonly queues = new Map<string, Waiting<I, O>[]>();

  constructor(
    private readonly process: (key: string, items: I[]) => Promise<O[]>,
    private readonly maxBatch = 512,
  ) {}

  /** Queues `item` under `key`; resolves with its result once its batch is processed. */
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

  /** Whether work for `key` is queued or running (a new item will wait behind it). */
  has(key: string): boolean {
    return this.queues.has(key);
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
