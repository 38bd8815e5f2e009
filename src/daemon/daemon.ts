import { mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import type { AuditEvent, AuditLog } from '../audit/log.js';
import type { Config } from '../config/schema.js';
import { acquireLease, inspectLease, type Lease, type LeaseIdentity } from '../intake/lease.js';
import { folderEscapes, readWorkspace, INCIDENT_FILE, type ReadResult } from '../intake/read.js';
import { DedupWindow, Scheduler, type QueueEntry } from '../intake/scheduler.js';
import { FINAL_STATES, readState, triageDir, writeState, TRIAGE_DIR } from '../intake/state.js';
import type { IncidentState, StateFile, Workspace } from '../intake/types.js';
import { watchIncidents, type IncidentWatcher } from '../intake/watcher.js';
import type { Logger } from '../log/logger.js';
import { startHttpServer, type HttpServer, type HttpServerExtras } from '../server/http.js';
import { createMetrics, type DaemonMetrics } from '../server/metrics.js';
import { errorMessage, isTransient } from '../util/errors.js';
import { newDaemonId, newRunId } from './ids.js';
import { fileMark, folderMark, formatMs, settledWithin } from './lifecycle.js';
import { Limiter } from './limiter.js';
import { decideOutcome } from './outcome.js';
import type { Readiness, RunExecutor, RunOutcome } from './types.js';

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
  /** Passed through to the HTTP server: token, limits, route modules (intake, status API). */
  server?: HttpServerExtras;
}

export interface DaemonStats {
  queued: number;
  inFlight: number;
  ready: boolean;
  stopping: boolean;
}

interface Queued {
  workspace: Workspace;
  sha256: string;
  arrivedAt: number;
}

interface ActiveRun {
  runId: string;
  controller: AbortController;
  done: Promise<void>;
  lease?: Lease;
  /** Set when the incident must be looked at again after this run is cleaned up. */
  reconsider?: boolean;
}

type Cause = 'startup' | 'rescan' | 'add' | 'change' | 'addDir' | 'newdir' | 'settle' | 'requeue';

/** While incident.json is incomplete and still changing, it is re-read this often (ms). */
const INCOMPLETE_RECHECK_MS = 25;
/**
 * A new folder is looked at again after these delays while it has no incident.json: a file renamed
 * into it before chokidar's watch on the folder is in place produces no event (seen under load).
 */
const NEW_FOLDER_RECHECKS_MS = [250, 1000, 3000];
const folderId = (info: { ino: number; birthtimeMs: number }): string => `${info.ino}:${info.birthtimeMs}`;

/** How often the workspaces root is checked for being removed, replaced or back (ms). */
const ROOT_CHECK_MS = 1000;

const RUNNABLE: ReadonlySet<IncidentState> = new Set(['queued', 'deferred', 'interrupted']);
const IN_ENGINE: ReadonlySet<IncidentState> = new Set(['preparing', 'running']);

/** An incident recorded interrupted because its run did not stop at shutdown: the run may still be alive. */
const mayStillRun = (state: StateFile): boolean => state.state === 'interrupted' && state.unstopped === true;

/** Owns the service lifecycle: detection, validation, claiming, scheduling, supervision, shutdown. */
export class Daemon {
  readonly daemonId: string;
  private readonly config: Config;
  private readonly log: Logger;
  private readonly executor: RunExecutor;
  private readonly audit: AuditLog;
  readonly metrics: DaemonMetrics;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly identity: LeaseIdentity;
  private readonly isPidAlive: ((pid: number) => boolean) | undefined;
  private readonly root: string;
  private readonly scheduler: Scheduler<Queued>;
  private readonly dedup: DedupWindow;
  private readonly inspections = new Limiter(16);
  private readonly considering = new Map<string, { again: Cause | undefined; done: Promise<void> }>();
  private readonly settleTimers = new Map<string, NodeJS.Timeout>();
  private readonly newFolderChecks = new Map<string, { attempt: number; timer?: NodeJS.Timeout }>();
  private readonly active = new Map<string, ActiveRun>();
  private readonly pendingAudits = new Set<Promise<void>>();
  /**
   * Folders known to be final, for cheap rescans: `dir:<ino>` for succeeded/failed (only a replaced
   * folder is looked at again; the watcher skips them), `file:<mtime>:<size>` of incident.json for
   * rejected ones (a re-saved file re-queues).
   */
  private readonly finals = new Map<string, string>();
  private watcher: IncidentWatcher | undefined;
  private http: HttpServer | undefined;
  private rescanTimer: NodeJS.Timeout | undefined;
  /** While the workspaces root is unavailable: why, and the timer that checks for it. */
  private rootDown: string | undefined;
  private rootTimer: NodeJS.Timeout | undefined;
  /** The root folder's identity (inode, birth time) while watched: another one means it was re-created. */
  private rootId: string | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  private rescanning: Promise<void> | undefined;
  private ready = false;
  /** Runs start only after the start-up scan, so that its incidents start in priority order. */
  private scanned = false;
  /** Queue slots promised to intakes that are still writing their `queued` state. */
  private reserved = 0;
  /** Set when an incident was deferred for a full queue: the queue draining triggers a rescan. */
  private haveDeferred = false;
  private stopping = false;
  private stopped: Promise<void> | undefined;
  private starting: Promise<void> | undefined;
  private markStopped: () => void = () => undefined;
  private readonly stoppedSignal = new Promise<void>((resolve) => {
    this.markStopped = resolve;
  });
  private readonly serveHttp: boolean;
  private readonly serverExtras: HttpServerExtras;

  constructor(deps: DaemonDeps) {
    this.config = deps.config;
    this.log = deps.log;
    this.executor = deps.executor;
    this.audit = deps.audit;
    this.metrics = deps.metrics ?? createMetrics();
    this.now = deps.now ?? Date.now;
    this.random = deps.random ?? Math.random;
    this.daemonId = deps.daemonId ?? newDaemonId(deps.host ?? hostname());
    this.identity = { daemonId: this.daemonId, pid: deps.pid ?? process.pid, host: deps.host ?? hostname() };
    this.isPidAlive = deps.isPidAlive;
    this.root = path.resolve(deps.config.workspaces_root);
    const s = deps.config.scheduling;
    this.scheduler = new Scheduler<Queued>(
      { maxConcurrent: s.max_concurrent, maxPerCluster: s.max_per_cluster, queueLimit: s.queue_limit },
      this.now,
    );
    this.dedup = new DedupWindow(s.dedup_window, this.now);
    this.serveHttp = deps.http ?? true;
    this.serverExtras = deps.server ?? {};
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
    try {
      await mkdir(this.root, { recursive: true });
      const info = await stat(this.root);
      if (!info.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      this.rootId = folderId(info);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? errorMessage(err);
      throw new Error(
        `workspaces root ${this.root} cannot be created or used as a folder (${code}): create it as a directory the daemon may write, or point workspaces_root / --workspaces-root elsewhere`,
        { cause: err },
      );
    }
    if (this.stopping) return;
    // Cheap and independent of the watcher, which may miss its root going away.
    this.rootTimer = setInterval(
      () => void this.checkRoot(),
      Math.min(ROOT_CHECK_MS, this.config.scheduling.rescan_interval),
    );
    this.rootTimer.unref();
    if (this.serveHttp && this.config.http.port !== 0) {
      const { port, host } = this.config.http;
      this.http = await startHttpServer({
        ...this.serverExtras,
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
    // Scan first so that the watcher can skip finished folders (10,000 of them cost seconds to
    // watch); a catch-up scan after the watcher is ready finds whatever arrived during the scan.
    const t0 = this.now();
    await this.scan('startup');
    this.scanned = true;
    // Runs a dead daemon left on the engine (or whose removal failed) that no live run owns: not awaited,
    // since listing can take as long as the engine's API limit; the sweep logs and never throws.
    void this.executor.sweep?.([...this.active.values()].map((r) => r.runId));
    const scanMs = this.now() - t0;
    if (this.stopping) return;
    // With the root unavailable, the watcher starts once a rescan finds the root again.
    if (!this.rootDown) {
      await this.startWatcher();
      await this.scan('rescan', true);
    }
    const watchMs = this.now() - t0;
    if (this.stopping) return;
    this.rescanTimer = setInterval(() => void this.rescan(), this.config.scheduling.rescan_interval);
    this.rescanTimer.unref();
    this.ready = true;
    this.log.info(
      { root: this.root, daemonId: this.daemonId, queued: this.scheduler.depth, scanMs, watchMs },
      'daemon ready',
    );
    this.pump();
  }

  private async startWatcher(): Promise<void> {
    // A shutdown has closed (or will close) `this.watcher`; never open one after it began.
    if (this.stopping) return;
    const watcher = watchIncidents({
      root: this.root,
      onFolder: (dir, cause) => this.consider(dir, cause),
      onError: (err) => this.log.error({ err: errorMessage(err) }, 'watcher error'),
      onRootGone: () => this.rootUnavailable('the folder was removed'),
      skipFolder: (dir) => this.finals.get(dir)?.startsWith('dir:') ?? false,
    });
    this.watcher = watcher;
    await watcher.ready;
  }

  /** Every second: is the root still there, and still the folder we watch? Rescans while it is down. */
  private async checkRoot(): Promise<void> {
    if (this.stopping || !this.scanned) return;
    if (this.rootDown) return this.rescan();
    const info = await stat(this.root).catch((err: unknown) => err as NodeJS.ErrnoException);
    if (info instanceof Error) return this.rootUnavailable(`cannot stat it: ${info.code ?? info.message}`);
    if (!info.isDirectory()) return this.rootUnavailable('it is not a directory');
    if (this.rootId !== undefined && folderId(info) !== this.rootId)
      this.rootUnavailable('it was removed and re-created');
  }

  /**
   * The workspaces root was removed or cannot be listed: say so once and drop the (now blind)
   * watcher; the root check rescans every second until the root is back.
   */
  private rootUnavailable(why: string): void {
    if (this.rootDown || this.stopping) return;
    this.rootDown = why;
    const everyMs = Math.min(ROOT_CHECK_MS, this.config.scheduling.rescan_interval);
    this.log.error(
      { root: this.root, reason: why, everyMs },
      `workspaces root ${this.root} is unavailable (${why}): no incident is detected until it is back; create it or fix its permissions (checking every ${everyMs} ms)`,
    );
    const watcher = this.watcher;
    this.watcher = undefined;
    void watcher?.close();
  }

  /** A scan listed the root again: watch it afresh and catch up with what arrived meanwhile. */
  private rootRecovered(): void {
    if (!this.rootDown) return;
    this.rootDown = undefined;
    this.log.info({ root: this.root }, 'workspaces root is available again; watching it');
    if (!this.scanned || this.stopping) return;
    void stat(this.root)
      .then((info) => {
        this.rootId = folderId(info);
        return this.startWatcher();
      })
      .then(() => this.rescan())
      .catch((err: unknown) =>
        this.log.error({ root: this.root, err: errorMessage(err) }, 'restarting the watcher failed'),
      );
  }

  /** Engine reachable, skills ready (the executor), and intake started. */
  async readiness(): Promise<Readiness> {
    const intake = {
      name: 'intake',
      ok: this.ready && !this.stopping && !this.rootDown,
      detail: this.stopping
        ? 'shutting down'
        : !this.ready
          ? 'starting'
          : this.rootDown
            ? `workspaces root ${this.root} is unavailable (${this.rootDown})`
            : undefined,
    };
    const executor = await this.executor.readiness().catch((err: unknown): Readiness => ({
      ok: false,
      checks: [{ name: 'executor', ok: false, detail: errorMessage(err) }],
    }));
    return { ok: intake.ok && executor.ok, checks: [intake, ...executor.checks] };
  }

  /** Installs SIGTERM/SIGINT handlers that stop the daemon gracefully; returns a function removing them. */
  handleSignals(proc: NodeJS.Process = process): () => void {
    const onSignal = (signal: NodeJS.Signals) => {
      this.log.info({ signal }, 'signal received, shutting down');
      void this.stop();
    };
    proc.on('SIGTERM', onSignal);
    proc.on('SIGINT', onSignal);
    return () => {
      proc.off('SIGTERM', onSignal);
      proc.off('SIGINT', onSignal);
    };
  }

  /** Resolves when stop() has completed. */
  whenStopped(): Promise<void> {
    return this.stoppedSignal;
  }

  /**
   * Stops intake, lets in-flight runs finish up to scheduling.shutdown_timeout, then aborts them
   * (they end `interrupted`). Queued incidents stay `queued` on disk for the next start.
   */
  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    this.ready = false;
    // Whatever start-up has opened by the time it notices `stopping` is closed below.
    await this.starting?.catch(() => undefined);
    if (this.rescanTimer) clearInterval(this.rescanTimer);
    if (this.rootTimer) clearInterval(this.rootTimer);
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    for (const timer of this.settleTimers.values()) clearTimeout(timer);
    for (const check of this.newFolderChecks.values()) clearTimeout(check.timer);
    this.settleTimers.clear();
    await this.watcher?.close();
    const timeoutMs = this.config.scheduling.shutdown_timeout;
    const inFlight = [...this.active.values()];
    this.log.info({ inFlight: inFlight.length, timeoutMs }, 'intake stopped, waiting for in-flight runs');
    if (
      !(await settledWithin(
        inFlight.map((r) => r.done),
        timeoutMs,
      ))
    ) {
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
        !(await settledWithin(
          left.map((r) => r.done),
          graceMs,
        ))
      ) {
        this.log.error(
          { runs: [...this.active.values()].map((r) => r.runId), graceMs },
          `runs did not stop within ${graceMs} ms of being interrupted; recording them interrupted`,
        );
        await Promise.allSettled(
          [...this.active.entries()].map(([dir, run]) => this.markInterrupted(dir, run)),
        );
      }
    }
    await Promise.allSettled([...this.considering.values()].map((c) => c.done));
    await Promise.allSettled([...this.pendingAudits]);
    await this.http?.close();
    this.log.info({}, 'daemon stopped');
    this.markStopped();
  }

  /** Records a run that ignored its abort as interrupted (next start re-queues or adopts it) and frees its lease. */
  private async markInterrupted(dir: string, run: ActiveRun): Promise<void> {
    const state = await readState(dir);
    if (!state || !IN_ENGINE.has(state.state)) return;
    const reason = 'the run did not stop after daemon shutdown interrupted it';
    const runs = state.runs.map((r) => (r.id === run.runId ? { ...r, status: 'interrupted' as const } : r));
    await writeState(dir, state, {
      ...state,
      state: 'interrupted',
      reason,
      updatedAt: this.iso(),
      runs,
      unstopped: true,
    });
    await this.appendAudit(dir, {
      type: 'interrupted',
      incidentId: state.incidentId,
      runId: run.runId,
      reason,
    });
    await run.lease?.release();
  }

  /** Re-reads the root: deferred incidents, missed events, orphaned runs. */
  rescan(): Promise<void> {
    if (this.stopping) return Promise.resolve();
    this.rescanning ??= this.scan('rescan').finally(() => {
      this.rescanning = undefined;
    });
    return this.rescanning;
  }

  /** `catchUp`: right after start-up, finished folders were just looked at and are skipped without a stat. */
  private async scan(cause: 'startup' | 'rescan', catchUp = false): Promise<void> {
    let entries;
    try {
      entries = await readdir(this.root, { withFileTypes: true });
    } catch (err) {
      this.rootUnavailable(`cannot list it: ${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}`);
      return;
    }
    this.rootRecovered();
    const work: Promise<void>[] = [];
    for (const entry of entries) {
      if (entry.name.startsWith('.') || !(entry.isDirectory() || entry.isSymbolicLink())) continue;
      const dir = path.join(this.root, entry.name);
      const pending = this.considering.get(dir);
      if (pending) {
        work.push(pending.done);
        continue;
      }
      if (this.scheduler.has(dir) || this.active.has(dir)) continue;
      if (cause === 'rescan' && this.finals.has(dir)) {
        const mark = this.finals.get(dir) ?? '';
        if (catchUp && mark.startsWith('dir:')) continue;
        const now = mark.startsWith('dir:')
          ? await folderMark(dir)
          : await fileMark(path.join(dir, INCIDENT_FILE));
        if (now === mark) continue;
        this.finals.delete(dir);
      }
      work.push(this.considerNow(dir, cause));
    }
    await Promise.all(work);
    this.pump();
  }

  private consider(dir: string, cause: Cause): void {
    // Asked from inside a run (interrupted, stale payload): look again once the run is cleaned up.
    const run = this.active.get(dir);
    if (cause === 'requeue' && run) {
      run.reconsider = true;
      return;
    }
    void this.considerNow(dir, cause);
  }

  /** Inspections of one folder never overlap; a request during one re-runs it once afterwards. */
  private considerNow(dir: string, cause: Cause): Promise<void> {
    if (this.stopping) return Promise.resolve();
    const pending = this.considering.get(dir);
    if (pending) {
      pending.again = cause;
      return pending.done;
    }
    const entry: { again: Cause | undefined; done: Promise<void> } = {
      again: undefined,
      done: Promise.resolve(),
    };
    entry.done = (async () => {
      let next: Cause | undefined = cause;
      while (next !== undefined && !this.stopping) {
        entry.again = undefined;
        const current: Cause = next;
        try {
          await this.inspections.run(() => this.inspect(dir, current));
        } catch (err) {
          this.log.error(
            { workspace: path.basename(dir), cause: current, err: errorMessage(err) },
            'inspecting workspace failed',
          );
        }
        next = entry.again;
      }
      this.considering.delete(dir);
    })();
    this.considering.set(dir, entry);
    return entry.done;
  }

  private async inspect(dir: string, cause: Cause): Promise<void> {
    if (this.active.has(dir) || this.scheduler.has(dir)) return;
    const name = path.basename(dir);
    const escape = await folderEscapes(this.root, name);
    if (escape) return this.rejectEscaped(dir, escape);
    const state = await readState(dir);
    if (state && (IN_ENGINE.has(state.state) || mayStillRun(state))) {
      if (cause === 'startup' || cause === 'rescan') await this.adoptOrphan(dir, state);
      return;
    }
    if (state && FINAL_STATES.has(state.state) && state.state !== 'rejected') {
      this.finals.set(dir, await folderMark(dir));
      return;
    }
    const result = await readWorkspace(dir, { maxBytes: this.config.intake.max_incident_bytes });
    this.log.trace({ workspace: name, cause, kind: result.kind, state: state?.state }, 'workspace inspected');
    if (result.kind === 'missing') {
      if (cause === 'addDir' || cause === 'newdir') this.recheckNewFolder(dir);
      return;
    }
    this.newFolderChecks.delete(dir);
    if (
      state?.state === 'rejected' &&
      result.kind !== 'ok' &&
      'sha256' in result &&
      result.sha256 === state.incidentSha256
    ) {
      this.finals.set(dir, await fileMark(path.join(dir, INCIDENT_FILE)));
      return;
    }
    if (state?.state === 'rejected' && result.kind === 'ok' && result.sha256 === state.incidentSha256) {
      this.finals.set(dir, await fileMark(path.join(dir, INCIDENT_FILE)));
      return;
    }
    this.finals.delete(dir);
    if (result.kind === 'incomplete') {
      const ageMs = this.now() - result.mtimeMs;
      const settle = this.config.intake.write_settle;
      if (ageMs < settle) {
        // Re-read soon: chokidar drops change events within 50 ms of the previous one (no trailing event).
        this.scheduleSettle(dir, Math.min(INCOMPLETE_RECHECK_MS, settle - ageMs + 5));
        return;
      }
    }
    this.clearSettle(dir);
    // Recorded once the file is judged (not for every chunk of a write in progress).
    if (!state && cause !== 'startup' && cause !== 'rescan') {
      void this.appendAudit(dir, {
        type: 'detected',
        cause,
        incidentId: result.kind === 'ok' ? result.workspace.incident.incidentId : undefined,
      });
    }
    if (result.kind === 'ok') return this.intake(dir, result);
    if (result.kind === 'incomplete' || result.kind === 'invalid') return this.reject(dir, result);
  }

  private recheckNewFolder(dir: string): void {
    const check = this.newFolderChecks.get(dir) ?? { attempt: 0 };
    const delayMs = NEW_FOLDER_RECHECKS_MS[check.attempt];
    if (delayMs === undefined) {
      this.newFolderChecks.delete(dir);
      return;
    }
    clearTimeout(check.timer);
    check.attempt += 1;
    check.timer = setTimeout(() => this.consider(dir, 'newdir'), delayMs);
    check.timer.unref();
    this.newFolderChecks.set(dir, check);
  }

  private scheduleSettle(dir: string, delayMs: number): void {
    this.clearSettle(dir);
    const timer = setTimeout(() => {
      this.settleTimers.delete(dir);
      this.consider(dir, 'settle');
    }, delayMs);
    timer.unref();
    this.settleTimers.set(dir, timer);
  }

  private clearSettle(dir: string): void {
    const timer = this.settleTimers.get(dir);
    if (timer) clearTimeout(timer);
    this.settleTimers.delete(dir);
  }

  /** Runs `fn` holding the workspace lease briefly; false when another holder has it. */
  private async withLease(dir: string, fn: (lease: Lease) => Promise<void>): Promise<boolean> {
    const got = await acquireLease(dir, this.identity, this.leaseOptions());
    if (!got.acquired) {
      this.log.debug(
        { workspace: path.basename(dir), holder: got.holder?.holder },
        'workspace lease held elsewhere',
      );
      return false;
    }
    try {
      await fn(got.lease);
    } finally {
      await got.lease.release();
    }
    return true;
  }

  private leaseOptions() {
    return { ttlMs: this.config.scheduling.lease_ttl, now: this.now, isPidAlive: this.isPidAlive };
  }

  /** Records `rejected` with a reason saying what is wrong and how to retry (under a brief lease). */
  private async reject(
    dir: string,
    result: Extract<ReadResult, { kind: 'incomplete' | 'invalid' }>,
  ): Promise<void> {
    const name = path.basename(dir);
    await this.withLease(dir, async () => {
      const state = await readState(dir);
      if (
        state &&
        (IN_ENGINE.has(state.state) || (FINAL_STATES.has(state.state) && state.state !== 'rejected'))
      )
        return;
      if (
        state?.state === 'rejected' &&
        state.incidentSha256 === result.sha256 &&
        state.reason === result.reason
      )
        return;
      const incidentId = state?.incidentId ?? name;
      await writeState(dir, state, {
        incidentId,
        state: 'rejected',
        attempts: state?.attempts ?? 0,
        reason: result.reason,
        updatedAt: this.iso(),
        runs: state?.runs ?? [],
        incidentSha256: result.sha256,
      });
      await this.appendAudit(dir, { type: 'rejected', incidentId, reason: result.reason });
      this.metrics.incident('rejected');
      this.log.warn({ incidentId, workspace: name, reason: result.reason }, 'incident rejected');
    });
    this.finals.set(dir, await fileMark(path.join(dir, INCIDENT_FILE)));
  }

  /** A folder escaping the root is never written into: its state goes under `<root>/.triage/escaped/`. */
  private async rejectEscaped(dir: string, reason: string): Promise<void> {
    const name = path.basename(dir);
    const file = path.join(this.root, TRIAGE_DIR, 'escaped', `${encodeURIComponent(name)}.state.json`);
    this.finals.set(dir, await folderMark(dir));
    const existing = await readFile(file, 'utf8').then(
      (t) => JSON.parse(t) as StateFile,
      () => undefined,
    );
    if (existing?.reason === reason) return;
    await writeState(
      dir,
      existing,
      { incidentId: name, state: 'rejected', attempts: 0, reason, updatedAt: this.iso(), runs: [] },
      file,
    );
    await this.appendAudit(
      path.join(this.root, TRIAGE_DIR, 'escaped'),
      { type: 'rejected', incidentId: name, reason },
      true,
    );
    this.metrics.incident('rejected');
    this.log.warn({ workspace: name, reason }, 'workspace folder rejected');
  }

  /** A valid incident: duplicate → rejected, no room → deferred, else `queued` and into the scheduler. */
  private async intake(dir: string, result: Extract<ReadResult, { kind: 'ok' }>): Promise<void> {
    const { workspace, sha256 } = result;
    const { incident } = workspace;
    const log = this.log.child({ incidentId: incident.incidentId, workspace: workspace.name });
    let enqueue: { notBefore: number } | undefined;
    await this.withLease(dir, async () => {
      const state = await readState(dir);
      if (
        state &&
        (IN_ENGINE.has(state.state) || (FINAL_STATES.has(state.state) && state.state !== 'rejected'))
      )
        return;
      if (state?.state === 'rejected' && state.incidentSha256 === sha256) return;
      const base = {
        incidentId: incident.incidentId,
        attempts: state?.state === 'rejected' ? 0 : (state?.attempts ?? 0),
        updatedAt: this.iso(),
        runs: state?.runs ?? [],
        incidentSha256: sha256,
      };
      if (!state || state.state === 'rejected')
        void this.appendAudit(dir, { type: 'validated', incidentId: incident.incidentId, sha256 });
      const duplicate = this.dedup.check(
        DedupWindow.keyOf(incident, incident.namespace),
        incident.incidentId,
      );
      if (duplicate && (!state || state.state === 'rejected')) {
        const reason =
          `duplicate of ${duplicate.incidentId} (same cluster, resource and faultType ${Math.round(duplicate.ageMs / 1000)} s earlier) ` +
          `inside the ${formatMs(this.config.scheduling.dedup_window)} dedup window: not run; re-save incident.json after the window to run it`;
        await writeState(dir, state, {
          ...base,
          state: 'rejected',
          reason,
          duplicateOf: duplicate.incidentId,
        });
        await this.appendAudit(dir, {
          type: 'duplicate',
          incidentId: incident.incidentId,
          duplicateOf: duplicate.incidentId,
        });
        this.metrics.incident('duplicate');
        log.info({ duplicateOf: duplicate.incidentId }, 'incident is a duplicate');
        return;
      }
      if (this.scheduler.depth + this.reserved >= this.config.scheduling.queue_limit) {
        this.haveDeferred = true;
        if (state?.state !== 'deferred') {
          const reason = `queue full (scheduling.queue_limit ${this.config.scheduling.queue_limit}); picked up by the next rescan`;
          await writeState(dir, state, { ...base, state: 'deferred', reason });
          await this.appendAudit(dir, { type: 'deferred', incidentId: incident.incidentId, reason });
          this.metrics.incident('deferred');
          log.info({ queueLimit: this.config.scheduling.queue_limit }, 'queue full, incident deferred');
        }
        return;
      }
      // Already queued with these bytes (a restart, another replica): keep its retry time. Queued
      // with other bytes (re-saved meanwhile): record the new hash, which is what the run checks.
      const sameQueued = state?.state === 'queued' && state.incidentSha256 === sha256;
      const retryAt = sameQueued && state.retryAt ? Date.parse(state.retryAt) : 0;
      this.reserved++;
      enqueue = { notBefore: Number.isFinite(retryAt) ? retryAt : 0 };
      if (!sameQueued) {
        await writeState(dir, state, { ...base, state: 'queued' });
        void this.appendAudit(dir, {
          type: state?.state === 'interrupted' ? 'requeued' : 'queued',
          incidentId: incident.incidentId,
        });
      }
    }).finally(() => {
      if (enqueue) this.reserved--;
    });
    if (!enqueue) return;
    this.enqueue({ workspace, sha256, arrivedAt: result.mtimeMs }, enqueue.notBefore);
    log.info(
      { severity: incident.severity, cluster: incident.cluster, queued: this.scheduler.depth },
      'incident queued',
    );
    this.pump();
  }

  private enqueue(payload: Queued, notBefore: number): void {
    const { workspace } = payload;
    // Full (a retry coming back to a queue that filled meanwhile): it stays `queued` on disk and the
    // rescan that the queue draining triggers brings it back.
    const result = this.scheduler.enqueue({
      key: workspace.dir,
      cluster: workspace.incident.cluster,
      severity: workspace.incident.severity,
      notBefore,
      arrivedAt: payload.arrivedAt,
      payload,
    });
    if (result === 'full') this.haveDeferred = true;
    this.metrics.queueDepth(this.scheduler.depth);
  }

  /** Starts every queued run the limits allow; arms a timer for the next retry. */
  private pump(): void {
    if (this.stopping || !this.scanned) return;
    for (let entry = this.scheduler.next(); entry; entry = this.scheduler.next()) this.startRun(entry);
    this.metrics.queueDepth(this.scheduler.depth);
    this.metrics.inFlight(this.scheduler.inFlight);
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

  private startRun(entry: QueueEntry<Queued>): void {
    const controller = new AbortController();
    const run: ActiveRun = { runId: '', controller, done: Promise.resolve() };
    this.active.set(entry.key, run);
    run.done = this.execute(entry.payload, run)
      .catch((err: unknown) => {
        this.log.error(
          { workspace: path.basename(entry.key), err: errorMessage(err) },
          'run bookkeeping failed',
        );
        return undefined;
      })
      .then((retry) => {
        this.scheduler.done(entry.key);
        this.active.delete(entry.key);
        if (retry && !this.stopping) this.enqueue(entry.payload, retry.notBefore);
        else if (run.reconsider) this.consider(entry.key, 'requeue');
        this.pump();
      });
  }

  /** Claims, runs and records one incident; returns a retry time when a transient failure is retried. */
  private async execute(queued: Queued, run: ActiveRun): Promise<{ notBefore: number } | undefined> {
    const { workspace } = queued;
    const dir = workspace.dir;
    const got = await acquireLease(dir, this.identity, this.leaseOptions());
    if (!got.acquired) return undefined;
    const lease = got.lease;
    run.lease = lease;
    let state: StateFile | undefined;
    let runId: string;
    let attempt: number;
    let log: Logger;
    // Until `record` takes over (it releases the lease itself), any failure frees the lease here.
    try {
      state = await readState(dir);
      if (!state || !RUNNABLE.has(state.state) || state.incidentSha256 !== queued.sha256) {
        await lease.release();
        if (state?.incidentSha256 !== queued.sha256 && !this.stopping) this.consider(dir, 'requeue');
        return undefined;
      }
      runId = newRunId(this.now());
      run.runId = runId;
      attempt = state.attempts + 1;
      log = this.log.child({ incidentId: workspace.incident.incidentId, workspace: workspace.name, runId });
      // Another replica may have recorded it deferred or interrupted since we queued it: back to queued first.
      if (state.state !== 'queued')
        state = await writeState(dir, state, { ...state, state: 'queued', updatedAt: this.iso() });
      // Awaited: the trail records the claim before the agent starts (and no append is in flight at launch).
      await this.appendAudit(dir, {
        type: 'claimed',
        incidentId: workspace.incident.incidentId,
        runId,
        holder: lease.info.holder,
        attempt,
      });
      state = await writeState(dir, state, {
        ...state,
        state: 'preparing',
        attempts: attempt,
        reason: undefined,
        retryAt: undefined,
        updatedAt: this.iso(),
        runs: [...state.runs, { id: runId, status: 'running' }],
      });
      state = await writeState(dir, state, { ...state, state: 'running', updatedAt: this.iso() });
    } catch (err) {
      await lease.release().catch(() => undefined);
      throw err;
    }
    log.info({ attempt }, 'run started');
    const started = this.now();
    const outcome = await this.supervise(lease, run, log, () =>
      this.executor.run({ workspace, runId, attempt, signal: run.controller.signal, log }),
    );
    if (outcome === 'lost') return undefined;
    return this.record(
      dir,
      state,
      runId,
      attempt,
      outcome,
      lease,
      log,
      started,
      workspace.incident.incidentId,
    );
  }

  /** Renews the lease while `work` runs; a lost lease aborts the run and nothing more is written. */
  private async supervise(
    lease: Lease,
    run: ActiveRun,
    log: Logger,
    work: () => Promise<RunOutcome | 'gone'>,
  ): Promise<RunOutcome | 'gone' | 'lost'> {
    let lost = false;
    const renew = setInterval(
      () =>
        void lease.renew().then(
          (ok) => {
            if (ok || lost) return;
            lost = true;
            log.error(
              { lease: lease.file },
              'lease lost to another holder; stopping the run without recording it',
            );
            run.controller.abort(new Error('lease lost'));
          },
          (err: unknown) => log.warn({ err: errorMessage(err) }, 'lease renewal failed'),
        ),
      Math.max(50, Math.floor(this.config.scheduling.lease_ttl / 3)),
    );
    let outcome: RunOutcome | 'gone';
    try {
      outcome = await work();
    } catch (err) {
      outcome = { status: 'failed', transient: isTransient(err), reason: errorMessage(err) };
    } finally {
      clearInterval(renew);
    }
    return lost ? 'lost' : outcome;
  }

  private async record(
    dir: string,
    state: StateFile,
    runId: string,
    attempt: number,
    outcome: RunOutcome | 'gone',
    lease: Lease,
    log: Logger,
    started: number,
    incidentId: string,
  ): Promise<{ notBefore: number } | undefined> {
    const decision = decideOutcome(outcome, attempt, this.config.scheduling, this.random);
    const runs = state.runs.map((r) => (r.id === runId ? { ...r, status: decision.runStatus } : r));
    const notBefore = decision.retryDelayMs === undefined ? undefined : this.now() + decision.retryDelayMs;
    try {
      if (outcome !== 'gone') this.metrics.runDuration((this.now() - started) / 1000, outcome.status);
      await writeState(dir, state, {
        ...state,
        unstopped: undefined,
        state: decision.state,
        reason: decision.reason,
        retryAt: notBefore === undefined ? undefined : new Date(notBefore).toISOString(),
        updatedAt: this.iso(),
        runs,
      });
      if (decision.audit) {
        await this.appendAudit(dir, {
          type: decision.audit,
          incidentId,
          runId,
          attempt,
          delayMs: decision.retryDelayMs,
          reason: decision.reason,
        });
      }
      if (decision.metric) this.metrics.incident(decision.metric);
      const meta = { status: outcome === 'gone' ? 'gone' : outcome.status, reason: decision.reason, attempt };
      if (decision.state === 'succeeded') log.info(meta, 'run succeeded');
      else if (outcome === 'gone') log.info(meta, 'orphaned run was gone, re-queued');
      else if (decision.state === 'queued')
        log.warn({ ...meta, delayMs: decision.retryDelayMs }, 'transient failure, retry scheduled');
      else log.warn(meta, decision.state === 'interrupted' ? 'run interrupted' : 'run failed');
      if (decision.state === 'succeeded' || decision.state === 'failed')
        this.finals.set(dir, await folderMark(dir));
      if (decision.state === 'interrupted' && !this.stopping) this.consider(dir, 'requeue');
    } finally {
      await this.appendAudit(dir, { type: 'released', incidentId, runId });
      await lease.release();
    }
    if (outcome === 'gone') return { notBefore: 0 };
    return notBefore === undefined ? undefined : { notBefore };
  }

  /** A run recorded as preparing/running with no live holder: adopt it from the engine, or re-queue it. */
  private async adoptOrphan(dir: string, seen: StateFile): Promise<void> {
    const leaseState = await inspectLease(dir, this.identity, this.leaseOptions());
    if (leaseState && !leaseState.stale) return;
    const got = await acquireLease(dir, this.identity, this.leaseOptions());
    if (!got.acquired) return;
    const found = await readState(dir);
    if (!found || !(IN_ENGINE.has(found.state) || mayStillRun(found))) {
      await got.lease.release();
      if (found?.state !== seen.state) this.consider(dir, 'requeue');
      return;
    }
    let state = found;
    if (mayStillRun(found)) {
      // Its run ignored the stop at the last shutdown: it may still be on the engine. Adopt it rather
      // than start a second agent beside it; the engine answers 'gone' when it has ended.
      const { unstopped: _unstopped, ...rest } = found;
      state = { ...rest, state: 'running', updatedAt: this.iso() };
      await writeState(dir, found, state);
    }
    const result = await readWorkspace(dir, { maxBytes: this.config.intake.max_incident_bytes });
    const runId =
      [...state.runs].reverse().find((r) => r.status === 'running')?.id ??
      state.runs.at(-1)?.id ??
      newRunId(this.now());
    const log = this.log.child({ incidentId: state.incidentId, workspace: path.basename(dir), runId });
    if (result.kind !== 'ok') {
      await writeState(dir, state, {
        ...state,
        state: 'interrupted',
        reason: 'orphaned run whose incident.json is no longer valid',
        updatedAt: this.iso(),
      });
      await got.lease.release();
      this.consider(dir, 'requeue');
      return;
    }
    await this.appendAudit(dir, {
      type: 'adopted',
      incidentId: state.incidentId,
      runId,
      previousHolder: got.tookOver?.holder,
      holder: got.lease.info.holder,
    });
    log.info({ previousHolder: got.tookOver?.holder }, 'adopting orphaned run');
    const controller = new AbortController();
    const run: ActiveRun = { runId, controller, done: Promise.resolve(), lease: got.lease };
    this.active.set(dir, run);
    this.scheduler.markRunning(dir, result.workspace.incident.cluster);
    this.metrics.inFlight(this.scheduler.inFlight);
    const started = this.now();
    run.done = (async () => {
      let retry: { notBefore: number } | undefined;
      try {
        const outcome = await this.supervise(got.lease, run, log, () =>
          this.executor.adopt({ workspace: result.workspace, runId, signal: controller.signal, log }),
        );
        if (outcome !== 'lost')
          retry = await this.record(
            dir,
            state,
            runId,
            state.attempts,
            outcome,
            got.lease,
            log,
            started,
            state.incidentId,
          );
      } catch (err) {
        log.error({ err: errorMessage(err) }, 'adopting run failed');
      } finally {
        this.scheduler.done(dir);
        this.active.delete(dir);
        if ((retry || run.reconsider) && !this.stopping) this.consider(dir, 'requeue');
        this.pump();
      }
    })();
  }

  /**
   * Appends to the workspace's audit log. The log serialises appends per workspace, so the hot path
   * (detected, validated, queued, claimed) need not wait for each fsync; `released` is awaited
   * before the lease goes, and shutdown waits for whatever is still pending.
   */
  private appendAudit(dir: string, event: AuditEvent, isTriageDir = false): Promise<void> {
    const pending = this.audit.append(isTriageDir ? dir : triageDir(dir), event).then(
      () => undefined,
      (err: unknown) =>
        this.log.error(
          { workspace: path.basename(dir), type: event.type, err: errorMessage(err) },
          'audit append failed',
        ),
    );
    this.pendingAudits.add(pending);
    void pending.finally(() => this.pendingAudits.delete(pending));
    return pending;
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }
}
