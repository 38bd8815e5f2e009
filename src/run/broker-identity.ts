import { clusterRegistry, type ClusterEntry, type ClusterRegistry } from '../clusters/registry.js';
import type { Config } from '../config/schema.js';
import { cachedIdentityCheck, checkBrokerIdentity, type IdentityCheck } from '../kubectl/broker/identity.js';

// The identity the kubectl broker runs with: kubectl.kubeconfig (else `kubeconfig`), or with a cluster
// registry each entry's kubeconfig and context, and kubectl.as; for the broker of every run and for the
// `broker-identity` readiness checks, which ask each cluster what that identity may do
// (src/kubectl/broker/identity.ts).

/** How often the cluster is asked again; /readyz answers from the last answer in between. */
const IDENTITY_TTL_MS = 5 * 60_000;

/** Environment the broker's kubectl gets on top of the triage script's: its own kubeconfig, if configured. */
export function brokerKubeconfigEnv(config: Config): Record<string, string> {
  return config.kubectl.kubeconfig ? { KUBECONFIG: config.kubectl.kubeconfig } : {};
}

/** Global flags before every brokered call: impersonation with kubectl.as. */
export function brokerPrefixArgs(config: Config): string[] {
  return config.kubectl.as ? [`--as=${config.kubectl.as}`] : [];
}

/** One probe per loaded config, so that its answer is kept between /readyz calls. */
const probes = new WeakMap<Config, () => Promise<IdentityCheck[]>>();

/**
 * The `broker-identity` checks for the daemon's readiness; undefined when the guard is off (no
 * broker). Without `clusters:` one check, on kubectl.kubeconfig (else `kubeconfig`); with a registry
 * one per entry (`broker-identity:<entry>`), on the kubeconfig and context the entry's runs use.
 */
export function brokerIdentityProbe(
  config: Config,
  env: Record<string, string | undefined>,
  registry: ClusterRegistry = clusterRegistry(config),
): (() => Promise<IdentityCheck[]>) | undefined {
  if (!config.kubectl.guard) return undefined;
  const known = probes.get(config);
  if (known) return known;
  const base: Record<string, string> = {
    PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    ...(env.HOME ? { HOME: env.HOME } : {}),
  };
  const as = config.kubectl.as ? { as: config.kubectl.as } : {};
  const ask = (entry: ClusterEntry, kubeconfig: string | undefined): Promise<IdentityCheck> =>
    checkBrokerIdentity({
      command: config.kubectl.command,
      env: { ...base, ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}) },
      ...as,
      ...(registry.configured ? { cluster: entry.name } : {}),
      ...(entry.context ? { context: entry.context } : {}),
    });
  const entries = registry.listClusters();
  const probe = cachedIdentityCheck(
    () =>
      Promise.all(
        entries.map((entry) =>
          // Without a registry the broker's own kubeconfig (kubectl.kubeconfig) comes first.
          ask(
            entry,
            registry.configured ? entry.kubeconfig : (config.kubectl.kubeconfig ?? entry.kubeconfig),
          ),
        ),
      ),
    IDENTITY_TTL_MS,
  );
  probes.set(config, probe);
  return probe;
}
