import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

// Where the engine, the Lease store and the pod labeler find the API server.

export interface FoundKubeConfig {
  kc: KubeConfig;
  /** Why there is no usable configuration: reported on first use instead of aiming at localhost:8080. */
  missing?: string;
}

/**
 * In-cluster service account, else $KUBECONFIG, else ~/.kube/config. Without any of them the client
 * would silently aim at http://localhost:8080, so that case is reported instead (on first use).
 */
export function defaultKubeConfig(env: Record<string, string | undefined>): FoundKubeConfig {
  const kc = new KubeConfig();
  const home = env.HOME ?? homedir();
  const candidates = [env.KUBECONFIG, home ? path.join(home, '.kube', 'config') : undefined];
  if (
    !env.KUBERNETES_SERVICE_HOST &&
    !candidates.some((f) => f && f.split(path.delimiter).some((p) => existsSync(p)))
  ) {
    // A placeholder cluster so that clients can be built; ping/start/list refuse before using it.
    kc.loadFromClusterAndUser(
      { name: 'none', server: 'http://127.0.0.1:1', skipTLSVerify: false },
      { name: 'none' },
    );
    return {
      kc,
      missing:
        'no Kubernetes configuration found: not inside a pod (KUBERNETES_SERVICE_HOST unset), KUBECONFIG unset or ' +
        'missing, and no ~/.kube/config; run the daemon in the cluster or set KUBECONFIG',
    };
  }
  kc.loadFromDefault();
  return { kc };
}

/** The given configuration, else the default one. */
export function kubeConfigOf(options: {
  kubeConfig?: KubeConfig;
  env?: Record<string, string | undefined>;
}): FoundKubeConfig {
  return options.kubeConfig ? { kc: options.kubeConfig } : defaultKubeConfig(options.env ?? process.env);
}
