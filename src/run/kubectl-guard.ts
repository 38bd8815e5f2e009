import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { ToolDenial } from '../agents/types.js';
import type { Config, AgentName } from '../config/schema.js';
import { triageEnv, triageKubeconfig, type ClusterKubeconfig } from '../context/triage.js';
import { brokerKubeconfigEnv, brokerPrefixArgs } from './broker-identity.js';
import type { Engine } from '../engines/types.js';
import { startBroker, type RunningBroker } from '../kubectl/broker/broker.js';
import { CallLog, type ClusterCallRecord } from '../kubectl/broker/calls.js';
import { redactArgv } from '../kubectl/flags.js';
import { OutputLog, type CapturedOutput } from '../kubectl/broker/outputs.js';
import { installGuard } from '../kubectl/broker/install-guard.js';
import { grantPodToken, tokenLifetimeMs, type PodToken } from './pod-token.js';
import { shellQuote, splitCommandLine } from '../kubectl/parse.js';
import { classifyKubectl } from '../kubectl/policy/classify.js';
import { toolPermissions } from '../kubectl/policy/permissions.js';
import { loadToolPolicy, type ToolPolicy } from '../kubectl/policy/policy.js';
import type { ToolPermissions } from '../shared/types.js';
import type { Incident } from '../workspace/incident.js';
import type { RunBundle } from '../workspace/bundle.js';
import { routedCluster, runKubeconfig, type ClusterChoice } from './cluster.js';
import type { RunRequest } from './types.js';
import { runPrometheus, runPromqlTool, type RunPrometheus } from './prometheus.js';
import type { AuditFn, PipelineEnv } from './env.js';
import { RUN_FILES } from '../workspace/layout.js';

// The kubectl guard of one run, joined to the pipeline: the persona's tool policy (for the CLI's own
// permission settings and for the broker), the guard's `kubectl` first on the agent's PATH, the
// broker serving it from the run bundle while the agent runs, and `cluster-calls.jsonl` recording
// every call. An agent pod (kubernetes) cannot reach a socket in the bundle: with the pod broker
// configured its `kubectl` calls the daemon over HTTP with the run's token (pod-token.ts), and the call
// lands on the same broker; without it the CLI permissions are all, and the agent's RBAC enforces.

/** What result.json says about the run's cluster calls. */
export interface KubectlSummary {
  /** broker: every `kubectl` went through the run's broker; off: kubectl.guard is false; unavailable: the engine cannot reach a broker. */
  guard: 'broker' | 'off' | 'unavailable';
  calls: number;
  refused: number;
  /** The call log, relative to the bundle. */
  log?: string;
  /** The agent's `promql` calls to its cluster's Prometheus (recorded in the same log, tool `prometheus`). */
  prometheus?: PrometheusSummary;
}

/** What result.json says about the run's metrics reads. */
export interface PrometheusSummary {
  /** configured: the run's cluster has an endpoint; unusable: its credentials are missing; none: no endpoint. */
  endpoint: 'configured' | 'unusable' | 'none';
  calls: number;
  refused: number;
}

export interface RunGuard {
  policy: ToolPolicy;
  permissions: ToolPermissions;
  /** Host folders to put first on the agent's PATH (the guard's `kubectl`); empty without a broker. */
  pathPrepend: string[];
  /** The kubeconfig stays with the daemon: the agent's layout is built without it. */
  withholdKubeconfig: boolean;
  /** Writes the guard's `kubectl`, once the layout says where the agent sees the run folder. */
  install(agentRunDir: string): Promise<void>;
  /**
   * Starts the triage script's broker: the same policy and call log, its calls recorded `by: triage`.
   * Undefined when kubectl.guard is off (the script then runs kubectl itself). Stop it when the script is done.
   */
  startTriage(): Promise<TriageBroker | undefined>;
  /** The run's Prometheus, which its broker's `promql` asks (undefined without a broker). */
  prometheus?: RunPrometheus;
  /** Records a call the daemon made for the run itself (the triage step's promql) in the run's logs. */
  record(record: ClusterCallRecord, output?: CapturedOutput): Promise<void>;
  /** Opens the call log and starts the broker; call right before the agent starts. */
  start(): Promise<void>;
  /** Records the CLI's own refusals, stops the broker; what result.json carries. */
  finish(denials: ToolDenial[]): Promise<KubectlSummary>;
  /** Stops the broker and closes the log if still open (idempotent; for early failures). */
  stop(): Promise<void>;
}

export interface GuardInput {
  config: Config;
  engine: Pick<Engine, 'placement' | 'capabilities'>;
  bundleDir: string;
  workspaceDir: string;
  runId: string;
  /** The agent CLI, named in the rule of the refusals it made itself. */
  agent: string;
  incident: Incident;
  /** The daemon's environment (PATH, HOME) for the broker's kubectl. */
  env: Record<string, string | undefined>;
  /** Folders before PATH for the broker's kubectl (RunOverrides.pathPrepend: the eval's frozen cluster). */
  pathPrepend?: string[];
  /** The run's cluster: KUBECONFIG (absent: the configured `kubeconfig`) and the registry entry named on each call record. */
  cluster?: ClusterKubeconfig & { name?: string };
  /** The pod broker, for engines whose agents reach the daemon over the network. */
  podBroker?: PipelineEnv['podBroker'];
  /** The run's Prometheus, which the broker's `promql` asks. */
  prometheus?: RunPrometheus;
  redact: (text: string) => string;
  audit: AuditFn;
  now: () => Date;
  getuid?: () => number;
}

/** The uid:gid a root daemon hands the socket to (the container user), if numeric. */
function socketOwner(user: string, getuid: () => number): { uid: number; gid: number } | undefined {
  if (getuid() !== 0) return undefined;
  const [uid, gid] = user.split(':').map((v) => (/^\d+$/.test(v) ? Number(v) : undefined));
  return uid === undefined ? undefined : { uid, gid: gid ?? uid };
}

const SHELL_OPERATOR = /;|&&|\|\||\||\n/;

/**
 * A CLI's refusal of a cluster call as a call record: the first kubectl or helm command in its shell
 * text (a kubectl one parsed); undefined for a refusal that touched no cluster tool.
 */
export function denialRecord(denial: ToolDenial, at: Date, agent: string): ClusterCallRecord | undefined {
  const base = {
    at: at.toISOString(),
    by: 'cli' as const,
    decision: 'refused' as const,
    rule: `${agent} permission rules`,
    exitCode: null,
    durationMs: 0,
    stdoutBytes: 0,
    stderrBytes: 0,
  };
  const text = denial.command ?? '';
  for (const segment of text.split(SHELL_OPERATOR)) {
    const words = splitCommandLine(segment.trim());
    if (!words) continue;
    // Leading `VAR=value` assignments (`KUBECONFIG=/tmp/x kubectl …`) are not the command.
    const start = words.findIndex((w) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w));
    const tool = start === -1 ? undefined : path.posix.basename(words[start] ?? '');
    if (tool !== 'kubectl' && tool !== 'helm') continue;
    const argv = redactArgv(words.slice(start + 1));
    if (tool === 'helm') {
      const normalized = argv.map(shellQuote).join(' ');
      return { ...base, tool, argv, normalized, category: 'unknown' };
    }
    const cmd = classifyKubectl(argv);
    return { ...base, tool, argv, normalized: cmd.normalized, category: cmd.category };
  }
  return undefined;
}

/** The triage script's broker while the script runs. */
export interface TriageBroker {
  /** The folder holding the guard's `kubectl`, to put first on the script's PATH. */
  guardDir: string;
  /** Stops the broker, removes its socket and guard folder (idempotent). */
  stop(): Promise<void>;
}

/** The run a guard is built for: prepare and adoption build it the same way (a RunStart). */
export interface GuardedRun {
  start: {
    request: Pick<RunRequest, 'workspace' | 'overrides' | 'runId'>;
    agent: AgentName;
    audit: AuditFn;
    cluster?: ClusterChoice;
  };
  bundle: RunBundle;
  engine: Engine;
}

/** The guard of `run` (its broker not started yet). */
export function guardFor(env: PipelineEnv, run: GuardedRun): Promise<RunGuard> {
  const { start, bundle, engine } = run;
  const { request } = start;
  const pathPrepend = request.overrides?.pathPrepend;
  const cluster = routedCluster(env, start);
  const kubeconfig = runKubeconfig(env, cluster, bundle.dir);
  return planGuard({
    config: env.config,
    engine,
    bundleDir: bundle.dir,
    workspaceDir: request.workspace.dir,
    runId: request.runId,
    agent: start.agent,
    incident: request.workspace.incident,
    env: env.env,
    ...(pathPrepend ? { pathPrepend } : {}),
    cluster: {
      ...(cluster.configured ? { name: cluster.entry.name } : {}),
      ...(kubeconfig ? { kubeconfig } : {}),
    },
    ...(env.podBroker ? { podBroker: env.podBroker } : {}),
    prometheus: runPrometheus(env, { ...start, cluster }),
    redact: (text) => env.redactor.redact(text),
    audit: start.audit,
    now: env.now,
  });
}

/**
 * The guard of a run a dead daemon launched: its broker listens again on the same socket, which the
 * agent still sees in its run folder, and the call log goes on. Undefined when the run had no guard.
 */
export async function resumeGuard(env: PipelineEnv, run: GuardedRun): Promise<RunGuard | undefined> {
  const dir = path.join(run.bundle.dir, RUN_FILES.guard);
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) return undefined;
  const guard = await guardFor(env, run);
  await guard.start();
  return guard;
}

/** What a run's guard is built from: its input, the persona's policy and where its broker serves. */
interface GuardPlan {
  input: GuardInput;
  policy: ToolPolicy;
  /** The pod broker when the agent reaches the daemon over the network; undefined for a bundle socket. */
  remote: PipelineEnv['podBroker'] | undefined;
  /** The agent's `kubectl` goes through a broker (the guard is on and the engine can reach one). */
  brokered: boolean;
  guardDir: string;
  socketPath: string;
}

/** What a guard holds while the run goes on: its logs, brokers and token, each opened at most once. */
interface GuardState {
  log?: CallLog;
  outputs?: OutputLog;
  broker?: RunningBroker;
  token?: PodToken;
  triage?: TriageBroker;
  stopped: boolean;
}

/** The run's guard: loads the persona's policy (throws ToolPolicyError for a broken helpers.yaml). */
export async function planGuard(input: GuardInput): Promise<RunGuard> {
  const { config, engine } = input;
  const policy = await loadToolPolicy(config.personas_dir, config.persona);
  const permissions = toolPermissions(policy);
  const local = engine.capabilities.bundleSockets === true;
  const remote = !local && engine.capabilities.networkBroker === true ? input.podBroker : undefined;
  const plan: GuardPlan = {
    input,
    policy,
    remote,
    brokered: config.kubectl.guard && (local || remote !== undefined),
    guardDir: path.join(input.bundleDir, RUN_FILES.guard),
    socketPath: path.join(input.bundleDir, RUN_FILES.brokerSocket),
  };
  const state: GuardState = { stopped: false };
  return {
    policy,
    permissions,
    pathPrepend: plan.brokered ? [plan.guardDir] : [],
    // With the guard on, no engine hands the agent the kubeconfig (kubernetes agents use their own ServiceAccount).
    withholdKubeconfig: config.kubectl.guard,
    install: (agentRunDir) => installAgentGuard(plan, agentRunDir),
    startTriage: () => startTriageBroker(plan, state),
    ...(input.prometheus ? { prometheus: input.prometheus } : {}),
    record: async (record, output) => {
      await openLogs(plan, state);
      await recordCall(plan, state, record, output);
    },
    start: () => startAgentBroker(plan, state),
    finish: (denials) => finishGuard(plan, state, denials),
    stop: () => stopGuard(state),
  };
}

/** Records one call in the log (its output beside it) and audits a refusal. */
async function recordCall(
  plan: GuardPlan,
  state: GuardState,
  record: ClusterCallRecord,
  output?: CapturedOutput,
): Promise<void> {
  const { input } = plan;
  const cluster = input.cluster?.name;
  const call = await state.log?.append(cluster ? { ...record, cluster } : record);
  if (call !== undefined && output && record.decision === 'allowed')
    await state.outputs?.append(call, record, output);
  if (record.decision === 'refused') {
    await input.audit('kubectl_refused', {
      by: record.by,
      command: record.tool === 'prometheus' ? record.normalized : `${record.tool} ${record.normalized}`,
      category: record.category,
      rule: record.rule,
    });
  }
}

/** The call log and the outputs beside it, opened once for the triage script's and the agent's calls. */
async function openLogs(plan: GuardPlan, state: GuardState): Promise<void> {
  const { input } = plan;
  state.log ??= await CallLog.open(path.join(input.bundleDir, RUN_FILES.clusterCalls), input.redact);
  state.outputs ??= await OutputLog.open(path.join(input.bundleDir, RUN_FILES.clusterOutputs), input.redact);
}

/** What the broker's kubectl runs with: the triage script's environment (kubeconfig, HOME, PATH). */
function kubectlFor(input: GuardInput, stage: 'triage' | 'agent') {
  const { config } = input;
  const run = {
    runDir: input.bundleDir,
    ...(input.pathPrepend ? { pathPrepend: input.pathPrepend } : {}),
    ...(input.cluster ? { cluster: input.cluster } : {}),
  };
  const env = {
    ...triageEnv(config, input.incident, input.env, run),
    TRIAGE_STAGE: stage,
    ...brokerKubeconfigEnv(config),
  };
  return {
    command: config.kubectl.command,
    env,
    cwd: input.workspaceDir,
    prefixArgs: brokerPrefixArgs(config),
  };
}

/** Stops the brokers, revokes the token and closes the logs (idempotent). */
async function stopGuard(state: GuardState): Promise<void> {
  if (state.stopped) return;
  state.stopped = true;
  await state.triage?.stop();
  await state.token?.revoke();
  await state.broker?.stop().catch(() => undefined);
  await state.log?.close().catch(() => undefined);
  await state.outputs?.close().catch(() => undefined);
}

/** Writes the agent's `kubectl`, pointed at the socket as the agent sees it (or the pod broker's URL). */
async function installAgentGuard(plan: GuardPlan, agentRunDir: string): Promise<void> {
  const { input, remote } = plan;
  if (!plan.brokered) return;
  const container = input.engine.placement === 'container';
  await installGuard(plan.guardDir, {
    runId: input.runId,
    ...(remote
      ? { socketPath: remote.url, withToken: true }
      : { socketPath: (container ? path.posix : path).join(agentRunDir, RUN_FILES.brokerSocket) }),
    ...(container ? {} : { nodePath: process.execPath }),
  });
}

/** Starts the triage script's broker and guard (RunGuard.startTriage). */
async function startTriageBroker(plan: GuardPlan, state: GuardState): Promise<TriageBroker | undefined> {
  const { input } = plan;
  const { config } = input;
  if (!config.kubectl.guard || state.stopped) return undefined;
  await openLogs(plan, state);
  // The script runs on the daemon's host as the daemon's user: a host guard, a socket only it opens.
  const dir = path.join(input.bundleDir, RUN_FILES.triageGuard);
  const socketPath = path.join(input.bundleDir, RUN_FILES.triageBrokerSocket);
  // The script keeps its KUBECONFIG (for its other tools); its guard does not take it for a swap.
  const own = triageKubeconfig(config, input.cluster);
  await installGuard(dir, {
    runId: input.runId,
    socketPath,
    nodePath: process.execPath,
    ...(own ? { ownKubeconfig: own } : {}),
  });
  const running = await startBroker({
    socketPath,
    policy: plan.policy,
    kubectl: kubectlFor(input, 'triage'),
    callTimeoutMs: config.kubectl.call_timeout,
    mode: 0o600,
    by: 'triage',
    onCall: (record, output) => recordCall(plan, state, record, output),
    now: input.now,
  });
  let done = false;
  const current: TriageBroker = {
    guardDir: dir,
    stop: async () => {
      if (done) return;
      done = true;
      await running.stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
      if (state.triage === current) state.triage = undefined;
    },
  };
  state.triage = current;
  return current;
}

/** Opens the call log and starts the agent's broker, with a pod token when served over the network. */
async function startAgentBroker(plan: GuardPlan, state: GuardState): Promise<void> {
  const { input, remote, guardDir, socketPath } = plan;
  const { config, engine } = input;
  if (!plan.brokered || state.broker) return;
  await openLogs(plan, state);
  // Only the daemon connects to the socket of a run served over the network.
  const owner =
    engine.placement === 'container' && !remote
      ? socketOwner(config.docker.user, input.getuid ?? (() => process.getuid?.() ?? -1))
      : undefined;
  state.broker = await startBroker({
    socketPath,
    policy: plan.policy,
    // The broker's kubectl runs as the triage script's does (kubeconfig, HOME, PATH), for the agent.
    kubectl: kubectlFor(input, 'agent'),
    callTimeoutMs: config.kubectl.call_timeout,
    ...(owner ? { owner } : {}),
    ...(engine.placement === 'host' || remote ? { mode: 0o600 } : {}),
    ...(input.prometheus ? { promql: runPromqlTool(input.prometheus) } : {}),
    onCall: (record, output) => recordCall(plan, state, record, output),
    now: input.now,
  });
  if (remote) {
    const expiresAt = input.now().getTime() + tokenLifetimeMs(config);
    state.token = await grantPodToken(await remote.open(), {
      runId: input.runId,
      guardDir,
      socketPath,
      expiresAt,
    });
  }
}

/** Records the CLI's own refusals, stops the broker and sums the calls for result.json. */
async function finishGuard(
  plan: GuardPlan,
  state: GuardState,
  denials: ToolDenial[],
): Promise<KubectlSummary> {
  const { input } = plan;
  const { config } = input;
  const at = input.now();
  const refusedByCli = denials.flatMap((d) => denialRecord(d, at, input.agent) ?? []);
  if (refusedByCli.length > 0 && !state.log) {
    state.log = await CallLog.open(path.join(input.bundleDir, RUN_FILES.clusterCalls), input.redact).catch(
      () => undefined,
    );
  }
  // The token goes first (and its file with it, before the bundle is digested).
  await state.token?.revoke();
  await state.broker?.stop();
  for (const record of refusedByCli) await recordCall(plan, state, record);
  const log = state.log;
  const totals = log?.totals() ?? { calls: 0, refused: 0 };
  const metrics = log?.totals('prometheus') ?? { calls: 0, refused: 0 };
  await stopGuard(state);
  const endpoint = input.prometheus?.endpoint;
  return {
    guard: plan.brokered ? 'broker' : config.kubectl.guard ? 'unavailable' : 'off',
    ...totals,
    ...(log ? { log: RUN_FILES.clusterCalls } : {}),
    // Said when the cluster has an endpoint, or the agent tried promql without one.
    ...(plan.brokered && (endpoint || metrics.calls > 0)
      ? { prometheus: { endpoint: !endpoint ? 'none' : endpoint.ok ? 'configured' : 'unusable', ...metrics } }
      : {}),
  };
}
