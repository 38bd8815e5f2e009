import { hostname } from 'node:os';
import { clusterProblem, clusterRegistry, schedulingKey } from '../clusters/registry.js';
import { IncidentStore } from '../incident/store.js';
import { DedupStore } from '../intake/dedup.js';
import type { LeaseIdentity, LeaseOptions } from '../workspace/lease.js';
import type { IntakeHooks } from '../intake/webhooks/hooks.js';
import { errorMessage } from '../util/errors.js';
import { createAlertHooks, resolvedBeforeRun } from './alert-hooks.js';
import type { DaemonDeps } from './types.js';
import { Inspector } from './inspector.js';
import { RootMonitor } from './root-monitor.js';
import { RunQueue } from './run-queue.js';
import type { QueuedIncident, SlotDeps } from './run-slot.js';

// Builds the daemon's parts from its dependencies and the few things they ask of the daemon.

export interface DaemonCallbacks {
  /** A run of this folder is in the queue or running here. */
  isQueued: (dir: string) => boolean;
  isActive: (dir: string) => boolean;
  /** Incident.json changed during the run of this folder: look at it again after (false: no run here). */
  markChanged: (dir: string) => boolean;
  adopt: (dir: string, cluster: string) => void;
  enqueue: (queued: QueuedIncident, notBefore: number) => void;
  rescan: () => void;
  diskFull: (why: string | undefined) => void;
}

export interface DaemonParts {
  store: IncidentStore;
  queue: RunQueue;
  slotDeps: SlotDeps;
  intakeHooks: IntakeHooks;
  inspector: Inspector;
  monitor: RootMonitor;
}

export function wireParts(
  deps: DaemonDeps & { daemonId: string; root: string; now: () => number },
  metrics: { runDuration(seconds: number, status: string, cluster?: string): void } & ConstructorParameters<
    typeof IncidentStore
  >[0]['metrics'],
  cb: DaemonCallbacks,
): DaemonParts {
  const { config, log, now, root } = deps;
  const s = config.scheduling;
  const identity: LeaseIdentity = {
    daemonId: deps.daemonId,
    pid: deps.pid ?? process.pid,
    host: deps.host ?? hostname(),
  };
  const lease: LeaseOptions = {
    ttlMs: s.lease_ttl,
    now,
    ...(deps.isPidAlive ? { isPidAlive: deps.isPidAlive } : {}),
  };
  const maxIncidentBytes = config.intake.max_incident_bytes;
  const store = new IncidentStore({
    ...{ audit: deps.audit, log, now, policy: s },
    ...(metrics ? { metrics } : {}),
    ...(deps.random ? { random: deps.random } : {}),
    onChange: (change) => deps.onChange?.(change),
    onDiskFull: (full, err) => cb.diskFull(full ? errorMessage(err) : undefined),
  });
  const clusters = clusterRegistry(config);
  const clusterKey = schedulingKey(clusters);
  const queue = new RunQueue(
    { maxConcurrent: s.max_concurrent, maxPerCluster: s.max_per_cluster, queueLimit: s.queue_limit },
    now,
    clusterKey,
  );
  const runDuration = (seconds: number, status: string, cluster?: string) =>
    metrics?.runDuration(seconds, status, cluster);
  const slotDeps: SlotDeps = {
    store,
    executor: deps.executor,
    log,
    identity,
    lease,
    now,
    maxIncidentBytes,
    runDuration,
  };
  const dedup = new DedupStore(root, s.dedup_window, now);
  slotDeps.resolvedBeforeRun = resolvedBeforeRun({
    ...{ store, dedup, maxIncidentBytes },
    dequeue: (dir) => queue.scheduler.remove(dir),
  });
  const intakeHooks = createAlertHooks({
    ...{ store, dedup, identity, lease, maxIncidentBytes, log },
    isActive: cb.isActive,
    dequeue: (dir) => queue.scheduler.remove(dir),
    ...(deps.onResolvedAfterRun ? { resolvedAfterRun: deps.onResolvedAfterRun } : {}),
  });
  const inspector = new Inspector({
    ...{ root, store, dedup, log, identity, lease, now },
    // The monitor is made below; a folder is judged final only once intake runs.
    watch: {
      forget: (dir) => monitor.forget(dir),
      watchAgain: (dir) => monitor.watchAgain(dir),
    },
    intake: {
      maxBytes: maxIncidentBytes,
      writeSettleMs: config.intake.write_settle,
      incompleteGraceMs: config.intake.incomplete_grace,
      dedupWindowMs: s.dedup_window,
    },
    isBusy: (dir) => cb.isQueued(dir) || cb.isActive(dir),
    markChanged: cb.markChanged,
    adopt: (dir, cluster) => cb.adopt(dir, clusterKey(cluster)),
    clusterProblem: (cluster) => clusterProblem(clusters, cluster),
    reserve: () => queue.reserve(),
    enqueue: cb.enqueue,
    queueLimit: s.queue_limit,
  });
  const monitor = new RootMonitor({
    root,
    log,
    checkMs: s.rescan_interval,
    onFolder: (dir, cause) => void inspector.consider(dir, cause),
    onRescanNeeded: cb.rescan,
    skipFolder: (dir) => inspector.unwatched.has(dir),
  });
  return { store, queue, slotDeps, intakeHooks, inspector, monitor };
}
