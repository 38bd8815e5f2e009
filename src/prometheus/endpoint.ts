import { clusterRegistry, type ClusterEntry } from '../clusters/registry.js';
import type { Config } from '../config/schema.js';
import type { PrometheusEndpointConfig } from '../config/prometheus-schema.js';

// A cluster's Prometheus endpoint as the daemon uses it: the base URL and the credentials read from
// the configured secrets (a bearer token or basic auth as the Authorization header, a CA and a client
// certificate for TLS). Built in the daemon from its own secrets and kept there: nothing of it is
// handed to an agent, logged or written; what is recorded about an endpoint is its cluster and origin.

export interface PrometheusEndpoint {
  cluster: string;
  url: URL;
  /** The Authorization header, when the endpoint needs one. Never logged. */
  authorization?: string;
  tls: { ca?: string; cert?: string; key?: string; servername?: string };
}

export type EndpointResolution =
  | { ok: true; endpoint: PrometheusEndpoint }
  /** The endpoint is configured but unusable: which secret is missing, and what to do. */
  | { ok: false; cluster: string; problem: string };

/** The endpoint of one cluster with its secrets' values. */
export function resolveEndpoint(
  cluster: string,
  config: PrometheusEndpointConfig,
  secrets: Readonly<Record<string, string>>,
  at = `clusters.${cluster}.prometheus`,
): EndpointResolution {
  const missing: string[] = [];
  const secret = (name: string | undefined, key: string): string | undefined => {
    if (name === undefined) return undefined;
    const value = secrets[name];
    if (value === undefined || value === '') missing.push(`${at}.${key} names ${name}, which is not set`);
    return value;
  };
  const token = secret(config.bearer_token, 'bearer_token');
  const password = secret(config.basic_auth?.password, 'basic_auth.password');
  const tls = {
    ...opt('ca', secret(config.tls?.ca, 'tls.ca')),
    ...opt('cert', secret(config.tls?.cert, 'tls.cert')),
    ...opt('key', secret(config.tls?.key, 'tls.key')),
    ...opt('servername', config.tls?.server_name),
  };
  if (missing.length > 0)
    return {
      ok: false,
      cluster,
      problem: `${missing.join('; ')}: set the variable or file of each under secrets: where the daemon runs`,
    };
  const authorization =
    token !== undefined
      ? `Bearer ${token}`
      : config.basic_auth && password !== undefined
        ? `Basic ${Buffer.from(`${config.basic_auth.username}:${password}`).toString('base64')}`
        : undefined;
  return {
    ok: true,
    endpoint: { cluster, url: new URL(config.url), ...opt('authorization', authorization), tls },
  };
}

const opt = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };

/**
 * Every registry entry's endpoint by cluster name (entries without one are absent). `single` says the
 * registry is the one-cluster registry of a configuration without `clusters:` (its key is `prometheus`).
 */
export function resolveEndpoints(
  entries: readonly ClusterEntry[],
  secrets: Readonly<Record<string, string>>,
  single = false,
): Map<string, EndpointResolution> {
  const out = new Map<string, EndpointResolution>();
  for (const entry of entries) {
    if (!entry.prometheus) continue;
    const at = single ? 'prometheus' : `clusters.${entry.name}.prometheus`;
    out.set(entry.name, resolveEndpoint(entry.name, entry.prometheus, secrets, at));
  }
  return out;
}

/** What may be said of an endpoint in a record or a message: its origin and path, no credentials. */
export const endpointLabel = (url: URL): string => `${url.origin}${url.pathname.replace(/\/+$/, '')}`;

/** Every configured cluster's endpoint (`clusters.<name>.prometheus`, or `prometheus` for one cluster). */
export const configuredEndpoints = (
  config: Config,
  secrets: Readonly<Record<string, string>>,
): Map<string, EndpointResolution> =>
  resolveEndpoints(clusterRegistry(config).listClusters(), secrets, !config.clusters);
