import type { Config } from '../config/schema.js';
import { errorMessage } from '../util/errors.js';
import type { ListenerLimits } from '../util/http-limits.js';
import { ModelGateway, type Listening } from './gateway.js';
import { DEFAULT_PRICES } from './prices.js';
import { PROVIDERS } from './providers.js';
import type { Upstream } from './upstream.js';
import type { CapReached, ProviderId } from './types.js';

// The daemon's one gateway: built from the configuration and the resolved secrets, with its shared TCP
// listener opened on first use, and the start-up check that the provider answers through it.

export interface GatewayHost {
  gateway: ModelGateway;
  /**
   * The gateway can carry this provider's calls: the daemon holds its key, or its base URL is
   * configured (a local model that takes none). Otherwise the agent is started as before.
   */
  serves(provider: ProviderId): boolean;
  /** The shared TCP listener's URL (opened on first call). */
  tcpUrl(): Promise<string>;
  /**
   * Listens again at a TCP address an earlier daemon's agents were given (`http://host:port`), for the
   * runs it adopts; shared by every run with that address and closed when the last one releases it.
   * Rejects when the address cannot be listened on (the port is taken): those agents cannot reach it.
   */
  relisten(url: string): Promise<() => Promise<void>>;
  /** Why the provider does not answer through the gateway with the configured key, or undefined. */
  preflight(provider: ProviderId): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Where each provider's calls go: the config's base URL, else the daemon's variable, else the public API. */
export function upstreams(
  config: Pick<Config, 'providers'>,
  secrets: Record<string, string>,
  env: Record<string, string | undefined>,
): Record<ProviderId, Upstream> {
  const pick = (a: string | undefined, b: string | undefined, c: string) => (a ?? b) || c;
  const key = (id: ProviderId) =>
    PROVIDERS[id].keySecrets.map((n) => secrets[n]).find((v) => v !== undefined && v !== '');
  const make = (id: ProviderId, baseUrl: string): Upstream => ({
    baseUrl,
    key: key(id),
    ...(baseUrl !== PROVIDERS[id].defaultBaseUrl ? { configured: true } : {}),
  });
  return {
    anthropic: make(
      'anthropic',
      pick(config.providers.anthropic_base_url, env.ANTHROPIC_BASE_URL, PROVIDERS.anthropic.defaultBaseUrl),
    ),
    openai: make(
      'openai',
      pick(config.providers.openai_base_url, env.OPENAI_BASE_URL, PROVIDERS.openai.defaultBaseUrl),
    ),
    gemini: make(
      'gemini',
      pick(config.providers.gemini_base_url, env.GOOGLE_GEMINI_BASE_URL, PROVIDERS.gemini.defaultBaseUrl),
    ),
  };
}

/** The limits of every listener that serves the gateway: each run's socket, the TCP listener, the pod broker's port. */
export function listenerLimits(config: Pick<Config, 'gateway'>): ListenerLimits {
  return {
    maxConnections: config.gateway.max_connections,
    headersTimeoutMs: config.gateway.headers_timeout,
    requestTimeoutMs: config.gateway.request_timeout,
  };
}

/**
 * A provider's list of models: free, and answered only for a valid key; with the headers its API
 * requires of every request (Anthropic refuses one without `anthropic-version` with a 400).
 */
const MODELS_LISTING: Record<ProviderId, { path: string; headers: Record<string, string> }> = {
  anthropic: { path: '/v1/models', headers: { 'anthropic-version': '2023-06-01' } },
  openai: { path: '/models', headers: {} },
  gemini: { path: '/v1beta/models', headers: {} },
};

export interface GatewayHostInput {
  config: Pick<Config, 'providers' | 'gateway' | 'budget'>;
  secrets: Record<string, string>;
  env: Record<string, string | undefined>;
  now?: () => Date;
  /** Where the day's spend across runs is kept (`budget.daily_usd`). */
  spendFile?: string;
  onSpendProblem?: (message: string) => void;
  onCap?: (cap: CapReached) => void;
  onRetry?: (provider: string) => void;
  /** How long a preflight answer is kept (default 5 minutes). */
  preflightTtlMs?: number;
  preflightTimeoutMs?: number;
}

export function createGatewayHost(input: GatewayHostInput): GatewayHost {
  const { config } = input;
  const now = input.now ?? (() => new Date());
  const routes = upstreams(config, input.secrets, input.env);
  const gateway = new ModelGateway({
    upstreams: routes,
    prices: { ...DEFAULT_PRICES, ...config.gateway.prices },
    recordBodies: config.gateway.record_bodies,
    limits: {
      maxRequestBytes: config.gateway.max_request_body,
      maxCallsInFlight: config.gateway.max_calls_in_flight,
      reserveOutputTokens: config.budget.reserve_output_tokens,
    },
    listeners: listenerLimits(config),
    caps: {
      ...(config.budget.max_tokens !== undefined ? { maxTokens: config.budget.max_tokens } : {}),
      ...(config.budget.max_usd !== undefined ? { maxUsd: config.budget.max_usd } : {}),
      ...(config.budget.max_model_calls !== undefined
        ? { maxModelCalls: config.budget.max_model_calls }
        : {}),
      ...(config.budget.daily_usd !== undefined ? { dailyUsd: config.budget.daily_usd } : {}),
    },
    now,
    ...(input.spendFile ? { spendFile: input.spendFile } : {}),
    ...(input.onSpendProblem ? { onSpendProblem: input.onSpendProblem } : {}),
    ...(input.onCap ? { onCap: input.onCap } : {}),
    ...(input.onRetry ? { onRetry: input.onRetry } : {}),
  });
  let tcp: Promise<Listening> | undefined;
  const tcpUrl = async () => {
    tcp ??= gateway.listenTcp(config.gateway.host);
    tcp.catch(() => (tcp = undefined));
    return (await tcp).address;
  };
  // Addresses listened on again for adopted runs, shared by the runs that were given them.
  const reopened = new Map<string, { listening: Promise<Listening>; users: number }>();
  const relisten = async (url: string): Promise<() => Promise<void>> => {
    const address = new URL(url);
    const port = Number(address.port);
    if (address.protocol !== 'http:' || !Number.isInteger(port) || port <= 0)
      throw new Error(`${url} is not a gateway TCP address`);
    const own = await tcp?.catch(() => undefined);
    if (own?.address === address.origin) return () => Promise.resolve();
    let entry = reopened.get(address.origin);
    if (!entry) {
      const listening = gateway.listenTcp(address.hostname.replace(/^\[|\]$/g, ''), port);
      entry = { listening, users: 0 };
      reopened.set(address.origin, entry);
      listening.catch(() => reopened.delete(address.origin));
    }
    const listening = await entry.listening;
    entry.users++;
    let released = false;
    const shared = entry;
    return async () => {
      if (released) return;
      released = true;
      if (--shared.users > 0) return;
      reopened.delete(address.origin);
      await listening.close();
    };
  };
  const ttl = input.preflightTtlMs ?? 5 * 60_000;
  const cache = new Map<ProviderId, { at: number; problem: string | undefined }>();

  const probe = async (provider: ProviderId): Promise<string | undefined> => {
    // A session of its own, outside any budget: the check is not a run's spend.
    const session = gateway.openRun(
      `preflight-${provider}`,
      provider,
      { onCall: () => Promise.resolve() },
      {},
    );
    try {
      const listing = MODELS_LISTING[provider];
      const res = await fetch(`${await tcpUrl()}/${provider}${listing.path}`, {
        headers: { ...listing.headers, authorization: `Bearer ${session.token}` },
        signal: AbortSignal.timeout(input.preflightTimeoutMs ?? 10_000),
      });
      await res.arrayBuffer();
      if (res.ok) return undefined;
      const names = PROVIDERS[provider].keySecrets.join(' or ');
      return res.status === 401 || res.status === 403
        ? `the ${provider} provider refused the configured key through the gateway (HTTP ${res.status}): check ${names}`
        : `the ${provider} provider answered HTTP ${res.status} through the gateway to a models listing`;
    } catch (err) {
      return `the ${provider} provider did not answer through the gateway: ${errorMessage(err)}`;
    } finally {
      gateway.closeRun(session);
    }
  };

  return {
    gateway,
    serves: (provider) => routes[provider].key !== undefined || routes[provider].configured === true,
    tcpUrl,
    relisten,
    preflight: async (provider) => {
      const hit = cache.get(provider);
      if (hit && now().getTime() - hit.at < ttl) return hit.problem;
      const problem = await probe(provider);
      cache.set(provider, { at: now().getTime(), problem });
      return problem;
    },
    close: async () => {
      const listening = await tcp?.catch(() => undefined);
      await listening?.close();
      const others = [...reopened.values()];
      reopened.clear();
      for (const other of others) await (await other.listening.catch(() => undefined))?.close();
    },
  };
}
