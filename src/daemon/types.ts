import type { AuditLog } from '../audit/log.js';
import type { Config } from '../config/schema.js';
import type { LeaderElector } from '../election/elector.js';
import type { IncidentStore, StateChange } from '../incident/store.js';
import type { IntakeHooks } from '../intake/webhooks/hooks.js';
import type { Logger } from '../log/logger.js';
import type { RunExecutor } from '../run/types.js';
import type { DaemonMetrics } from '../server/metrics.js';
import type { HttpServerExtras } from '../server/types.js';

// What the daemon is built from and what it offers the parts around it (HTTP routes, the composition
// root in service.ts).

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
  /** Serve HTTP when http.port is not 0 (default true). */
  http?: boolean;
  /** Told of every state change (status index, notifications). */
  onChange?: (change: StateChange) => void;
  /** Every alert behind an incident whose run already finished resolved (notifications). */
  onResolvedAfterRun?: (dir: string, at: string) => void;
  /** Passed through to the HTTP server: token, limits, route modules (intake, status API); given the daemon. */
  server?: HttpServerExtras | ((daemon: DaemonHost) => HttpServerExtras);
  /** Leader election (leader_election.enabled): intake, scheduling and runs start only once this replica leads. */
  leadership?: Leadership;
}

/** What the daemon asks of the leader election (src/election/elector.ts). */
export interface Leadership extends Pick<
  LeaderElector,
  'start' | 'whenLeader' | 'stop' | 'state' | 'holder'
> {
  /** Why the Service may not route to this replica as it should (its pod's role label could not be set). */
  readonly problem?: string | undefined;
}

/** What the daemon offers the routes it serves: intake's hooks, and retry's store, identity and rescan. */
export interface DaemonHost {
  readonly daemonId: string;
  readonly store: IncidentStore;
  /** What HTTP intake asks of the lifecycle (incident state, alerts resolved). */
  readonly intakeHooks: IntakeHooks;
  /** Looks at a workspace folder again now (an event the watcher cannot see, such as a retry). */
  reconsider(dir: string): Promise<void>;
  /** Where intake counts the alerts it receives and refuses (/metrics). */
  readonly metrics: Pick<DaemonMetrics, 'intake'>;
}

export interface DaemonStats {
  queued: number;
  inFlight: number;
  ready: boolean;
  stopping: boolean;
}

/**
 * The daemon's lifecycle, one value: created → starting (scanned once the start-up scan is done: runs
 * may start) → ready → stopping → stopped. A stop during start-up waits for the start (`started`).
 */
export type DaemonLifecycle =
  | { phase: 'created' }
  | { phase: 'starting'; started: Promise<void>; scanned: boolean }
  | { phase: 'ready'; started: Promise<void> }
  | { phase: 'stopping'; stopped: Promise<void> }
  | { phase: 'stopped'; stopped: Promise<void> };
