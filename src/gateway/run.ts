import path from 'node:path';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { ModelCallLog, readModelCalls } from './calls.js';
import { tokenHash, type Listening, type ModelGateway } from './gateway.js';
import { BRIDGE_PORT_ENV, BRIDGE_SOCKET_ENV, installBridge } from './install-bridge.js';
import { launchWithPodToken, removePodToken, writePodToken } from './pod-route.js';
import { PROVIDERS } from './providers.js';
import { capMessage, type RunSession } from './session.js';
import {
  PROVIDER_IDS,
  type CapReached,
  type ModelCallRecord,
  type ProviderId,
  type RunTotals,
  type Usage,
} from './types.js';
import { RUN_FILES } from '../workspace/layout.js';

// One run at the gateway, joined to the pipeline: the token its agent gets as every model key, the
// provider URLs it calls (the bridge's loopback port in a container, the daemon's TCP listener on the
// host, the daemon's Service port from a pod), its `model-calls.jsonl`, and what result.json takes from it.

/** In the bridge folder: the hash of the run's token, for a daemon that adopts the run (bridge and pod routes). */
export const TOKEN_HASH_FILE = 'token.sha256';

/** `secrets:` names that are model keys: the agent gets its run token under each, never the value. */
export const MODEL_KEY_SECRETS: readonly string[] = [
  ...new Set(PROVIDER_IDS.flatMap((id) => PROVIDERS[id].keySecrets)),
];

/** How the agent reaches the gateway. */
export type GatewayRoute =
  /** A container with the run folder mounted: a unix socket there, bridged to `port` on its loopback. */
  | { kind: 'bridge'; port: number; agentRunDir: string; owner?: { uid: number; gid: number } }
  /** An agent on the daemon's host: the shared TCP listener. */
  | { kind: 'tcp'; url: string }
  /**
   * An agent pod: the daemon's Service port (kubernetes.broker, shared with the kubectl broker), the
   * token in a file of the run folder (`agentRunDir` as the pod sees it). `open` starts that listener.
   */
  | { kind: 'pod'; url: string; agentRunDir: string; open: () => Promise<unknown> };

export interface GatewaySummary {
  calls: number;
  refused: number;
  retries: number;
  tokens: Usage;
  costUsd: number;
  firstCallAt?: string;
  /** Input tokens of the first model call: the prompt the agent started from, with its CLI's own part. */
  firstCallInputTokens?: number;
  /** When the first byte of the first model call's answer arrived (its first token). */
  firstTokenAt?: string;
  /** The model that did the run's work: the one that took the most input tokens. */
  model?: string;
  /** When the first answer asking the agent to call a tool arrived (the first investigation turn). */
  firstToolCallAt?: string;
  /** When the last model call ended. */
  lastCallEndAt?: string;
  capReached?: CapReached;
  /** Why the agent of an adopted run could not reach the restarted daemon's gateway. */
  lost?: string;
  log: string;
}

export interface Launchable {
  command: string;
  args: string[];
  env: Record<string, string>;
  secretEnv?: Record<string, string>;
}

export interface RunGateway {
  session: RunSession;
  /** Provider base URLs as the agent sees them. */
  providers: { anthropicBaseUrl: string; openaiBaseUrl: string; geminiBaseUrl: string };
  /** The daemon's secrets with every model key replaced by the run token. */
  secrets(real: Record<string, string>): Record<string, string>;
  /** The launch with the bridge (bridge route) or the token file's reader (pod route) in front, else unchanged. */
  wrap(launch: Launchable): Launchable;
  /** Installs the bridge; call before the manifest is written. */
  install(): Promise<void>;
  /** Opens the call log and the socket; call right before the agent starts. */
  start(): Promise<void>;
  /** What result.json takes from the gateway. */
  summary(): GatewaySummary;
  /** What the run's manifest keeps for a daemon that adopts the run: the token's hash, never the token. */
  manifest(): { tokenSha256: string; url?: string };
  /** Called after each of the run's model calls with the run's totals (live progress). */
  watch(listener: (summary: GatewaySummary) => void): void;
  /** Revokes the token, closes the socket and the log (idempotent). */
  stop(): Promise<void>;
}

export interface RunGatewayInput {
  gateway: ModelGateway;
  runId: string;
  /** The provider the run's agent calls: its token opens that one only. */
  provider: ProviderId;
  bundleDir: string;
  route: GatewayRoute;
  redact: (text: string) => string;
  /** Adoption: the run's token hash as the launching daemon left it, and its calls so far. */
  resume?: { hash: string; calls: ModelCallRecord[] };
  /** Called once when the run stops (an adopted run's listener released). */
  release?: () => Promise<void>;
  /** Why an adopted run's agent cannot reach the gateway (its address could not be listened on again). */
  lost?: string;
}

export function openRunGateway(input: RunGatewayInput): RunGateway {
  const { gateway, route, bundleDir } = input;
  let log: ModelCallLog | undefined;
  let listening: Listening | undefined;
  let refused = 0;
  let stopped = false;
  const pending: ModelCallRecord[] = [];
  const listeners: ((summary: GatewaySummary) => void)[] = [];
  const hooks = {
    onCall: async (record: ModelCallRecord) => {
      if (record.refused) refused++;
      if (log) await log.append(record);
      else pending.push(record);
      for (const listener of listeners) listener(summary());
    },
  };
  const session = input.resume
    ? gateway.resumeRun(input.runId, input.provider, input.resume.hash, hooks)
    : gateway.openRun(input.runId, input.provider, hooks);
  for (const call of input.resume?.calls ?? []) {
    if (call.refused) refused++;
    session.restore(call);
  }
  function summary(): GatewaySummary {
    return {
      ...callFigures(session.totals),
      refused,
      ...(session.capReached ? { capReached: session.capReached } : {}),
      ...(input.lost ? { lost: input.lost } : {}),
      log: RUN_FILES.modelCalls,
    };
  }
  const base = route.kind === 'bridge' ? `http://127.0.0.1:${route.port}` : route.url.replace(/\/+$/, '');
  const bridgeDir = path.join(bundleDir, RUN_FILES.gatewayBridge);
  const agentSocket =
    route.kind === 'bridge' ? path.posix.join(route.agentRunDir, RUN_FILES.gatewaySocket) : undefined;

  return {
    session,
    providers: {
      anthropicBaseUrl: `${base}/anthropic`,
      openaiBaseUrl: `${base}/openai`,
      geminiBaseUrl: `${base}/gemini`,
    },
    secrets: (real) => {
      const out = { ...real };
      for (const name of MODEL_KEY_SECRETS) {
        if (out[name] !== undefined) out[name] = session.token;
      }
      return out;
    },
    wrap: (launch) => {
      if (route.kind === 'pod') return launchWithPodToken(launch, session.token, route.agentRunDir);
      if (route.kind !== 'bridge' || !agentSocket) return launch;
      return {
        command: 'node',
        args: [
          path.posix.join(route.agentRunDir, RUN_FILES.gatewayBridge, 'bridge.mjs'),
          '--',
          launch.command,
          ...launch.args,
        ],
        env: { ...launch.env, [BRIDGE_SOCKET_ENV]: agentSocket, [BRIDGE_PORT_ENV]: String(route.port) },
      };
    },
    install: async () => {
      if (route.kind === 'pod') {
        await writePodToken(bundleDir, session.token);
        await mkdir(bridgeDir, { recursive: true, mode: 0o755 });
      }
      if (route.kind === 'tcp') return;
      if (route.kind === 'bridge') await installBridge(bridgeDir);
      await writeFile(path.join(bridgeDir, TOKEN_HASH_FILE), `${tokenHash(session.token)}\n`, {
        mode: 0o644,
      });
    },
    start: async () => {
      log ??= await ModelCallLog.open(path.join(bundleDir, RUN_FILES.modelCalls), input.redact);
      for (const record of pending.splice(0)) await log.append(record);
      if (route.kind === 'pod') await route.open();
      if (route.kind === 'bridge' && !listening) {
        // Only the agent's user may connect: the daemon's root hands the socket over, else it is open
        // to the container's user through the run folder, which only the agent and the daemon see.
        listening = await gateway.listenUnix(path.join(bundleDir, RUN_FILES.gatewaySocket), session, {
          mode: route.owner ? 0o600 : 0o666,
          ...(route.owner ? { owner: route.owner } : {}),
        });
      }
    },
    summary,
    manifest: () => ({
      tokenSha256: input.resume?.hash ?? tokenHash(session.token),
      ...(route.kind === 'tcp' ? { url: route.url } : {}),
    }),
    watch: (listener) => void listeners.push(listener),
    stop: async () => {
      if (stopped) return;
      stopped = true;
      gateway.closeRun(session);
      // The token file goes with the token (and before the bundle is digested).
      if (route.kind === 'pod') await removePodToken(bundleDir).catch(() => undefined);
      await listening?.close().catch(() => undefined);
      await log?.close().catch(() => undefined);
      await input.release?.().catch(() => undefined);
    },
  };
}

/**
 * The gateway of a run a dead daemon launched: its token hash (a container's or a pod's from the run
 * folder, a host agent's from its manifest), its calls so far from model-calls.jsonl, and the socket
 * listening again where a container's bridge connects (an agent pod: the Service port open again, for
 * a new leader; a host agent's TCP address is the caller's to listen on again). Undefined when the run
 * had no gateway.
 */
export async function resumeRunGateway(
  input: Omit<RunGatewayInput, 'resume'> & { hash?: string },
): Promise<RunGateway | undefined> {
  const hash =
    input.route.kind === 'tcp'
      ? (input.hash ?? '')
      : (
          await readFile(path.join(input.bundleDir, RUN_FILES.gatewayBridge, TOKEN_HASH_FILE), 'utf8').catch(
            () => '',
          )
        ).trim();
  if (!/^[0-9a-f]{64}$/.test(hash)) return undefined;
  const calls = await readModelCalls(path.join(input.bundleDir, RUN_FILES.modelCalls));
  const run = openRunGateway({ ...input, resume: { hash, calls } });
  await run.start();
  return run;
}

/** What a run's totals say of its calls: counts, tokens, cost, when they happened, the model. */
export function callFigures(t: RunTotals): Omit<GatewaySummary, 'refused' | 'capReached' | 'lost' | 'log'> {
  return {
    calls: t.calls,
    retries: t.retries,
    tokens: { ...t.tokens },
    costUsd: Math.round(t.costUsd * 1e8) / 1e8,
    ...(t.firstCallAt ? { firstCallAt: t.firstCallAt.toISOString() } : {}),
    ...(t.firstCall ? { firstCallInputTokens: t.firstCall.inputTokens } : {}),
    ...(t.firstCall?.firstByteAt ? { firstTokenAt: t.firstCall.firstByteAt.toISOString() } : {}),
    ...mainModel(t.inputByModel),
    ...(t.firstToolAt ? { firstToolCallAt: t.firstToolAt.toISOString() } : {}),
    ...(t.lastEndAt ? { lastCallEndAt: t.lastEndAt.toISOString() } : {}),
  };
}

/** `{model}`: the model with the most input tokens (the first in name order on a tie), or nothing. */
function mainModel(inputByModel: Record<string, number>): { model?: string } {
  const [first] = Object.entries(inputByModel).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return first ? { model: first[0] } : {};
}

export { capMessage };
