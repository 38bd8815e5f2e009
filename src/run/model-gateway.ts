import type { Config } from '../config/schema.js';
import type { Engine } from '../engines/types.js';
import type { PipelineEnv } from './env.js';
import type { AgentAdapter } from '../agents/types.js';
import type { GatewayHost } from '../gateway/host.js';
import path from 'node:path';
import { openRunGateway, resumeRunGateway, type GatewayRoute, type RunGateway } from '../gateway/run.js';
import type { ProviderId } from '../gateway/types.js';
import { errorMessage } from '../util/errors.js';
import { RUN_FILES } from '../workspace/layout.js';

// The model gateway of one run, joined to the pipeline: how its agent reaches the daemon's gateway on
// this engine. A container that sees the run folder gets the gateway's unix socket there and the bridge
// in front of its CLI; an agent on the daemon's host gets the shared TCP listener; an agent pod gets the
// daemon's Service port (kubernetes.broker, shared with the kubectl broker) and its token in a file. An
// engine whose agent can reach none of them (a pod without kubernetes.broker), or whose provider the
// daemon holds no key for, gets no gateway: its agent is handed what it was handed before.

/** The uid:gid a root daemon hands the socket to (the container user), if numeric. */
function socketOwner(user: string, getuid: () => number): { uid: number; gid: number } | undefined {
  if (getuid() !== 0) return undefined;
  const [uid, gid] = user.split(':').map((v) => (/^\d+$/.test(v) ? Number(v) : undefined));
  return uid === undefined ? undefined : { uid, gid: gid ?? uid };
}

/** How this engine's agent reaches the gateway, or undefined when it cannot. */
export async function gatewayRoute(
  config: Pick<Config, 'gateway' | 'docker'>,
  host: GatewayHost,
  engine: Pick<Engine, 'placement' | 'capabilities'>,
  agentRunDir: string,
  podBroker?: PipelineEnv['podBroker'],
  getuid: () => number = () => process.getuid?.() ?? -1,
): Promise<GatewayRoute | undefined> {
  if (engine.placement === 'host') return { kind: 'tcp', url: await host.tcpUrl() };
  if (engine.capabilities.bundleSockets !== true) {
    if (engine.capabilities.networkBroker !== true || !podBroker) return undefined;
    return { kind: 'pod', url: podBroker.url, agentRunDir, open: podBroker.open };
  }
  const owner = socketOwner(config.docker.user, getuid);
  return { kind: 'bridge', port: config.gateway.bridge_port, agentRunDir, ...(owner ? { owner } : {}) };
}

/** The provider an agent's model calls go to, the only one its run token opens (Goose: by its setting). */
function agentProvider(
  config: Pick<Config, 'providers'>,
  adapter: Pick<AgentAdapter, 'modelProvider'>,
  env: Record<string, string | undefined>,
): ProviderId | undefined {
  return adapter.modelProvider({ gooseProvider: config.providers.goose_provider ?? env.GOOSE_PROVIDER });
}

/** What opening or resuming a run's gateway is given. */
interface RunGatewayInput {
  config: Config;
  host: GatewayHost | undefined;
  /** The run's agent CLI, whose provider the gateway fronts: its token opens that provider only. */
  adapter: Pick<AgentAdapter, 'modelProvider'>;
  env: Record<string, string | undefined>;
  engine: Pick<Engine, 'placement' | 'capabilities'>;
  runId: string;
  bundleDir: string;
  /** The daemon's Service port for agent pods (kubernetes.broker), when configured. */
  podBroker?: PipelineEnv['podBroker'];
  redact: (text: string) => string;
}

/** Opens the run at the gateway (token issued) and installs what its agent needs; undefined without one. */
export async function planRunGateway(
  input: RunGatewayInput & {
    /** The run folder as the agent sees it. */
    agentRunDir: string;
  },
): Promise<RunGateway | undefined> {
  const { host, config } = input;
  const provider = agentProvider(config, input.adapter, input.env);
  // Neither a key nor a configured base URL for the agent's provider (a fake agent): nothing to carry.
  if (!host || !provider || !host.serves(provider)) return undefined;
  const route = await gatewayRoute(input.config, host, input.engine, input.agentRunDir, input.podBroker);
  if (!route) return undefined;
  const run = openRunGateway({
    gateway: host.gateway,
    runId: input.runId,
    provider,
    bundleDir: input.bundleDir,
    route,
    redact: input.redact,
  });
  await run.install();
  return run;
}

/** An adopted run's gateway, and where its agent reaches it (or why it cannot). */
export interface ResumedGateway {
  gateway: RunGateway;
  /** The socket or TCP address the agent was given. */
  address: string;
  /** Set when that address could not be listened on again: the agent's model calls fail. */
  lost?: string;
}

/**
 * The gateway of a running agent a dead daemon launched, for the token whose hash the run folder
 * (container, pod) or manifest (host) keeps: a container's socket listens again in the run folder, a
 * pod's Service port is opened again, a host agent's TCP address (its port) is listened on again.
 * Undefined when the run had none.
 */
export async function resumeModelGateway(
  input: RunGatewayInput & {
    /** What the launching daemon's manifest kept of the run's gateway. */
    manifest: { tokenSha256: string; url?: string } | undefined;
  },
): Promise<ResumedGateway | undefined> {
  const { host } = input;
  const provider = agentProvider(input.config, input.adapter, input.env);
  if (!host || !provider) return undefined;
  const common = {
    gateway: host.gateway,
    runId: input.runId,
    provider,
    bundleDir: input.bundleDir,
    redact: input.redact,
  };
  if (input.engine.placement === 'host') {
    const url = input.manifest?.url;
    if (!url) return undefined;
    let release: (() => Promise<void>) | undefined;
    let lost: string | undefined;
    try {
      release = await host.relisten(url);
    } catch (err) {
      lost = `the gateway could not listen again on ${url}, where the agent sends its model calls (${errorMessage(err)}): its calls fail until it ends`;
    }
    const gateway = await resumeRunGateway({
      ...common,
      route: { kind: 'tcp', url },
      hash: input.manifest?.tokenSha256 ?? '',
      ...(release ? { release } : {}),
      ...(lost ? { lost } : {}),
    });
    if (!gateway) await release?.();
    return gateway ? { gateway, address: url, ...(lost ? { lost } : {}) } : undefined;
  }
  const route = await gatewayRoute(input.config, host, input.engine, '', input.podBroker);
  if (!route) return undefined;
  const gateway = await resumeRunGateway({ ...common, route });
  const address = route.kind === 'pod' ? route.url : path.join(input.bundleDir, RUN_FILES.gatewaySocket);
  return gateway ? { gateway, address } : undefined;
}
