import type { BatchV1Api, V1Job, Watch } from '@kubernetes/client-node';
import type { Logger } from '../../log/logger.js';
import { backoffDelay } from '../../util/backoff.js';
import { errorMessage } from '../../util/errors.js';
import { WaitTimeoutError } from '../labels.js';
import type { RunExit } from '../types.js';
import { classify, httpCode } from './errors.js';
import { finishedCondition } from './status.js';

// Waiting for a Job to end: read it, then watch it (reconnecting after a closed or failed watch),
// until it finishes, is deleted, its container can never start, the wait times out or the engine closes.

// setTimeout fires at once for delays above 2^31-1 ms (~24.8 days): a `timeout: 30d` would otherwise
// end every wait immediately.
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface JobWaitDeps {
  batch: BatchV1Api;
  watcher: Watch;
  namespace: string;
  server: string;
  pollMs: number;
  maxWatchFailures: number;
  log: Logger;
  /** Why the run's pod can never start, once the log pump has seen it. */
  fatal: () => string | undefined;
  /** The run's exit once its Job has ended (output drained). */
  exit: (job: V1Job | undefined, deleted: boolean) => Promise<RunExit>;
}

/** One wait() on one Job. `promise` settles once; `abort` ends it (the engine closed). */
export class JobWait {
  readonly promise: Promise<RunExit>;
  private resolve!: (exit: RunExit) => void;
  private reject!: (err: Error) => void;
  private settled = false;
  private ending = false;
  private failures = 0;
  private controller?: AbortController;
  private readonly timer: NodeJS.Timeout;
  private readonly fatalTimer: NodeJS.Timeout;

  constructor(
    private readonly d: JobWaitDeps,
    private readonly jobName: string,
    timeoutMs: number,
  ) {
    this.promise = new Promise<RunExit>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.timer = setTimeout(
      () => this.finish(() => this.reject(new WaitTimeoutError(jobName, timeoutMs))),
      Math.min(timeoutMs, MAX_TIMER_MS),
    );
    // A pod that can never start is reported as the run's end instead of idling to the deadline.
    this.fatalTimer = setInterval(() => this.checkFatal(), d.pollMs);
    this.connect();
  }

  abort(err: Error): void {
    this.finish(() => this.reject(err));
  }

  private get done(): boolean {
    return this.settled || this.ending;
  }

  private finish(fn: () => void): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    clearInterval(this.fatalTimer);
    this.controller?.abort();
    fn();
  }

  private checkFatal(): void {
    const fatal = this.d.fatal();
    if (!fatal || this.ending) return;
    this.ending = true;
    const exit = { exitCode: null, signal: null, oomKilled: false };
    this.finish(() => this.resolve({ ...exit, error: `agent container cannot start: ${fatal}` }));
  }

  private end(job: V1Job | undefined, deleted: boolean): void {
    if (this.done) return;
    this.ending = true;
    this.controller?.abort();
    this.d.exit(job, deleted).then(
      (exit) => this.finish(() => this.resolve(exit)),
      (err: unknown) => this.finish(() => this.reject(err as Error)),
    );
  }

  private retry(err: unknown): void {
    if (this.done) return;
    this.failures += 1;
    const { jobName, failures } = this;
    if (failures >= this.d.maxWatchFailures) {
      this.finish(() =>
        this.reject(classify(err, `watch Job ${jobName} (${failures} attempts)`, this.d.server)),
      );
      return;
    }
    this.d.log.warn(
      { jobName, attempt: failures, err: errorMessage(err) },
      'kubernetes job watch failed; reconnecting',
    );
    setTimeout(() => this.connect(), backoffDelay(failures + 1, { baseMs: this.d.pollMs, maxMs: 5000 }));
  }

  /** Reads the Job (it may have ended already), then watches it from that resourceVersion. */
  private connect(): void {
    if (this.done) return;
    void (async () => {
      let job: V1Job;
      try {
        job = await this.d.batch.readNamespacedJob({ name: this.jobName, namespace: this.d.namespace });
      } catch (err) {
        if (httpCode(err) === 404) return this.end(undefined, true);
        return this.retry(err);
      }
      if (finishedCondition(job)) return this.end(job, false);
      await this.watch(job.metadata?.resourceVersion);
    })();
  }

  private async watch(resourceVersion: string | undefined): Promise<void> {
    const { namespace, pollMs } = this.d;
    const params = {
      fieldSelector: `metadata.name=${this.jobName}`,
      resourceVersion,
      allowWatchBookmarks: true,
    };
    try {
      this.controller = await this.d.watcher.watch(
        `/apis/batch/v1/namespaces/${namespace}/jobs`,
        params,
        (type: string, obj: V1Job) => {
          if (type === 'DELETED') return this.end(obj, true);
          if (type === 'ERROR') return; // e.g. 410 Gone: the watch closes and connect() re-reads
          if (type === 'BOOKMARK') return;
          this.failures = 0;
          if (finishedCondition(obj)) this.end(obj, false);
        },
        (err: unknown) => {
          if (err) return this.retry(err);
          setTimeout(() => this.connect(), Math.min(pollMs, 1000)); // the server closed the watch: re-read, watch again
        },
      );
      if (this.done) this.controller.abort(); // ended (or timed out) while the watch was opening
    } catch (err) {
      this.retry(err);
    }
  }
}
