import type { Config } from '../config/schema.js';
import { cachedIdentityCheck, checkBrokerIdentity, type IdentityCheck } from '../kubectl/broker/identity.js';

// The identity the kubectl broker runs with: kubectl.kubeconfig (else `kubeconfig`) and kubectl.as,
// for the broker of every run and for the `broker-identity` readiness check, which asks the cluster
// what that identity may do (src/kubectl/identity.ts).

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
const probes = new WeakMap<Config, () => Promise<IdentityCheck>>();

/** The `broker-identity` check for the daemon's readiness; undefined when the guard is off (no broker). */
export function brokerIdentityProbe(
  config: Config,
  env: Record<string, string | undefined>,
): (() => Promise<IdentityCheck>) | undefined {
  if (!config.kubectl.guard) return undefined;
  const known = probes.get(config);
  if (known) return known;
  const kubeconfig = config.kubectl.kubeconfig ?? config.kubeconfig;
  const probeEnv: Record<string, string> = {
    PATH: env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    ...(env.HOME ? { HOME: env.HOME } : {}),
    ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}),
  };
  const probe = cachedIdentityCheck(
    () =>
      checkBrokerIdentity({
        command: config.kubectl.command,
        env: probeEnv,
        ...(config.kubectl.as ? { as: config.kubectl.as } : {}),
      }),
    IDENTITY_TTL_MS,
  );
  probes.set(config, probe);
  return probe;
}
