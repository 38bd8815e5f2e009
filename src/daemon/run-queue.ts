import { Scheduler, type SchedulerLimits } from './scheduler.js';
import type { QueuedIncident } from './run-slot.js';

// The run queue: the scheduler (limits, priority, retry times), queue slots promised to intakes still
// writing their `queued` state, and whether an incident was deferred for lack of room (the queue
// draining to half brings deferred incidents back).

export class RunQueue {
  readonly scheduler: Scheduler<QueuedIncident>;
  private reserved = 0;
  private haveDeferred = false;

  constructor(
    private readonly limits: SchedulerLimits,
    now: () => number,
    /** The cluster an incident counts against for max_per_cluster (its registry entry). */
    private readonly clusterKey: (cluster: string) => string = (cluster) => cluster,
  ) {
    this.scheduler = new Scheduler(limits, now);
  }

  /** A slot held while the `queued` state is written; undefined when the queue is full. */
  reserve(): (() => void) | undefined {
    if (this.scheduler.depth + this.reserved >= this.limits.queueLimit) {
      this.haveDeferred = true;
      return undefined;
    }
    this.reserved++;
    let released = false;
    return () => {
      if (!released) this.reserved--;
      released = true;
    };
  }

  add(queued: QueuedIncident, notBefore: number): void {
    const { incident } = queued.workspace;
    const result = this.scheduler.enqueue({
      key: queued.workspace.dir,
      cluster: this.clusterKey(incident.cluster),
      severity: incident.severity,
      notBefore,
      arrivedAt: queued.arrivedAt,
      payload: queued,
    });
    // Full (a retry coming back to a queue that filled meanwhile): it stays `queued` on disk and the
    // rescan that the queue draining triggers brings it back.
    if (result === 'full') this.haveDeferred = true;
  }

  /** True once, when deferred incidents are waiting and the queue has drained to half. */
  drainedForDeferred(): boolean {
    if (!this.haveDeferred || this.scheduler.depth + this.reserved > Math.floor(this.limits.queueLimit / 2))
      return false;
    this.haveDeferred = false;
    return true;
  }
}
