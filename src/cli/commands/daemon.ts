import { Option, type Command } from 'commander';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { AGENT_NAMES, ENGINE_NAMES } from '../../config/schema.js';
import { Daemon } from '../../daemon/daemon.js';
import { newDaemonId } from '../../daemon/ids.js';
import { exposureProblem } from '../../server/exposure.js';
import { allowedHosts, httpLimits } from '../../server/limits.js';
import { createMetrics } from '../../server/metrics.js';
import { createIntakeRoutes } from '../../server/routes/intake.js';
import type { StateChange } from '../../incident/store.js';
import type { Config } from '../../config/schema.js';
import type { Leadership } from '../../daemon/wiring.js';
import type { Logger } from '../../log/logger.js';
import { createResultsOut } from '../../notify/results-out.js';
import { registerAnswerMetrics } from '../../status/answer-metrics.js';
import { pruneRoot } from '../../audit/prune.js';
import type { AuditLog } from '../../audit/log.js';
import { feedbackRoutes } from '../../server/routes/feedback.js';
import { createStatusRoutes } from '../../server/routes/status.js';
import { IncidentIndex } from '../../status/incident-index.js';
import { errorMessage } from '../../util/errors.js';
import { flagLayer, intOption } from '../config.js';
import { checkedConfig } from '../config-check.js';
import { CliExit, EXIT, type CliIO } from '../io.js';
import { buildRuntime } from '../runtime.js';
import { resolveSecrets } from '../../config/secrets.js';

// `triage-runner daemon`: the long-running service (watch, claim, queue, run, record).

interface DaemonOptions {
  workspacesRoot?: string;
  engine?: string;
  agent?: string;
  maxConcurrent?: number;
  httpPort?: number;
  createRoot?: boolean;
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
    throw new CliExit(
      EXIT.usage,
      `daemon cannot start: workspaces root ${root} does not exist: check workspaces_root / --workspaces-root for a typo or an unmounted volume, create it (mkdir ${root}), or pass --create-root`,
    );
  try {
    await mkdir(root);
  } catch (err) {
    throw new CliExit(
      EXIT.usage,
      `daemon cannot start: workspaces root ${root} cannot be created (${(err as NodeJS.ErrnoException).code ?? errorMessage(err)}): create its parent ${path.dirname(root)} first, or point workspaces_root elsewhere`,
    );
  }
}

export function register(program: Command, io: CliIO, done: (code: number) => void): void {
  program
    .command('daemon')
    .description('run the service: watch the workspaces root and investigate each incident once')
    .option('--workspaces-root <dir>', 'folder watched for <incident>/incident.json')
    .option('--create-root', 'create the workspaces root when it does not exist (its parent must)')
    .addOption(new Option('--engine <engine>', 'where agents run').choices(ENGINE_NAMES))
    .addOption(new Option('--agent <name>', 'which agent CLI investigates').choices(AGENT_NAMES))
    .option('--max-concurrent <n>', 'runs in flight at once', intOption('--max-concurrent'))
    .option(
      '--http-port <n>',
      'port for /healthz, /readyz, /metrics and /v1/* (0 = off)',
      intOption('--http-port'),
    )
    .action(async (opts: DaemonOptions, cmd: Command) => {
      done(await runDaemon(opts, cmd.optsWithGlobals<{ config?: string }>().config, io));
    });
}

/** Builds the daemon from configuration and runs it until SIGTERM/SIGINT; resolves to the exit code. */
export async function runDaemon(opts: DaemonOptions, file: string | undefined, io: CliIO): Promise<number> {
  const { config } = await checkedConfig(
    io,
    file,
    flagLayer([
      ['workspaces_root', opts.workspacesRoot],
      ['engine', opts.engine],
      ['agent.name', opts.agent],
      ['scheduling.max_concurrent', opts.maxConcurrent],
      ['http.port', opts.httpPort],
    ]),
  );
  // Refused before anything is made: an exposed listener without a token (or one short enough to guess).
  const token = resolveSecrets(config, io.env).values.HTTP_TOKEN;
  const exposed = config.http.port === 0 ? undefined : exposureProblem(config.http.host, token);
  if (exposed) throw new CliExit(EXIT.usage, `daemon cannot start: ${exposed}`);
  // The root first: the audit key is made in its .triage/ folder on the first start.
  await ensureRoot(config.workspaces_root, opts.createRoot === true);
  const metrics = createMetrics();
  const daemonId = newDaemonId();
  const runtime = buildRuntime(io, config, { daemonId, metrics });
  const { executor, log, audit, secrets } = runtime;
  // Results out: a finished incident is delivered to the configured sinks (through the outbox).
  const results = createResultsOut(config, {
    secrets,
    redactor: runtime.redactor,
    audit,
    log,
    registry: metrics.registry,
  });
  // The status index (status, the API, the status page): kept from every change, and every folder read
  // once after start-up (listings wait for that, so that the daemon's own scan is not slowed).
  const index = new IncidentIndex({ root: config.workspaces_root, log });
  const leadership = config.leader_election.enabled
    ? await electLeader(config, daemonId, io, log)
    : undefined;
  registerAnswerMetrics(metrics.registry, index);
  const daemon = new Daemon({
    ...(leadership ? { leadership } : {}),
    config,
    log,
    executor,
    audit,
    metrics,
    daemonId,
    onChange: (change: StateChange) => {
      index.apply(change);
      results?.onChange(change);
    },
    ...(results ? { onResolvedAfterRun: (dir: string) => results.onResolvedAfterRun(dir) } : {}),
    server: (d) => ({
      ...(token ? { token } : {}),
      limits: httpLimits(config),
      allowedHosts: allowedHosts(config),
      routes: [
        createIntakeRoutes({ config, secrets, hooks: d.intakeHooks, identity: { daemonId }, log }),
        ...createStatusRoutes({
          index,
          host: d,
          lease: { ttlMs: config.scheduling.lease_ttl },
          redactor: runtime.redactor,
          log,
        }),
        feedbackRoutes({
          root: config.workspaces_root,
          audit,
          ...(secrets.SLACK_SIGNING_SECRET ? { slackSigningSecret: secrets.SLACK_SIGNING_SECRET } : {}),
          onRecorded: (folder) => void index.refresh(folder),
          log,
        }),
      ],
      log,
    }),
  });
  const removeHandlers = daemon.handleSignals(io.signals);
  try {
    await daemon.start();
  } catch (err) {
    removeHandlers();
    index.close();
    await daemon.stop();
    throw new CliExit(
      EXIT.failed,
      `daemon failed to start: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  log.info(
    { root: config.workspaces_root, engine: config.engine, agent: config.agent.name, port: daemon.httpPort },
    'triage-runner daemon started',
  );
  results?.resume(daemon.root);
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
  const pruner = startPruning(daemon.root, config.memory.retention, audit, log);
  await daemon.whenStopped();
  await pruner.stop();
  index.close();
  removeHandlers();
  // After the runs: what is not delivered in time stays in the outbox for the next start.
  await results?.close(10_000);
  return EXIT.ok;
}

/**
 * The leader election of this replica. Losing the Lease ends the process at once, the way client-go's
 * controllers do: another replica may lead from the moment the Lease runs out, and a daemon that kept
 * supervising or recording runs after that would race it. Exiting is a SIGKILL the daemon is built to
 * survive (every write is atomic, runs are adopted by the next leader through their Job names), and
 * the pod's restart brings this replica back as a standby. In a pod (POD_NAME and POD_NAMESPACE from the
 * downward API) the role is also a label on the pod, which the Service selects: webhooks and agent pods'
 * broker calls reach the leader only.
 */
async function electLeader(config: Config, daemonId: string, io: CliIO, log: Logger): Promise<Leadership> {
  const le = config.leader_election;
  const { createLeaseStore, createPodLabeler, ROLE_LABEL } =
    await import('../../engines/kubernetes/index.js');
  const { LeaderElector } = await import('../../election/elector.js');
  const store = createLeaseStore({
    name: le.lease_name,
    namespace: le.namespace ?? config.kubernetes.namespace,
    env: io.env,
  });
  const { POD_NAME: podName, POD_NAMESPACE: podNamespace } = io.env;
  const labeler =
    podName && podNamespace ? createPodLabeler({ podName, namespace: podNamespace, env: io.env }) : undefined;
  const electionLog = log.child({ component: 'leader-election' });
  let problem: string | undefined;
  // Label writes go one after another, so that the last role set is the last one asked for.
  let labelled = Promise.resolve();
  const label = (role: 'leader' | 'standby') => {
    if (!labeler) return;
    labelled = labelled.then(() =>
      labeler.label(role).then(
        () => void (problem = undefined),
        (err: unknown) => {
          problem = `the pod's ${ROLE_LABEL}=${role} label could not be set (${errorMessage(err)}); the Service cannot route to this replica by it`;
          electionLog.error({ role, err: errorMessage(err) }, 'pod role label not set');
        },
      ),
    );
  };
  const exit = io.exit ?? ((code: number) => process.exit(code));
  const elector = new LeaderElector({
    store,
    identity: le.identity ?? daemonId,
    leaseDurationMs: le.lease_duration,
    renewDeadlineMs: le.renew_deadline,
    retryPeriodMs: le.retry_period,
    log: electionLog,
    onStartedLeading: () => label('leader'),
    onLost: (why) => {
      log.error(
        { why, lease: store.where },
        'leadership lost: exiting so that only the new leader runs incidents',
      );
      exit(EXIT.failed);
    },
  });
  // A restarted leader's pod still says leader: say standby first.
  label('standby');
  return {
    start: () => elector.start(),
    whenLeader: () => elector.whenLeader(),
    stop: (options) => elector.stop(options),
    get state() {
      return elector.state;
    },
    get holder() {
      return elector.holder;
    },
    get problem() {
      return problem;
    },
  };
}

/** How often retention runs over the root (and once at start). */
const PRUNE_INTERVAL_MS = 6 * 3600 * 1000;

/** memory.retention: recorded outputs of runs past it are removed, the audit chain recording each. */
function startPruning(root: string, retentionMs: number, audit: AuditLog, log: Logger) {
  let running: Promise<void> | undefined;
  const pass = () => {
    running ??= pruneRoot(root, { retentionMs, now: Date.now(), audit })
      .then((r) => {
        if (r.runs > 0)
          log.info({ runs: r.runs, files: r.files }, 'retention: recorded outputs of old runs removed');
        for (const problem of r.problems) log.warn({ problem }, 'retention: a workspace could not be pruned');
      })
      .catch((err: unknown) => log.error({ err: errorMessage(err) }, 'retention pass failed'))
      .finally(() => (running = undefined));
  };
  pass();
  const timer = setInterval(pass, PRUNE_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
