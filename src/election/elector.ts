import { errorMessage } from '../util/errors.js';
import { LeaseConflictError, type LeaderState, type LeaseRecord, type LeaseStore } from './types.js';

// Leader election over a coordination.k8s.io/v1 Lease, the way client-go's leaderelection does it:
// every retry period a standby tries to acquire and the leader renews. A Lease is free when it has no
// holder, or when this replica has seen the same record unchanged for a whole lease duration (judged by
// our own clock from when we saw it change, never by comparing clocks with the holder). Every write
// carries the resourceVersion it read, so of two replicas racing exactly one wins. A leader that has
// not renewed for the renew deadline (shorter than the lease duration) gives up before another
// replica may take over, and says so through `onLost`.

export interface ElectorOptions {
  store: LeaseStore;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Leadership is gone (not renewed within the renew deadline, or another replica holds the Lease). */
  onLost: (why: string) => void;
  /** This replica has just become the leader (before whenLeader() resolves). */
  onStartedLeading?: () => void;
  log: {
    info(o: object, m: string): void;
    warn(o: object, m: string): void;
  };
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => () => void;
}

const defaultTimer = (fn: () => void, ms: number): (() => void) => {
  const t = setTimeout(fn, ms);
  t.unref();
  return () => clearTimeout(t);
};

const sameRecord = (a: LeaseRecord | undefined, b: LeaseRecord | undefined): boolean =>
  a?.holderIdentity === b?.holderIdentity &&
  a?.renewTime === b?.renewTime &&
  a?.resourceVersion === b?.resourceVersion;

export class LeaderElector {
  private current: LeaderState = 'standby';
  private observed: LeaseRecord | undefined;
  private observedAt = 0;
  private cancelLoop: (() => void) | undefined;
  private cancelDeadline: (() => void) | undefined;
  private ticking: Promise<void> | undefined;
  private waiters: ((leader: boolean) => void)[] = [];
  private readonly now: () => number;
  private readonly setTimer: (fn: () => void, ms: number) => () => void;

  constructor(private readonly o: ElectorOptions) {
    this.now = o.now ?? Date.now;
    this.setTimer = o.setTimer ?? defaultTimer;
  }

  get state(): LeaderState {
    return this.current;
  }

  get identity(): string {
    return this.o.identity;
  }

  /** Who holds the Lease as last read (undefined: nobody, or not read yet). */
  get holder(): string | undefined {
    return this.observed?.holderIdentity || undefined;
  }

  /** Starts trying (at once, then every retry period). */
  start(): void {
    if (this.current === 'stopped' || this.cancelLoop) return;
    this.schedule(0);
  }

  /** Resolves true once this replica leads, false if the elector stops first. */
  whenLeader(): Promise<boolean> {
    if (this.current === 'leader') return Promise.resolve(true);
    if (this.current === 'stopped') return Promise.resolve(false);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** One attempt: acquire (standby) or renew (leader). Exposed so tests can step the election. */
  tick(): Promise<void> {
    this.ticking ??= this.attempt().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  /** Stops trying; a leader gives the Lease up (empty holder) when `release`, so a standby takes over at once. */
  async stop(options: { release: boolean } = { release: false }): Promise<void> {
    const wasLeader = this.current === 'leader';
    this.current = 'stopped';
    this.cancelLoop?.();
    this.cancelDeadline?.();
    this.settleWaiters(false);
    await this.ticking?.catch(() => undefined);
    if (!wasLeader || !options.release) return;
    try {
      const record = await this.o.store.get();
      if (record?.holderIdentity !== this.o.identity) return;
      await this.o.store.update({ ...record, holderIdentity: '', leaseDurationSeconds: 1 });
      this.o.log.info({ lease: this.o.store.where, identity: this.o.identity }, 'leader lease released');
    } catch (err) {
      this.o.log.warn(
        { lease: this.o.store.where, err: errorMessage(err) },
        'leader lease could not be released; a standby takes over once it expires',
      );
    }
  }

  private schedule(ms: number): void {
    this.cancelLoop = this.setTimer(() => {
      void this.tick().finally(() => {
        if (this.current !== 'stopped') this.schedule(this.o.retryPeriodMs);
      });
    }, ms);
  }

  private settleWaiters(leader: boolean): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(leader);
  }

  /** The leader's watchdog: not renewed within the renew deadline → leadership is lost. */
  private armDeadline(): void {
    this.cancelDeadline?.();
    this.cancelDeadline = this.setTimer(
      () => this.lose(`the Lease was not renewed within ${this.o.renewDeadlineMs} ms (renew_deadline)`),
      this.o.renewDeadlineMs,
    );
  }

  private lose(why: string): void {
    if (this.current !== 'leader') return;
    this.current = 'stopped';
    this.cancelLoop?.();
    this.cancelDeadline?.();
    this.o.log.warn({ lease: this.o.store.where, identity: this.o.identity, why }, 'leadership lost');
    this.o.onLost(why);
  }

  private async attempt(): Promise<void> {
    if (this.current === 'stopped') return;
    const leading = this.current === 'leader';
    let won: boolean;
    try {
      won = await this.bounded(this.tryAcquireOrRenew());
    } catch (err) {
      if (!(err instanceof LeaseConflictError))
        this.o.log.warn(
          { lease: this.o.store.where, err: errorMessage(err) },
          leading ? 'leader lease renewal failed; retrying' : 'leader lease could not be read; retrying',
        );
      won = false;
    }
    // stop() may have run while the call was out.
    if (this.state === 'stopped') return;
    if (won) {
      this.armDeadline();
      if (!leading) {
        this.current = 'leader';
        this.o.onStartedLeading?.();
        this.o.log.info(
          { lease: this.o.store.where, identity: this.o.identity },
          'became the leader: this replica runs intake, scheduling and Jobs',
        );
        this.settleWaiters(true);
      }
      return;
    }
    // Someone else holds it now: a leader that sees that has lost, whatever its deadline says.
    const holder = this.observed?.holderIdentity;
    if (leading && holder && holder !== this.o.identity) this.lose(`${holder} holds the Lease now`);
  }

  /** An API call that hangs must not hold the loop: it counts as failed after the renew deadline. */
  private bounded<T>(work: Promise<T>): Promise<T> {
    let cancel = (): void => undefined;
    const ms = this.o.renewDeadlineMs;
    const timeout = new Promise<never>((_, reject) => {
      cancel = this.setTimer(
        () => reject(new Error(`the API server did not answer within ${ms} ms (renew_deadline)`)),
        ms,
      );
    });
    return Promise.race([work, timeout]).finally(cancel);
  }

  private observe(record: LeaseRecord | undefined): void {
    if (!sameRecord(record, this.observed)) {
      this.observed = record;
      this.observedAt = this.now();
    }
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const now = this.now();
    const stamp = new Date(now).toISOString();
    const durationSeconds = Math.ceil(this.o.leaseDurationMs / 1000);
    const existing = await this.o.store.get();
    if (!existing) {
      const created = await this.o.store.create({
        holderIdentity: this.o.identity,
        leaseDurationSeconds: durationSeconds,
        acquireTime: stamp,
        renewTime: stamp,
        leaseTransitions: 0,
      });
      this.observed = created;
      this.observedAt = now;
      return true;
    }
    this.observe(existing);
    const holder = existing.holderIdentity;
    const mine = holder === this.o.identity;
    // The holder's own duration counts (a released Lease says 1 s); ours when it gives none.
    const heldForMs = (existing.leaseDurationSeconds ?? durationSeconds) * 1000;
    if (holder && !mine && this.observedAt + heldForMs > now) return false;
    const updated = await this.o.store.update({
      ...existing,
      holderIdentity: this.o.identity,
      leaseDurationSeconds: durationSeconds,
      renewTime: stamp,
      acquireTime: mine ? (existing.acquireTime ?? stamp) : stamp,
      leaseTransitions: mine ? (existing.leaseTransitions ?? 0) : (existing.leaseTransitions ?? 0) + 1,
    });
    this.observed = updated;
    this.observedAt = now;
    return true;
  }
}
