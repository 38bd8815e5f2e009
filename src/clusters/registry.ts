import type { PrometheusEndpointConfig } from '../config/prometheus-schema.js';
import type { Config } from '../config/schema.js';

// The cluster registry: which kubeconfig and context an incident's `cluster` (or one of its aliases)
// is investigated with. Built from `clusters:`; without it the single `kubeconfig` is a one-entry
// registry that serves every incident, as before the registry existed. Pure: no file is read here.

/** One cluster the daemon can reach: what the triage script and the run's kubectl broker use. */
export interface ClusterEntry {
  name: string;
  /** Absent: kubectl's own default (~/.kube/config). */
  kubeconfig?: string;
  /** Absent: the kubeconfig's current-context. */
  context?: string;
  aliases: string[];
  /** Its Prometheus-compatible endpoint (the sandbox's `promql`), credentials as secret names. */
  prometheus?: PrometheusEndpointConfig;
}

/** How an incident's cluster found its entry: its name, an alias, or the configured fallback. */
export type RoutedBy = 'name' | 'alias' | 'default';

export type ClusterRoute =
  | { entry: ClusterEntry; routedBy: RoutedBy }
  /** No entry: why, naming the known clusters. */
  | { rejected: string };

export interface ClusterRegistry {
  /** False when `clusters:` is absent (the single kubeconfig serves every incident). */
  configured: boolean;
  resolveCluster(name: string): ClusterRoute;
  listClusters(): ClusterEntry[];
}

/** The entry name of the one-cluster registry a configuration without `clusters:` has. */
export const SINGLE_CLUSTER = 'default';

type RegistryConfig = Pick<Config, 'clusters' | 'unknown_cluster' | 'default_cluster' | 'kubeconfig'> &
  Partial<Pick<Config, 'prometheus'>>;

export function clusterRegistry(config: RegistryConfig): ClusterRegistry {
  if (!config.clusters) {
    const entry: ClusterEntry = {
      name: SINGLE_CLUSTER,
      ...(config.kubeconfig ? { kubeconfig: config.kubeconfig } : {}),
      aliases: [],
      ...(config.prometheus ? { prometheus: config.prometheus } : {}),
    };
    return {
      configured: false,
      resolveCluster: () => ({ entry, routedBy: 'default' }),
      listClusters: () => [entry],
    };
  }
  const entries = Object.entries(config.clusters).map(([name, e]): ClusterEntry => ({
    name,
    ...(e.kubeconfig ? { kubeconfig: e.kubeconfig } : {}),
    ...(e.context ? { context: e.context } : {}),
    aliases: [...e.aliases],
    ...(e.prometheus ? { prometheus: e.prometheus } : {}),
  }));
  const byName = new Map(entries.map((e) => [e.name, e]));
  const byAlias = new Map<string, ClusterEntry>();
  for (const entry of entries)
    for (const alias of entry.aliases) if (!byAlias.has(alias)) byAlias.set(alias, entry);
  const fallback =
    config.unknown_cluster === 'default' && config.default_cluster !== undefined
      ? byName.get(config.default_cluster)
      : undefined;
  const known = entries.map((e) => e.name).join(', ');
  return {
    configured: true,
    resolveCluster(name) {
      const named = byName.get(name);
      if (named) return { entry: named, routedBy: 'name' };
      const aliased = byAlias.get(name);
      if (aliased) return { entry: aliased, routedBy: 'alias' };
      if (fallback) return { entry: fallback, routedBy: 'default' };
      return {
        rejected: `cluster ${JSON.stringify(name)} is not in the cluster registry (known: ${known}); set the incident's cluster to one of them or add it under clusters: (or an entry's aliases)`,
      };
    },
    listClusters: () => entries.map((e) => ({ ...e, aliases: [...e.aliases] })),
  };
}

/**
 * The name max_per_cluster counts an incident under: its registry entry (so an alias and the name share
 * one limit); without `clusters:`, the incident's own cluster, as before.
 */
export function schedulingKey(registry: ClusterRegistry): (cluster: string) => string {
  if (!registry.configured) return (cluster) => cluster;
  return (cluster) => {
    const route = registry.resolveCluster(cluster);
    return 'entry' in route ? route.entry.name : cluster;
  };
}

/**
 * An alert's cluster label as the registry names it: an alias becomes its entry's name (so alerts
 * group and storm under one cluster); any other value is kept, for routing to accept or reject.
 */
export function canonicalCluster(registry: ClusterRegistry): (cluster: string) => string {
  if (!registry.configured) return (cluster) => cluster;
  return (cluster) => {
    const route = registry.resolveCluster(cluster);
    return 'entry' in route && route.routedBy === 'alias' ? route.entry.name : cluster;
  };
}

/** Why an incident for `cluster` cannot be taken, or undefined when the registry routes it. */
export function clusterProblem(registry: ClusterRegistry, cluster: string): string | undefined {
  const route = registry.resolveCluster(cluster);
  return 'rejected' in route ? route.rejected : undefined;
}

/** What a run records about its cluster (result.json, the audit): the entry, never its credentials. */
export interface ClusterRecord {
  /** The registry entry. */
  name: string;
  /** override: a replay pointed the run at this entry (`replay --cluster`). */
  routedBy: RoutedBy | 'override';
  /** The incident's own `cluster` value. */
  requested: string;
}

export function clusterRecord(
  route: { entry: ClusterEntry; routedBy: RoutedBy },
  requested: string,
): ClusterRecord {
  return { name: route.entry.name, routedBy: route.routedBy, requested };
}
