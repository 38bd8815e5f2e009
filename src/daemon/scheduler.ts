// The in-memory run queue: a global and a per-cluster concurrency limit, severity order
// (critical > high > the rest) then first-come, a not-before time for retries, and a bound.

export interface QueueEntry<T> {
  /** Unique per incident: the workspace directory. */
  key: string;
  cluster: string;
  severity: string;
  /** Earliest time (ms) the entry may start; retries set it in the future. */
  notBefore: number;
  /** First-come order: when the incident arrived (incident.json's mtime); ties keep enqueue order. */
  arrivedAt?: number;
  payload: T;
}

interface Waiting<T> extends QueueEntry<T> {
  rank: number;
  seq: number;
}

export interface SchedulerLimits {
  maxConcurrent: number;
  maxPerCluster: number;
  queueLimit: number;
}

export type EnqueueResult = 'queued' | 'already' | 'full';

/** 0 runs first. */
export function severityRank(severity: string): number {
  const s = severity.trim().toLowerCase();
  if (s === 'critical') return 0;
  if (s === 'high') return 1;
  return 2;
}

function before<T>(a: Waiting<T>, b: Waiting<T>): boolean {
  if (a.rank !== b.rank) return a.rank < b.rank;
  const at = (a.arrivedAt ?? 0) - (b.arrivedAt ?? 0);
  return at !== 0 ? at < 0 : a.seq < b.seq;
}

export class Scheduler<T> {
  private readonly waiting = new Map<string, Waiting<T>>();
  private readonly running = new Map<string, string>();
  private readonly perCluster = new Map<string, number>();
  private seq = 0;

  constructor(
    private readonly limits: SchedulerLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get depth(): number {
    return this.waiting.size;
  }

  get inFlight(): number {
    return this.running.size;
  }

  get hasRoom(): boolean {
    return this.waiting.size < this.limits.queueLimit;
  }

  has(key: string): boolean {
    return this.waiting.has(key) || this.running.has(key);
  }

  isRunning(key: string): boolean {
    return this.running.has(key);
  }

  enqueue(entry: QueueEntry<T>): EnqueueResult {
    if (this.has(entry.key)) return 'already';
    if (this.waiting.size >= this.limits.queueLimit) return 'full';
    this.waiting.set(entry.key, { ...entry, rank: severityRank(entry.severity), seq: this.seq++ });
    return 'queued';
  }

  remove(key: string): boolean {
    return this.waiting.delete(key);
  }

  /** Takes the best entry allowed to start now and counts it as running; undefined when none may. */
  next(): QueueEntry<T> | undefined {
    if (this.running.size >= this.limits.maxConcurrent) return undefined;
    const now = this.now();
    let best: Waiting<T> | undefined;
    for (const entry of this.waiting.values()) {
      if (entry.notBefore > now) continue;
      if ((this.perCluster.get(entry.cluster) ?? 0) >= this.limits.maxPerCluster) continue;
      if (!best || before(entry, best)) best = entry;
    }
    if (!best) return undefined;
    this.waiting.delete(best.key);
    this.markRunning(best.key, best.cluster);
    return best;
  }

  /** Counts a run that did not come through the queue (an adopted run) against the limits. */
  markRunning(key: string, cluster: string): void {
    this.running.set(key, cluster);
    this.perCluster.set(cluster, (this.perCluster.get(cluster) ?? 0) + 1);
  }

  /** A started entry finished (whatever the outcome). */
  done(key: string): void {
    const cluster = this.running.get(key);
    if (cluster === undefined) return;
    this.running.delete(key);
    const n = (this.perCluster.get(cluster) ?? 1) - 1;
    if (n <= 0) this.perCluster.delete(cluster);
    else this.perCluster.set(cluster, n);
  }

  /** The earliest future not-before among waiting entries, for a wake-up timer. */
  nextWakeAt(): number | undefined {
    const now = this.now();
    let earliest: number | undefined;
    for (const entry of this.waiting.values()) {
      if (entry.notBefore > now && (earliest === undefined || entry.notBefore < earliest))
        earliest = entry.notBefore;
    }
    return earliest;
  }

  /** Entries waiting, in the order they would start if limits allowed. */
  snapshot(): QueueEntry<T>[] {
    return [...this.waiting.values()].sort((a, b) => (before(a, b) ? -1 : 1));
  }
}
