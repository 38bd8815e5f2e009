import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { AuditLog } from '../audit/log.js';
import { canonicalCluster, clusterRegistry } from '../clusters/registry.js';
import type { Env } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { resolveSecrets } from '../config/secrets.js';
import type { StateChange } from '../incident/store.js';
import type { Logger } from '../log/logger.js';
import type { Redactor } from '../log/redact.js';
import { createResultsOut, type ResultsOut } from '../notify/results-out.js';
import { buildRuntime } from '../run/runtime.js';
import { exposureProblem } from '../server/exposure.js';
import { allowedHosts, httpLimits } from '../server/limits.js';
import { createMetrics } from '../server/metrics.js';
import { feedbackRoutes } from '../server/routes/feedback.js';
import { createIntakeRoutes } from '../server/routes/intake.js';
import { createStatusRoutes } from '../server/routes/status.js';
import type { HttpServerExtras } from '../server/types.js';
import { registerAnswerMetrics } from '../status/answer-metrics.js';
import { IncidentIndex } from '../status/incident-index.js';
import { errorMessage, UsageError } from '../util/errors.js';
import { Daemon } from './daemon.js';
import { newDaemonId } from './ids.js';
import { onReload, type ConfigReader } from './reload.js';
import { electLeader } from './leadership.js';
import { startPruning } from './pruning.js';
import type { DaemonHost } from './types.js';

// The daemon as a service: the one place that builds every part from a loaded configuration and names
// who listens to whom. The run pipeline (runtime), results out (notifications), the status index, the
// leader election, the HTTP routes and retention are made here and handed to the Daemon, whose store
// tells the subscribers below of every change it applies. `triage-runner daemon` parses its flags,
// loads the configuration and calls runDaemonService.

export interface ServiceOptions {
  /** The process environment (secrets, the pod's name and namespace, HOME). */
  env: Env;
  /** Create the workspaces root when it does not exist (its parent must). */
  createRoot: boolean;
  /** Where SIGTERM/SIGINT arrive (the daemon stops on the first, forces on the second); default `process`. */
  signals?: NodeJS.Process;
  /** This replica lost the leader Lease: the process must end at once (see daemon/leadership.ts). */
  onLeadershipLost: () => void;
  /** Reads the configuration again on SIGHUP (without it SIGHUP is logged and ignored). */
  reload?: ConfigReader;
}

/** The daemon could not start (the engine, the HTTP port, the workspaces root): said as is. */
export class DaemonStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DaemonStartError';
  }
}

/** A listener of the incident store: told of every change it applies, in the order of the list. */
export type StateSubscriber = (change: StateChange) => void;

/** Every part of a daemon, built and not started. */
export interface DaemonService {
  daemon: Daemon;
  /** The status index: status, the API and the status page read it. */
  index: IncidentIndex;
  /** Notifications; undefined when no sink is configured. */
  results: ResultsOut | undefined;
  log: Logger;
  audit: AuditLog;
}

/**
 * A workspaces root that does not exist is a mistake (a typo, an unmounted volume) unless the user asked
 * for it to be created: watching a folder nobody writes into would wait forever.
 */
async function ensureRoot(root: string, create: boolean): Promise<void> {
  const exists = await stat(root).then(
    () => true,
    (err: NodeJS.ErrnoException) => err.code !== 'ENOENT',
  );
  if (exists) return;
  if (!create)
    throw new UsageError(
      `daemon cannot start: workspaces root ${root} does not exist: check workspaces_root / --workspaces-root for a typo or an unmounted volume, create it (mkdir ${root}), or pass --create-root`,
    );
  try {
    await mkdir(root);
  } catch (err) {
    throw new UsageError(
      `daemon cannot start: workspaces root ${root} cannot be created (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}): create its parent ${path.dirname(root)} first, or point workspaces_root elsewhere`,
    );
  }
}

/** Builds every part of the daemon (nothing is started); configuration problems throw UsageError. */
export async function composeDaemon(config: Config, options: ServiceOptions): Promise<DaemonService> {
  // Refused before anything is made: an exposed listener without a token (or one short enough to guess).
  const token = resolveSecrets(config, options.env).values.HTTP_TOKEN;
  const exposed = config.http.port === 0 ? undefined : exposureProblem(config.http.host, token);
  if (exposed) throw new UsageError(`daemon cannot start: ${exposed}`);
  // The root first: the audit key is made in its .triage/ folder on the first start.
  await ensureRoot(config.workspaces_root, options.createRoot);
  const metrics = createMetrics();
  const daemonId = newDaemonId();
  const runtime = buildRuntime(options.env, config, { daemonId, metrics });
  const { log, audit, secrets } = runtime;
  // Results out: a run's start and a finished incident are delivered to the sinks, through the outbox.
  const results = createResultsOut(config, { ...runtime, registry: metrics.registry });
  // The status index: kept from every change, and every folder read once after start-up.
  const index = new IncidentIndex({
    root: config.workspaces_root,
    log,
    canonicalCluster: canonicalCluster(clusterRegistry(config)),
  });
  registerAnswerMetrics(metrics.registry, index);
  const leadership = config.leader_election.enabled
    ? await electLeader(config, daemonId, { env: options.env, onLost: options.onLeadershipLost }, log)
    : undefined;
  // Who the store tells of each change it applies (the store counts its own metric).
  const subscribers: readonly StateSubscriber[] = [
    (change) => index.apply(change),
    ...(results ? [(change: StateChange) => results.onChange(change)] : []),
  ];
  const daemon = new Daemon({
    ...{ config, log, executor: runtime.executor, audit, metrics, daemonId },
    ...(leadership ? { leadership } : {}),
    onChange: (change) => subscribers.forEach((tell) => tell(change)),
    // The list marks an answered incident resolved at once; sinks that showed its answer are told.
    onResolvedAfterRun: (dir: string) => {
      void index.refresh(path.basename(dir));
      results?.onResolvedAfterRun(dir);
    },
    server: (host) =>
      httpParts(
        config,
        { token, secrets, redactor: runtime.redactor, index, results, audit, log, daemonId },
        host,
      ),
  });
  return { daemon, index, results, log, audit };
}

/** The HTTP server's token, limits and routes: intake, the status API and page, feedback. */
function httpParts(
  config: Config,
  parts: {
    token: string | undefined;
    secrets: Record<string, string>;
    redactor: Redactor;
    index: IncidentIndex;
    results: ResultsOut | undefined;
    audit: AuditLog;
    log: Logger;
    daemonId: string;
  },
  host: DaemonHost,
): HttpServerExtras {
  const { token, secrets, redactor, index, results, audit, log, daemonId } = parts;
  return {
    ...(token ? { token } : {}),
    limits: httpLimits(config),
    allowedHosts: allowedHosts(config),
    routes: [
      createIntakeRoutes({
        ...{ config, secrets, hooks: host.intakeHooks, identity: { daemonId }, log },
        metrics: host.metrics.intake,
      }),
      ...createStatusRoutes({ index, host, lease: { ttlMs: config.scheduling.lease_ttl }, redactor, log }),
      feedbackRoutes({
        root: config.workspaces_root,
        audit,
        ...(secrets.SLACK_SIGNING_SECRET ? { slackSigningSecret: secrets.SLACK_SIGNING_SECRET } : {}),
        onRecorded: (folder) => {
          void index.refresh(folder);
          results?.onFeedback(path.join(config.workspaces_root, folder));
        },
        log,
      }),
    ],
    log,
  };
}

/** Reads every folder into the status index once after start-up, then keeps sweeping it. */
function loadIndex(index: IncidentIndex, config: Config, log: Logger): void {
  void index.load().then(
    (loaded) => {
      log.info({ incidents: loaded.count, ms: loaded.ms }, 'status index loaded');
      index.startSweeping(config.scheduling.rescan_interval);
    },
    (err: unknown) =>
      log.error(
        { err: errorMessage(err) },
        'status index: the workspaces root could not be read; status lists only the incidents that change',
      ),
  );
}

/**
 * Builds the daemon and runs it until SIGTERM/SIGINT; resolves once it has stopped. A SIGHUP with a
 * valid configuration builds and starts it again with that one. Configuration problems throw
 * UsageError; a start that fails (engine, port, root) throws DaemonStartError.
 */
export async function runDaemonService(config: Config, options: ServiceOptions): Promise<void> {
  let next: Config | undefined = config;
  while (next) next = await serveOnce(next, options);
}

/** One daemon from start to stop; the configuration to start again with when SIGHUP asked for it. */
async function serveOnce(config: Config, options: ServiceOptions): Promise<Config | undefined> {
  const { daemon, index, results, log, audit } = await composeDaemon(config, options);
  const proc = options.signals ?? process;
  let restartWith: Config | undefined;
  // A stop asked for (SIGTERM/SIGINT) wins over a reload under way.
  const stopAsked = () => (restartWith = undefined);
  proc.on('SIGTERM', stopAsked);
  proc.on('SIGINT', stopAsked);
  const removeReload = options.reload
    ? onReload(proc, log, options.reload, (fresh) => {
        restartWith = fresh;
        void daemon.stop();
      })
    : ignoreHangUp(proc, log);
  const removeSignals = daemon.handleSignals(options.signals);
  const removeHandlers = () => {
    removeSignals();
    removeReload();
    proc.off('SIGTERM', stopAsked);
    proc.off('SIGINT', stopAsked);
  };
  try {
    await daemon.start();
  } catch (err) {
    removeHandlers();
    index.close();
    await daemon.stop();
    throw new DaemonStartError(`daemon failed to start: ${errorMessage(err)}`, { cause: err });
  }
  log.info(
    { root: config.workspaces_root, engine: config.engine, agent: config.agent.name, port: daemon.httpPort },
    'triage-runner daemon started',
  );
  results?.resume(daemon.root);
  loadIndex(index, config, log);
  const pruner = startPruning(daemon.root, config.memory.retention, audit, log);
  await daemon.whenStopped();
  await pruner.stop();
  index.close();
  removeHandlers();
  // After the runs: what is not delivered in time stays in the outbox for the next start.
  await results?.close(10_000);
  return restartWith;
}

/** Without a way to read the configuration again, SIGHUP is said and changes nothing (never a silent exit). */
function ignoreHangUp(proc: NodeJS.Process, log: Logger): () => void {
  const onHangUp = () =>
    log.warn(
      { signal: 'SIGHUP' },
      'SIGHUP received: this daemon cannot read its configuration again; ignored',
    );
  proc.on('SIGHUP', onHangUp);
  return () => proc.off('SIGHUP', onHangUp);
}
