import { Writable } from 'node:stream';
import type { Log, V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../log/logger.js';
import { errorMessage } from '../../util/errors.js';
import { AGENT_CONTAINER } from './names.js';
import { agentStatus, fatalWaiting, newestPod } from './status.js';

// The agent's output: the pod's log, followed from the moment its container starts.

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface LogPumpOptions {
  jobName: string;
  namespace: string;
  logs: Log;
  podsOf: (jobName: string) => Promise<V1Pod[]>;
  pollMs: number;
  log: Logger;
  onStdout: (c: Buffer) => void;
  onFatal: (reason: string) => void;
}

/**
 * Follows the agent container's log. Waits for the pod to start; if the follow stream closes while
 * the container still runs, it reconnects and skips the bytes already delivered.
 */
export class LogPump {
  private stopped = false;
  // Set once the Job has ended: a pod that is gone or never started has no more output to wait for.
  private draining = false;
  private delivered = 0;
  private current?: { controller?: AbortController; sink: Writable };
  private finished!: Promise<void>;

  constructor(private readonly o: LogPumpOptions) {}

  start(): void {
    this.finished = this.run().catch((err: unknown) => {
      this.o.log.warn(
        { jobName: this.o.jobName, err: errorMessage(err) },
        'kubernetes log stream ended with an error',
      );
    });
  }

  stop(): void {
    this.stopped = true;
    this.current?.controller?.abort();
    this.current?.sink.end();
  }

  /** Lets the stream finish on its own for up to `ms`, then stops it. */
  async drain(ms: number): Promise<void> {
    this.draining = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.finished, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
    this.stop();
    await this.finished;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const pod = newestPod(await this.o.podsOf(this.o.jobName).catch(() => []));
      const status = pod ? agentStatus(pod) : undefined;
      const fatal = pod ? fatalWaiting(pod) : undefined;
      if (fatal) this.o.onFatal(fatal);
      if (!pod?.metadata?.name || !status || (!status.state?.running && !status.state?.terminated)) {
        if (this.draining) return;
        await sleep(this.o.pollMs);
        continue;
      }
      try {
        await this.follow(pod.metadata.name);
      } catch (err) {
        this.o.log.debug(
          { jobName: this.o.jobName, err: errorMessage(err) },
          'kubernetes log request failed; retrying',
        );
        await sleep(this.o.pollMs);
        continue;
      }
      if (status.state?.terminated) return;
      const after = newestPod(await this.o.podsOf(this.o.jobName).catch(() => []));
      const st = after ? agentStatus(after)?.state : undefined;
      if (!after || !st || st.terminated) return;
      await sleep(this.o.pollMs);
    }
  }

  private follow(podName: string): Promise<void> {
    let skip = this.delivered;
    return new Promise<void>((resolve, reject) => {
      const sink = new Writable({
        write: (chunk: Buffer, _enc, cb) => {
          let data = chunk;
          if (skip > 0) {
            const n = Math.min(skip, data.length);
            skip -= n;
            data = data.subarray(n);
          }
          if (data.length > 0) {
            this.delivered += data.length;
            this.o.onStdout(data);
          }
          cb();
        },
      });
      sink.on('finish', () => resolve());
      sink.on('error', reject);
      this.current = { sink };
      if (this.stopped) return void sink.end();
      this.o.logs
        .log(this.o.namespace, podName, AGENT_CONTAINER, sink, { follow: true })
        .then((controller) => {
          if (this.current?.sink === sink) this.current.controller = controller;
          if (this.stopped) controller.abort();
        })
        .catch((err: unknown) => {
          sink.destroy();
          reject(err);
        });
    });
  }
}
