import {
  BatchV1Api,
  CoreV1Api,
  Log,
  Watch,
  type KubeConfig,
  type V1Job,
  type V1Pod,
  type V1Secret,
} from '@kubernetes/client-node';
import type { Config } from '../../config/schema.js';
import type { Logger } from '../../log/logger.js';
import { assertNoEngineSocket, RUN_LABELS } from '../labels.js';
import { StartGate } from '../start-gate.js';
import type {
  Engine,
  EngineCapabilities,
  RunExit,
  RunHandle,
  RunInfo,
  RunSpec,
  StopSignal,
} from '../types.js';
import { classify, httpCode } from './errors.js';
import { podBootstrap } from './files/program.js';
import { buildJob, buildTokenSecret, tokenSecretName } from './job.js';
import { kubeConfigOf } from './kubeconfig.js';
import { LogPump } from './log-pump.js';
import { LABELS_ANNOTATION, RUN_ID_ANNOTATION, jobNameFor, labelSelector, parseLabels } from './names.js';
import { exitOf, finishedCondition, newestPod } from './status.js';
import { JobWait } from './wait.js';

// The kubernetes engine: each run is a batch/v1 Job in config.kubernetes.namespace, on any node the
// configuration allows. Its pod mounts nothing of the daemon's: it fetches the run's files from the
// daemon's files route and returns what its agent writes (files/), with a token kept in a Secret of the
// run's own. Logs are followed from the pod, and the Job's status is watched. Only this folder imports
// @kubernetes/client-node.

export interface KubernetesEngineOptions {
  /** Defaults to KubeConfig.loadFromDefault(): in-cluster service account, $KUBECONFIG or ~/.kube/config. */
  kubeConfig?: KubeConfig;
  /** Environment consulted to find the default configuration (KUBERNETES_SERVICE_HOST, KUBECONFIG, HOME). */
  env?: Record<string, string | undefined>;
  /** How often pods are polled while a run's pod is pending (ms). */
  pollIntervalMs?: number;
  /** After the Job ends, how long wait() lets the log stream drain before resolving (ms). */
  logDrainMs?: number;
  /** Consecutive failed watch (re)connections before wait() gives up with a TransientError. */
  maxWatchFailures?: number;
}

interface RunState {
  pump?: LogPump;
  signal?: StopSignal;
  fatal?: string;
}

/** The engine's clients and settings, shared by its operations. */
function connect(config: Config, options: KubernetesEngineOptions) {
  const found = kubeConfigOf(options);
  const { kc } = found;
  return {
    found,
    server: kc.getCurrentCluster()?.server ?? '(no current cluster)',
    batch: kc.makeApiClient(BatchV1Api),
    core: kc.makeApiClient(CoreV1Api),
    watcher: new Watch(kc),
    logs: new Log(kc),
    namespace: config.kubernetes.namespace,
    pollMs: options.pollIntervalMs ?? 1000,
    drainMs: options.logDrainMs ?? 5000,
    maxWatchFailures: options.maxWatchFailures ?? 5,
    graceSeconds: Math.max(1, Math.ceil(config.agent.stop_grace / 1000)),
  };
}

/** The RunInfo of a listed Job, or undefined when its original labels do not match `labels`. */
function runInfoOf(job: V1Job, labels: Record<string, string>): RunInfo | undefined {
  const name = job.metadata?.name;
  if (!name) return undefined;
  const original = parseLabels(job.metadata?.annotations?.[LABELS_ANNOTATION]);
  // Sanitizing may map two values to one label: the annotation holds the exact originals.
  if (Object.entries(labels).some(([k, v]) => original[k] !== undefined && original[k] !== v))
    return undefined;
  return {
    handle: { engine: 'kubernetes', id: name, runId: job.metadata?.annotations?.[RUN_ID_ANNOTATION] ?? name },
    labels: Object.keys(original).length > 0 ? original : (job.metadata?.labels ?? {}),
    running: !finishedCondition(job) && !job.metadata?.deletionTimestamp,
    started: true,
    ...(job.metadata?.creationTimestamp ? { createdAt: new Date(job.metadata.creationTimestamp) } : {}),
  };
}

/** A Kubernetes-Job engine bound to config.kubernetes.namespace. */
export function createKubernetesEngine(
  config: Config,
  log: Logger,
  options: KubernetesEngineOptions = {},
): Engine {
  return new KubernetesEngine(config, log, options);
}

class KubernetesEngine implements Engine {
  readonly name = 'kubernetes' as const;
  readonly placement = 'container' as const;
  // A Job has no signal API: stopping it deletes its pod (SIGTERM, then SIGKILL after the grace). Its
  // pod gets copies of its mounts through the daemon and returns what its agent writes.
  readonly capabilities: EngineCapabilities;
  private readonly c: ReturnType<typeof connect>;
  private readonly runs = new Map<string, RunState>();
  // Pending wait() calls: close() ends them so that their watch connections and timers do not keep
  // the process alive after shutdown.
  private readonly waiting = new Set<JobWait>();
  private closed = false;

  constructor(
    private readonly config: Config,
    private readonly log: Logger,
    options: KubernetesEngineOptions,
  ) {
    this.c = connect(config, options);
    this.capabilities = {
      reattachOutput: true,
      reportsOom: true,
      signals: ['SIGTERM', 'SIGKILL'],
      networkBroker: true,
      copiesMounts: true,
    };
  }

  private stateOf(id: string): RunState {
    let s = this.runs.get(id);
    if (!s) this.runs.set(id, (s = {}));
    return s;
  }

  private usable(): void {
    if (this.c.found.missing) throw new Error(this.c.found.missing);
  }

  private readonly podsOf = async (jobName: string): Promise<V1Pod[]> => {
    const { core, namespace, server } = this.c;
    try {
      const list = await core.listNamespacedPod({ namespace, labelSelector: `job-name=${jobName}` });
      return list.items;
    } catch (err) {
      throw classify(err, `list the pods of Job ${jobName} in namespace ${namespace}`, server);
    }
  };

  private startPump(handle: RunHandle, onStdout: (c: Buffer) => void): void {
    const state = this.stateOf(handle.id);
    state.pump?.stop();
    const { namespace, logs, pollMs } = this.c;
    const onFatal = (reason: string) => (state.fatal = reason);
    const podsOf = this.podsOf;
    state.pump = new LogPump({
      jobName: handle.id,
      namespace,
      logs,
      podsOf,
      pollMs,
      log: this.log,
      onStdout,
      onFatal,
    });
    state.pump.start();
  }

  private async endOf(jobName: string, job: V1Job | undefined, deleted: boolean): Promise<RunExit> {
    const state = this.stateOf(jobName);
    const pod = newestPod(await this.podsOf(jobName).catch(() => [] as V1Pod[]));
    const exit = exitOf(job, pod, jobName, { deleted, ...(state.signal ? { signal: state.signal } : {}) });
    await state.pump?.drain(this.c.drainMs);
    return exit;
  }

  private async deleteJob(jobName: string, gracePeriodSeconds: number, propagationPolicy: string) {
    const { batch, namespace, server } = this.c;
    try {
      await batch.deleteNamespacedJob({ name: jobName, namespace, gracePeriodSeconds, propagationPolicy });
    } catch (err) {
      if (httpCode(err) === 404) return;
      throw classify(err, `delete Job ${jobName} in namespace ${namespace}`, server);
    }
  }

  private async createSecret(body: V1Secret, jobName: string): Promise<void> {
    const { core, namespace, server } = this.c;
    try {
      await core.createNamespacedSecret({ namespace, body });
    } catch (err) {
      if (httpCode(err) === 409) {
        throw new Error(
          `Secret ${tokenSecretName(jobName)} already exists in namespace ${namespace}: run ids must be unique; remove it first`,
          { cause: err },
        );
      }
      throw classify(err, `create Secret ${tokenSecretName(jobName)} in namespace ${namespace}`, server);
    }
  }

  /** Deletes the run's token Secret; one already gone is fine. */
  private async deleteSecret(jobName: string): Promise<void> {
    const { core, namespace, server } = this.c;
    const name = tokenSecretName(jobName);
    try {
      await core.deleteNamespacedSecret({ name, namespace });
    } catch (err) {
      if (httpCode(err) === 404) return;
      throw classify(err, `delete Secret ${name} in namespace ${namespace}`, server);
    }
  }

  private async createJob(body: V1Job, jobName: string): Promise<void> {
    const { batch, namespace, server } = this.c;
    try {
      await batch.createNamespacedJob({ namespace, body });
    } catch (err) {
      if (httpCode(err) === 409) {
        throw new Error(
          `Job ${jobName} already exists in namespace ${namespace}: run ids must be unique; remove it first`,
          { cause: err },
        );
      }
      throw classify(err, `create Job ${jobName} in namespace ${namespace}`, server);
    }
  }

  /** The Job and its token's Secret, from the spec; throws when the pod could not reach the daemon. */
  private async bodies(spec: RunSpec, jobName: string): Promise<{ job: V1Job; secret: V1Secret }> {
    const { url } = this.config.kubernetes.broker;
    if (!url || this.config.kubernetes.broker.port === 0)
      throw new Error(
        "an agent Job gets its run's files through the daemon: set kubernetes.broker.port and kubernetes.broker.url (the daemon's Service, e.g. http://triage-runner.triage-runner.svc:8081)",
      );
    if (!spec.filesToken)
      throw new Error(
        `run ${spec.runId} has no files token: the kubernetes engine cannot hand its pod its files`,
      );
    const job = buildJob(this.config, spec, { jobName, bootstrap: await podBootstrap(), daemonUrl: url });
    return { job, secret: buildTokenSecret(this.config, spec, jobName, spec.filesToken) };
  }

  async ping(): Promise<void> {
    this.usable();
    const { batch, namespace, server } = this.c;
    try {
      await batch.listNamespacedJob({ namespace, limit: 1 });
    } catch (err) {
      throw classify(err, `list Jobs in namespace ${namespace}`, server);
    }
  }

  async start(spec: RunSpec): Promise<RunHandle> {
    // The Job's pod starts as soon as it is created: beforeStart is awaited before that.
    const gate = new StartGate(spec.beforeStart);
    const jobName = jobNameFor(spec.runId);
    let bodies: { job: V1Job; secret: V1Secret };
    try {
      if (this.closed) throw new Error('the kubernetes engine is closed; create a new one');
      this.usable();
      assertNoEngineSocket(spec.mounts);
      bodies = await this.bodies(spec, jobName);
      await this.createSecret(bodies.secret, jobName);
    } catch (err) {
      await gate.settled();
      throw err;
    }
    try {
      await gate.passed();
      await this.createJob(bodies.job, jobName);
    } catch (err) {
      // The token goes with the run that will not start.
      await this.deleteSecret(jobName).catch(() => undefined);
      throw err;
    }
    const handle: RunHandle = { engine: 'kubernetes', id: jobName, runId: spec.runId };
    const { namespace } = this.c;
    this.log.info({ jobName, namespace, runId: spec.runId, image: spec.image }, 'kubernetes job created');
    this.startPump(handle, spec.onStdout);
    return handle;
  }

  wait(handle: RunHandle, timeoutMs: number): Promise<RunExit> {
    const jobName = handle.id;
    const state = this.stateOf(jobName);
    const deps = {
      ...this.c,
      log: this.log,
      fatal: () => state.fatal,
      exit: (job: V1Job | undefined, deleted: boolean) => this.endOf(jobName, job, deleted),
    };
    const w = new JobWait(deps, jobName, timeoutMs);
    this.waiting.add(w);
    return w.promise.finally(() => this.waiting.delete(w));
  }

  async signal(handle: RunHandle, signal: StopSignal): Promise<void> {
    this.stateOf(handle.id).signal = signal;
    // A Job has no signal API: deleting it (pods first) makes the kubelet send SIGTERM, then SIGKILL
    // after the grace period. SIGKILL asks for no grace at all.
    const grace = signal === 'SIGKILL' ? 0 : this.c.graceSeconds;
    this.log.info(
      { jobName: handle.id, signal, gracePeriodSeconds: grace },
      'deleting kubernetes job to stop it',
    );
    await this.deleteJob(handle.id, grace, 'Foreground');
  }

  async remove(handle: RunHandle): Promise<void> {
    this.runs.get(handle.id)?.pump?.stop();
    this.runs.delete(handle.id);
    try {
      await this.deleteJob(handle.id, this.c.graceSeconds, 'Background');
    } finally {
      // The run's token must not outlive it, even when the Job could not be deleted.
      await this.deleteSecret(handle.id);
    }
  }

  async list(labels: Record<string, string>): Promise<RunInfo[]> {
    this.usable();
    const { batch, namespace, server } = this.c;
    let items: V1Job[];
    try {
      items = (await batch.listNamespacedJob({ namespace, labelSelector: labelSelector(labels) })).items;
    } catch (err) {
      throw classify(err, `list Jobs in namespace ${namespace}`, server);
    }
    return items.flatMap((job) => runInfoOf(job, labels) ?? []);
  }

  async find(runId: string): Promise<RunInfo | undefined> {
    return (await this.list({ [RUN_LABELS.run]: runId }))[0];
  }

  async attach(handle: RunHandle, onStdout: (c: Buffer) => void): Promise<void> {
    // Kubernetes merges stdout and stderr into one log stream: everything goes to onStdout.
    this.startPump(handle, onStdout);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const state of this.runs.values()) state.pump?.stop();
    this.runs.clear();
    for (const w of [...this.waiting])
      w.abort(new Error('the kubernetes engine was closed while waiting for a Job; the Job keeps running'));
  }
}
