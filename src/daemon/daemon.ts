import { hostname } from 'node:os';
import path from 'node:path';
import type { AuditLog } from '../audit/log.js';
import type { Config } from '../config/schema.js';
import { IncidentStore, type StateChange } from '../incident/store.js';
import { DedupStore } from '../intake/dedup.js';
import type { LeaseIdentity } from '../intake/lease.js';
import { Scheduler } from '../intake/scheduler.js';
import type { Logger } from '../log/logger.js';
import { startHttpServer, type HttpServer, type HttpServerExtras } from '../server/http.js';
import { createMetrics, type DaemonMetrics } from '../server/metrics.js';
import { errorMessage } from '../util/errors.js';
import type { IntakeHooks } from '../intake/webhooks/hooks.js';
import { createAlertHooks } from './alert-hooks.js';
import { newDaemonId } from './ids.js';
import { Inspector } from './inspector.js';
import { settledWithin } from './lifecycle.js';
import { RootMonitor } from './root-monitor.js';
import { RunSlot, type QueuedIncident, type SlotDeps } from './run-slot.js';
import type { Readiness, RunExecutor } from './types.js';

// The daemon: wires intake (root monitor, inspector), the incident store, the scheduler and run slots,
// pumps the queue, serves health, and closes everything in order. The lifecycle: docs/architecture.md.

export interface DaemonDeps {
  config: Config;
  log: Logger;
  executor: RunExecutor;
  audit: AuditLog;
  metrics?: DaemonMetrics;
  now?: () => number;
  daemonId?: string;
  /** For retry jitter; injected in tests. */
  random?: () => number;
  /** Lease identity overrides (tests). */
  pid?: number;
  host?: string;
  isPidAlive?: (pid: number) => boolean;
  /** Serve /healthz, /readyz, /metrics when http.port is not 0 (default true). */
  http?: boolean;
  /** Told of every state change (status index, notifications). */
  onChange?: (change: StateChange) => void;
  /** Passed through to the HTTP server: token, limits, route modules (intake, status API); given the daemon. */
  server?: HttpServerExtras | ((daemon: Daemon) => HttpServerExtras);
}

/** While runs wait for the engine, it is checked this often (ms). */
const ENGINE_CHECK_MS = 2000;

export interface DaemonStats {
  queued: number;
  inFlight: number;
  ready: boolean;
  stopping: boolean;
}

export class Daemon {
  readonly daemonId: string;
  readonly metrics: DaemonMetrics;
  readonly store: IncidentStore;
  /** What HTTP intake asks of the lifecycle (incident state, alerts resolved). */
  readonly intakeHooks: IntakeHooks;
  private readonly config: Config;
  private readonly log: Logger;
  private readonly executor: RunExecutor;
  private readonly now: () => number;
  private readonly root: string;
  private readonly scheduler: Scheduler<QueuedIncident>;
  private readonly inspector: Inspector;
  private readonly monitor: RootMonitor;
  private readonly slotDeps: SlotDeps;
  private readonly active = new Map<string, RunSlot>();
  private http: HttpServer | undefined;
  private rescanTimer: NodeJS.Timeout | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  private rescanning: Promise<void> | undefined;
  private ready = false;
  /** Runs start only after the start-up scan, so that its incidents start in priority order. */
  private scanned = false;
  /** Queue slots promised to intakes that are still writing their `queued` state. */
  private reserved = 0;
  /** An incident was deferred for a full queue: the queue draining triggers a rescan. */
  private haveDeferred = false;
  private diskFull: string | undefined;
  /** What runs wait for (an engine that does not answer); no run starts meanwhile. */
  private paused: string | undefined;
  private pauseTimer: NodeJS.Timeout | undefined;
  private stopping = false;
  private starting: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  private markStopped: () => void = () => undefined;
  private readonly stoppedSignal = new Promise<void>((resolve) => (this.markStopped = resolve));

  constructor(private readonly deps: DaemonDeps) {
    const { config } = deps;
    this.config = config;
    this.log = deps.log;
    this.executor = deps.executor;
    this.metrics = deps.metrics ?? createMetrics();
    this.now = deps.now ?? Date.now;
    this.daemonId = deps.daemonId ?? newDaemonId(deps.host ?? hostname());
    this.root = path.resolve(config.workspaces_root);
    const s = config.scheduling;
    const identity: LeaseIdentity = {
      daemonId: this.daemonId,
      pid: deps.pid ?? process.pid,
      host: deps.host ?? hostname(),
    };
    const lease = {
      ttlMs: s.lease_ttl,
      now: this.now,
      ...(deps.isPidAlive ? { isPidAlive: deps.isPidAlive } : {}),
    };
    this.store = new IncidentStore({
      audit: deps.audit,
      log: this.log,
      metrics: this.metrics,
      now: this.now,
      policy: s,
      ...(deps.random ? { random: deps.random } : {}),
      onChange: (change) => deps.onChange?.(change),
      onDiskFull: (full, err) => (this.diskFull = full ? errorMessage(err) : undefined),
    });
    this.scheduler = new Scheduler(
      { maxConcurrent: s.max_concurrent, maxPerCluster: s.max_per_cluster, queueLimit: s.queue_limit },
      this.now,
    );
    this.slotDeps = {
      store: this.store,
      executor: this.executor,
      log: this.log,
      identity,
      lease,
      now: this.now,
      maxIncidentBytes: config.intake.max_incident_bytes,
      runDuration: (seconds, status) => this.metrics.runDuration(seconds, status),
    };
    const dedup = new DedupStore(this.root, s.dedup_window, this.now);
    this.intakeHooks = createAlertHooks({
      store: this.store,
      dedup,
      identity,
      lease,
      maxIncidentBytes: config.intake.max_incident_bytes,
      log: this.log,
      isActive: (dir) => this.active.has(dir),
      dequeue: (dir) => {
        this.scheduler.remove(dir);
        this.metrics.queueDepth(this.scheduler.depth);
      },
    });
    this.inspector = new Inspector({
      root: this.root,
      store: this.store,
      dedup,
      log: this.log,
      identity,
      lease,
      now: this.now,
      intake: {
        maxBytes: config.intake.max_incident_bytes,
        writeSettleMs: config.intake.write_settle,
        incompleteGraceMs: config.intake.incomplete_grace,
        dedupWindowMs: s.dedup_window,
      },
      isBusy: (dir) => this.scheduler.has(dir) || this.active.has(dir),
      markChanged: (dir) => {
        const slot = this.active.get(dir);
        if (slot) slot.reconsider = true;
        return slot !== undefined;
      },
      adopt: (dir, cluster) => this.startSlot(dir, RunSlot.adopt(this.slotDeps, dir), cluster),
      reserve: () => this.reserve(),
      enqueue: (queued, notBefore) => this.enqueue(queued, notBefore),
      queueLimit: s.queue_limit,
    });
    this.monitor = new RootMonitor({
      root: this.root,
      log: this.log,
      checkMs: s.rescan_interval,
      onFolder: (dir, cause) => void this.inspector.consider(dir, cause),
      onRescanNeeded: () => void this.rescan(),
      skipFolder: (dir) => this.inspector.unwatched.has(dir),
    });
  }

  /** The bound HTTP port, once started (undefined when HTTP is off). */
  get httpPort(): number | undefined {
    return this.http?.port;
  }

  stats(): DaemonStats {
    return {
      queued: this.scheduler.depth,
      inFlight: this.active.size,
      ready: this.ready,
      stopping: this.stopping,
    };
  }

  /** Reconciles what is on disk, starts watching and serving; resolves when the daemon is ready. */
  start(): Promise<void> {
    this.starting ??= this.startup();
    return this.starting;
  }

  /** A stop() during start-up waits for it, and every step checks `stopping` so nothing is left open. */
  private async startup(): Promise<void> {
    await this.monitor.open();
    if (this.stopping) return;
    await this.startHttp();
    // Scan first so that the watcher can skip finished folders; a catch-up scan after the watcher is
    // ready finds whatever arrived during the scan.
    const t0 = this.now();
    await this.rescanNow('startup');
    this.scanned = true;
    // Runs a dead daemon left on the engine that no live run owns (the sweep logs and never throws).
    void this.executor.sweep?.([...this.active.values()].map((r) => r.runId));
    const scanMs = this.now() - t0;
    if (this.stopping) return;
    await this.monitor.watch();
    await this.rescanNow('rescan');
    if (this.stopping) return;
    this.rescanTimer = setInterval(() => void this.rescan(), this.config.scheduling.rescan_interval);
    this.rescanTimer.unref();
    this.ready = true;
    this.log.info(
      {
        root: this.root,
        daemonId: this.daemonId,
        queued: this.scheduler.depth,
        scanMs,
        watchMs: this.now() - t0,
      },
      'daemon ready',
    );
    this.pump();
  }

  private async startHttp(): Promise<void> {
    if (this.deps.http === false || this.config.http.port === 0) return;
    const { port, host } = this.config.http;
    const extras = typeof this.deps.server === 'function' ? this.deps.server(this) : this.deps.server;
    this.http = await startHttpServer({
      ...extras,
      port,
      host,
      readiness: () => this.readiness(),
      metrics: this.metrics,
    }).catch((err: unknown) => {
      const code = (err as NodeJS.ErrnoException).code ?? errorMessage(err);
      throw new Error(
        `cannot serve /healthz, /readyz and /metrics on ${host}:${port} (${code}): free the port or set http.port / --http-port (0 turns HTTP off)`,
        { cause: err },
      );
    });
    this.log.info({ port: this.http.port }, 'http server listening');
  }

  /** Intake running, disk writable, and what the executor reports (engine, skills, agent). */
  async readiness(): Promise<Readiness> {
    const down = this.monitor.down;
    const intake = {
      name: 'intake',
      ok: this.ready && !this.stopping && !down,
      detail: this.stopping
        ? 'shutting down'
        : !this.ready
          ? 'starting'
          : down
            ? `workspaces root ${this.root} is unavailable (${down})`
            : undefined,
    };
    const disk = {
      name: 'disk',
      ok: !this.diskFull,
      ...(this.diskFull
        ? { detail: `writes fail: ${this.diskFull}; free space on the workspaces volume` }
        : {}),
    };
    const executor = await this.executor.readiness().catch((err: unknown): Readiness => ({
      ok: false,
      checks: [{ name: 'executor', ok: false, detail: errorMessage(err) }],
    }));
    return { ok: intake.ok && disk.ok && executor.ok, checks: [intake, disk, ...executor.checks] };
  }

  /**
   * SIGTERM/SIGINT stop the daemon gracefully; a second one during shutdown forces it: runs still going
   * are recorded as interrupted (the next start adopts them) and the process exits.
   */
  handleSignals(proc: NodeJS.Process = process): () => void {
    let received = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      received++;
      if (received === 1) {
        this.log.info(
          { signal, timeoutMs: this.config.scheduling.shutdown_timeout },
          'signal received, shutting down (send it again to force)',
        );
        void this.stop();
        return;
      }
      this.log.warn(
        { signal, runs: [...this.active.values()].map((r) => r.runId) },
        'second signal: forcing shutdown now',
      );
      void Promise.allSettled([...this.active.values()].map((run) => run.interruptUnstopped())).then(() =>
        proc.exit(130),
      );
    };
    proc.on('SIGTERM', onSignal);
    proc.on('SIGINT', onSignal);
    return () => {
      proc.off('SIGTERM', onSignal);
      proc.off('SIGINT', onSignal);
    };
  }

  whenStopped(): Promise<void> {
    return this.stoppedSignal;
  }

  /** Closes intake, lets in-flight runs finish (shutdown_timeout), stops them, then the executor and HTTP. */
  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    this.ready = false;
    await this.starting?.catch(() => undefined);
    const steps: [string, () => Promise<unknown>][] = [
      ['intake', () => this.closeIntake()],
      ['runs', () => this.drainRuns()],
      ['store', async () => this.store.close()],
      ['executor', async () => this.executor.close?.()],
      ['http', async () => this.http?.close()],
    ];
    for (const [step, close] of steps) {
      try {
        await close();
      } catch (err) {
        this.log.error({ step, err: errorMessage(err) }, 'shutdown step failed; going on with the next');
      }
    }
    this.log.info({}, 'daemon stopped');
    this.markStopped();
  }

  private async closeIntake(): Promise<void> {
    if (this.rescanTimer) clearInterval(this.rescanTimer);
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    if (this.pauseTimer) clearTimeout(this.pauseTimer);
    await this.monitor.close();
    await this.inspector.close();
    await this.rescanning;
  }

  /** Waits shutdown_timeout for runs (logging the countdown), then interrupts them; unstopped runs are recorded. */
  private async drainRuns(): Promise<void> {
    const timeoutMs = this.config.scheduling.shutdown_timeout;
    const deadline = this.now() + timeoutMs;
    const countdown = setInterval(() => {
      if (this.active.size === 0) return;
      this.log.info(
        { runs: this.active.size, leftMs: Math.max(0, deadline - this.now()) },
        'shutdown: waiting for in-flight runs',
      );
    }, 5000);
    countdown.unref();
    try {
      this.log.info({ inFlight: this.active.size, timeoutMs }, 'intake stopped, waiting for in-flight runs');
      if (
        await settledWithin(
          [...this.active.values()].map((r) => r.done),
          timeoutMs,
        )
      )
        return;
      const left = [...this.active.values()];
      this.log.warn(
        { runs: left.map((r) => r.runId), timeoutMs },
        `in-flight runs did not finish within ${timeoutMs} ms; interrupting them`,
      );
      for (const run of left)
        run.controller.abort(new Error(`daemon shutdown: runs did not finish within ${timeoutMs} ms`));
      // The executor escalates SIGINT → SIGTERM → SIGKILL with stop_grace between; allow for both steps.
      const graceMs = this.config.agent.stop_grace * 2 + 1000;
      if (
        await settledWithin(
          left.map((r) => r.done),
          graceMs,
        )
      )
        return;
      this.log.error(
        { runs: [...this.active.values()].map((r) => r.runId), graceMs },
        `runs did not stop within ${graceMs} ms of being interrupted; recording them interrupted`,
      );
      await Promise.allSettled([...this.active.values()].map((run) => run.interruptUnstopped()));
    } finally {
      clearInterval(countdown);
    }
  }

  /** Re-reads the root: deferred incidents, missed events, orphaned runs, changed finished incidents. */
  rescan(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    this.rescanning ??= this.rescanNow('rescan').finally(() => (this.rescanning = undefined));
    return this.rescanning;
  }

  private async rescanNow(cause: 'startup' | 'rescan'): Promise<void> {
    const listed = await this.inspector.scan(cause);
    this.monitor.listed(listed.ok, listed.ok ? undefined : listed.why);
    this.pump();
  }

  private reserve(): (() => void) | undefined {
    if (this.scheduler.depth + this.reserved >= this.config.scheduling.queue_limit) {
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

  private enqueue(queued: QueuedIncident, notBefore: number): void {
    const { incident } = queued.workspace;
    const result = this.scheduler.enqueue({
      key: queued.workspace.dir,
      cluster: incident.cluster,
      severity: incident.severity,
      notBefore,
      arrivedAt: queued.arrivedAt,
      payload: queued,
    });
    // Full (a retry coming back to a queue that filled meanwhile): it stays `queued` on disk and the
    // rescan that the queue draining triggers brings it back.
    if (result === 'full') this.haveDeferred = true;
    this.metrics.queueDepth(this.scheduler.depth);
    this.pump();
  }

  /** Starts every queued run the limits allow; arms a timer for the next retry. */
  private pump(): void {
    if (this.stopping || !this.scanned || this.paused) return;
    for (let entry = this.scheduler.next(); entry; entry = this.scheduler.next())
      this.startSlot(entry.key, RunSlot.run(this.slotDeps, entry.payload), entry.payload);
    this.metrics.queueDepth(this.scheduler.depth);
    this.metrics.inFlight(this.active.size);
    // Deferred incidents come back once the queue has drained to half, not only at the next rescan.
    if (
      this.haveDeferred &&
      this.scheduler.depth + this.reserved <= Math.floor(this.config.scheduling.queue_limit / 2)
    ) {
      this.haveDeferred = false;
      void this.rescan();
    }
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    const wakeAt = this.scheduler.nextWakeAt();
    if (wakeAt !== undefined) {
      this.wakeTimer = setTimeout(() => this.pump(), Math.max(1, wakeAt - this.now()));
      this.wakeTimer.unref();
    }
  }

  private startSlot(dir: string, slot: RunSlot, from: QueuedIncident | string): void {
    this.active.set(dir, slot);
    const queued = typeof from === 'string' ? undefined : from;
    // An adopted run did not come through the queue; it counts against the limits all the same.
    if (typeof from === 'string') this.scheduler.markRunning(dir, from);
    void slot.done.then((end) => {
      this.scheduler.done(dir);
      this.active.delete(dir);
      if (end.waitFor) this.waitFor(end.waitFor);
      if (!this.stopping) {
        if (end.retryAt !== undefined && queued) this.enqueue(queued, end.retryAt);
        else if (end.reconsider) void this.inspector.consider(dir, 'requeue');
      }
      this.pump();
    });
  }

  /**
   * A run could not start because the engine does not answer: no run starts until it does (checked
   * every ENGINE_CHECK_MS); queued incidents wait without burning attempts.
   */
  private waitFor(what: string): void {
    if (this.paused || this.stopping) return;
    this.paused = what;
    this.log.warn({ waitingFor: what, checkEveryMs: ENGINE_CHECK_MS }, `no run starts until ${what} answers`);
    const check = async () => {
      if (this.stopping) return;
      const r = await this.executor.readiness().catch(() => undefined);
      const engine = r?.checks.find((c) => c.name.startsWith('engine'));
      if (engine?.ok ?? r?.ok) {
        this.log.info({ waitedFor: what }, `${what} answers again; runs resume`);
        this.paused = undefined;
        this.pump();
        return;
      }
      this.pauseTimer = setTimeout(() => void check(), ENGINE_CHECK_MS);
      this.pauseTimer.unref();
    };
    this.pauseTimer = setTimeout(() => void check(), ENGINE_CHECK_MS);
    this.pauseTimer.unref();
  }
}
