import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

// The main thread's side of token counting: a worker thread started on the first count (so a command
// that never counts, such as `--version`, never loads the o200k tables) and kept for later counts.
// The worker does not keep the process alive while idle.

export interface CountRequest {
  id: number;
  texts: readonly string[];
}

export type CountReply = { id: number; counts: number[] } | { id: number; error: string };

interface Pending {
  resolve(counts: number[]): void;
  reject(err: Error): void;
}

/**
 * Counts already made, by their text, most recently used last. Most of a prompt repeats from run to
 * run (the system prompt, persona, skills index and briefs) and is counted in several shapes per run
 * (the whole, its parts, its sections): only new text goes to the worker. Bounded by texts and by
 * characters held, so a stream of distinct incidents costs a fixed amount of memory.
 */
export class CountMemo {
  private readonly counts = new Map<string, number>();
  private chars = 0;

  constructor(
    private readonly maxTexts = 2048,
    private readonly maxChars = 4 * 1024 * 1024,
  ) {}

  get(text: string): number | undefined {
    const count = this.counts.get(text);
    if (count !== undefined) {
      this.counts.delete(text);
      this.counts.set(text, count);
    }
    return count;
  }

  set(text: string, count: number): void {
    if (text.length > this.maxChars / 4 || this.counts.has(text)) return;
    this.counts.set(text, count);
    this.chars += text.length;
    for (const oldest of this.counts.keys()) {
      if (this.counts.size <= this.maxTexts && this.chars <= this.maxChars) break;
      this.counts.delete(oldest);
      this.chars -= oldest.length;
    }
  }

  get size(): number {
    return this.counts.size;
  }
}

/** Counts texts with o200k in a worker thread; one worker, requests answered in order. */
export class TokenWorker {
  private worker: Worker | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly memo = new CountMemo();

  /** Raw o200k counts of `texts`, in order; texts counted before are answered from memory. */
  async count(texts: readonly string[]): Promise<number[]> {
    const counts = texts.map((t) => this.memo.get(t));
    const missing = [...new Set(texts.filter((_, i) => counts[i] === undefined))];
    if (missing.length > 0) {
      const fresh = await this.countInWorker(missing);
      missing.forEach((t, i) => this.memo.set(t, fresh[i] ?? 0));
      const byText = new Map(missing.map((t, i) => [t, fresh[i] ?? 0]));
      return texts.map((t, i) => counts[i] ?? byText.get(t) ?? 0);
    }
    return counts as number[];
  }

  private countInWorker(texts: readonly string[]): Promise<number[]> {
    if (texts.length === 0) return Promise.resolve([]);
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<number[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // Referenced while a request is out, so the process waits for the answer.
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, texts } satisfies CountRequest);
    });
  }

  /** Stops the worker; pending counts fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
    this.failAll(new Error('token counter closed'));
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = spawnWorker();
    worker.unref();
    worker.on('message', (reply: CountReply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref();
      if ('counts' in reply) waiter.resolve(reply.counts);
      else waiter.reject(new Error(`token counting failed: ${reply.error}`));
    });
    const gone = (err: Error) => {
      if (this.worker === worker) this.worker = undefined;
      this.failAll(err);
    };
    worker.on('error', (err) =>
      gone(new Error(`token counter worker failed: ${err.message}`, { cause: err })),
    );
    worker.on('exit', (code) => gone(new Error(`token counter worker exited with code ${code}`)));
    this.worker = worker;
    return worker;
  }

  private failAll(err: Error): void {
    const waiters = [...this.pending.values()];
    this.pending.clear();
    for (const w of waiters) w.reject(err);
  }
}

/**
 * Starts the worker module next to this one. Running from the TypeScript sources (tests, tsx), the
 * worker gets tsx's loader first: Node 20 does not pass a parent's module hooks to worker threads.
 */
function spawnWorker(): Worker {
  // No inherited Node options: a flag meant for the main script (`--input-type`, a loader) can stop
  // the worker from starting.
  const options = { execArgv: [] };
  const here = fileURLToPath(import.meta.url);
  if (!here.endsWith('.ts')) return new Worker(new URL('./token-worker.js', import.meta.url), options);
  const entry = pathToFileURL(path.join(path.dirname(here), 'token-worker.ts')).href;
  const boot = `import(${JSON.stringify(tsxApiUrl())}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(boot, { ...options, eval: true });
}

/** tsx's ESM API (`tsx/esm/api`, import condition), found through its package.json exports. */
function tsxApiUrl(): string {
  const manifest = createRequire(import.meta.url).resolve('tsx/package.json');
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as {
    exports: Record<string, { import?: { default?: string } }>;
  };
  const target = pkg.exports['./esm/api']?.import?.default;
  if (!target)
    throw new Error(`${manifest} has no ./esm/api export; cannot start the token worker from sources`);
  return pathToFileURL(path.join(path.dirname(manifest), target)).href;
}

let shared: TokenWorker | undefined;

/** The process's token worker, created on first use (one o200k table per process, not one per run). */
export function sharedTokenWorker(): TokenWorker {
  shared ??= new TokenWorker();
  return shared;
}
