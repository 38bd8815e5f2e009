import { hostname } from 'node:os';
import path from 'node:path';
import type { Config } from '../config/schema.js';
import type { IncidentStore } from '../incident/store.js';
import type { IntakeHooks } from '../intake/webhooks/hooks.js';
import type { Logger } from '../log/logger.js';
import { startHttpServer } from '../server/http.js';
import { type HttpServer } from '../server/types.js';
import { createMetrics, type DaemonMetrics } from '../server/metrics.js';
import { EngineGate } from './engine-gate.js';
import { newDaemonId } from './ids.js';
import { daemonReadiness, leaderRole, logPreflight } from './lifecycle.js';
import type { Inspector } from './inspector.js';
import type { RootMonitor } from './root-monitor.js';
import type { RunQueue } from './run-queue.js';
import { RunSlot, type QueuedIncident, type SlotDeps } from './run-slot.js';
import { closeInOrder, drainRuns, onSignals } from './shutdown.js';
import { wireParts } from './wiring.js';
import type { DaemonDeps, DaemonLifecycle, DaemonStats } from './types.js';
import type { Readiness } from '../run/types.js';

// The daemon: intake (root monitor, inspector), the incident store, the run queue and run slots, wired
// by wiring.ts; it pumps the queue, serves HTTP, and closes everything in order. What it is built from
// is made in service.ts (the composition root). The lifecycle: docs/architecture.md.

export class Daemon {
  readonly daemonId: string;
  readonly metrics: DaemonMetrics;
  readonly store: IncidentStore;
  /** What HTTP intake asks of the lifecycle (incident state, alerts resolved). */
  readonly intakeHooks: IntakeHooks;
  readonly root: string;
  private readonly config: Config;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly queue: RunQueue;
  private readonly inspector: Inspector;
  private readonly monitor: RootMonitor;
  private readonly gate: EngineGate;
  private readonly slotDeps: SlotDeps;
  private readonly active = new Map<string, RunSlot>();
  private http: HttpServer | undefined;
  private timers: { rescan?: NodeJS.Timeout; wake?: NodeJS.Timeout } = {};
  private rescanning: Promise<void> | undefined;
  private diskFull: string | undefined;
  /** One readiness evaluation at a time, shared by /readyz and the /metrics scrape. */
  private readinessRunning: Promise<Readiness> | undefined;
  private life: DaemonLifecycle = { phase: 'created' };
  private markStopped: () => void = () => undefined;
  private readonly stoppedSignal = new Promise<void>((resolve) => (this.markStopped = resolve));

  constructor(private readonly deps: DaemonDeps) {
    const { config } = deps;
    this.config = config;
    this.log = deps.log;
    this.metrics = deps.metrics ?? createMetrics();
    this.now = deps.now ?? Date.now;
    this.daemonId = deps.daemonId ?? newDaemonId(deps.host ?? hostname());
    this.root = path.resolve(config.workspaces_root);
    const parts = wireParts(
      { ...deps, daemonId: this.daemonId, root: this.root, now: this.now },
      this.metrics,
      {
        isQueued: (dir) => this.queue.scheduler.has(dir),
        isActive: (dir) => this.active.has(dir),
        markChanged: (dir) => {
          const slot = this.active.get(dir);
          if (slot) slot.reconsider = true;
          return slot !== undefined;
        },
        adopt: (dir, cluster) => this.startSlot(dir, RunSlot.adopt(this.slotDeps, dir), cluster),
        enqueue: (queued, notBefore) => this.enqueue(queued, notBefore),
        rescan: () => void this.rescan(),
        diskFull: (why) => (this.diskFull = why),
      },
    );
    ({ store: this.store, queue: this.queue, slotDeps: this.slotDeps } = parts);
    ({ intakeHooks: this.intakeHooks, inspector: this.inspector, monitor: this.monitor } = parts);
    this.gate = new EngineGate(deps.executor, this.log, () => this.pump());
    this.metrics.readinessFrom(() => this.readiness());
  }

  get lifecycle(): DaemonLifecycle['phase'] {
    return this.life.phase;
  }

  private get ready(): boolean {
    return this.life.phase === 'ready';
  }

  /** Runs start only after the start-up scan, so that its incidents start in priority order. */
  private get scanned(): boolean {
    return this.life.phase === 'ready' || (this.life.phase === 'starting' && this.life.scanned);
  }

  private get stopping(): boolean {
    return this.life.phase === 'stopping' || this.life.phase === 'stopped';
  }

  /** The bound HTTP port, once started (undefined when HTTP is off). */
  get httpPort(): number | undefined {
    return this.http?.port;
  }

  stats(): DaemonStats {
    return {
      queued: this.queue.scheduler.depth,
      inFlight: this.active.size,
      ready: this.ready,
      stopping: this.stopping,
    };
  }

  /** Reconciles what is on disk, starts watching and serving; resolves when the daemon is ready. */
  start(): Promise<void> {
    if (this.life.phase === 'starting' || this.life.phase === 'ready') return this.life.started;
    if (this.stopping) return Promise.resolve();
    const started = this.startup();
    // startup() sets the phase only after its first await, so this runs first.
    if (this.life.phase === 'created') this.life = { phase: 'starting', started, scanned: false };
    return started;
  }

  /** A stop() during start-up waits for it, and every step checks `stopping` so nothing is left open. */
  private async startup(): Promise<void> {
    await this.monitor.open();
    if (this.stopping) return;
    await this.startHttp();
    if (!(await this.awaitLeadership())) return;
    void logPreflight(this.deps.executor, this.log);
    // Scan first so that the watcher can skip finished folders; a catch-up scan after the watcher is
    // ready finds whatever arrived during the scan.
    const t0 = this.now();
    await this.rescanNow('startup');
    if (this.life.phase === 'starting') this.life = { ...this.life, scanned: true };
    // Runs a dead daemon left on the engine that no live run owns (the sweep logs and never throws).
    void this.deps.executor.sweep?.([...this.active.values()].map((r) => r.runId));
    const scanMs = this.now() - t0;
    if (this.stopping) return;
    await this.monitor.watch();
    await this.rescanNow('rescan');
    if (this.stopping) return;
    this.timers.rescan = setInterval(() => void this.rescan(), this.config.scheduling.rescan_interval);
    this.timers.rescan.unref();
    if (this.life.phase === 'starting') this.life = { phase: 'ready', started: this.life.started };
    const queued = this.queue.scheduler.depth;
    this.log.info(
      { root: this.root, daemonId: this.daemonId, queued, scanMs, watchMs: this.now() - t0 },
      'daemon ready',
    );
    this.pump();
  }

  /** A standby serves HTTP (healthz; readyz says standby) and waits here until it leads; false when stopped first. */
  private async awaitLeadership(): Promise<boolean> {
    const leadership = this.deps.leadership;
    if (!leadership) return true;
    leadership.start();
    this.log.info(
      { daemonId: this.daemonId },
      'standing by: intake starts once this replica holds the leader Lease',
    );
    return (await leadership.whenLeader()) && !this.stopping;
  }

  private async startHttp(): Promise<void> {
    if (this.deps.http === false || this.config.http.port === 0) return;
    const extras = typeof this.deps.server === 'function' ? this.deps.server(this) : this.deps.server;
    const readiness = () => this.readiness();
    this.http = await startHttpServer({ ...extras, ...this.config.http, readiness, metrics: this.metrics });
    this.log.info({ port: this.http.port }, 'http server listening');
  }

  /** Intake running, disk writable, and what the executor reports (engine, skills, agent). */
  readiness(): Promise<Readiness> {
    this.readinessRunning ??= this.evaluateReadiness().finally(() => (this.readinessRunning = undefined));
    return this.readinessRunning;
  }

  private evaluateReadiness(): Promise<Readiness> {
    return daemonReadiness(
      {
        ...{ stopping: this.stopping, ready: this.ready, root: this.root },
        ...(this.monitor.down ? { rootDown: this.monitor.down } : {}),
        ...(this.diskFull ? { diskFull: this.diskFull } : {}),
        ...(this.deps.leadership ? { role: leaderRole(this.deps.leadership) } : {}),
      },
      () => this.deps.executor.readiness(),
    );
  }

  /** SIGTERM/SIGINT stop the daemon gracefully; a second one forces it. Returns a function removing the handlers. */
  handleSignals(proc: NodeJS.Process = process): () => void {
    const force = () => Promise.allSettled([...this.active.values()].map((run) => run.interruptUnstopped()));
    return onSignals(proc, this.log, this.config.scheduling.shutdown_timeout, () => void this.stop(), force);
  }

  whenStopped(): Promise<void> {
    return this.stoppedSignal;
  }

  /** Closes intake, lets in-flight runs finish (shutdown_timeout), stops them, then the executor and HTTP. */
  stop(): Promise<void> {
    if (this.life.phase === 'stopping' || this.life.phase === 'stopped') return this.life.stopped;
    const started = this.life.phase === 'created' ? undefined : this.life.started;
    const stopped = this.shutdown(started);
    this.life = { phase: 'stopping', stopped };
    return stopped;
  }

  private async shutdown(started: Promise<void> | undefined): Promise<void> {
    // A standby stops trying at once; a leader keeps renewing while its runs drain, then lets go.
    const leadership = this.deps.leadership;
    if (leadership && leadership.state !== 'leader') await leadership.stop();
    await started?.catch(() => undefined);
    const steps: [string, () => Promise<unknown>][] = [
      ['intake', () => this.closeIntake()],
      ['runs', () => drainRuns(this.active, this.config, this.log, this.now)],
      ['store', async () => this.store.close()],
      // Run-stage events held back to share a write (audit log `linger`) are written before exit.
      ['audit', async () => this.deps.audit.flush()],
      ['executor', async () => this.deps.executor.close?.()],
      ['leadership', async () => leadership?.stop({ release: true })],
      ['http', async () => this.http?.close()],
    ];
    await closeInOrder(steps, this.log);
    this.log.info({}, 'daemon stopped');
    if (this.life.phase === 'stopping') this.life = { phase: 'stopped', stopped: this.life.stopped };
    this.markStopped();
  }

  private async closeIntake(): Promise<void> {
    clearInterval(this.timers.rescan);
    clearTimeout(this.timers.wake);
    this.gate.close();
    await this.monitor.close();
    await this.inspector.close();
    await this.rescanning;
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
    this.metrics.workspaceScan(listed.ok ? 'ok' : 'failed');
    this.pump();
  }

  /** Looks at a workspace folder again now (an event the watcher cannot see, such as a retry). */
  reconsider(dir: string): Promise<void> {
    return this.inspector.consider(dir, 'requeue');
  }

  private enqueue(queued: QueuedIncident, notBefore: number): void {
    this.queue.add(queued, notBefore);
    this.pump();
  }

  /** Starts every queued run the limits allow; arms a timer for the next retry. */
  private pump(): void {
    const { scheduler } = this.queue;
    if (!this.stopping && this.scanned && !this.gate.waitingFor)
      for (let entry = scheduler.next(); entry; entry = scheduler.next())
        this.startSlot(entry.key, RunSlot.run(this.slotDeps, entry.payload), entry.payload);
    this.metrics.queueDepth(scheduler.depth);
    this.metrics.inFlight(this.active.size);
    if (this.stopping || !this.scanned) return;
    // Deferred incidents come back once the queue has drained to half, not only at the next rescan.
    if (this.queue.drainedForDeferred()) void this.rescan();
    clearTimeout(this.timers.wake);
    const wakeAt = scheduler.nextWakeAt();
    if (wakeAt === undefined) return;
    this.timers.wake = setTimeout(() => this.pump(), Math.max(1, wakeAt - this.now()));
    this.timers.wake.unref();
  }

  private startSlot(dir: string, slot: RunSlot, from: QueuedIncident | string): void {
    this.active.set(dir, slot);
    const queued = typeof from === 'string' ? undefined : from;
    // An adopted run did not come through the queue; it counts against the limits all the same.
    if (typeof from === 'string') this.queue.scheduler.markRunning(dir, from);
    void slot.done.then((end) => {
      this.queue.scheduler.done(dir);
      this.active.delete(dir);
      if (end.waitFor && !this.stopping) this.gate.hold(end.waitFor);
      if (!this.stopping) {
        if (end.retryAt !== undefined && queued) this.enqueue(queued, end.retryAt);
        else if (end.reconsider) void this.inspector.consider(dir, 'requeue');
      }
      this.pump();
    });
  }
}
