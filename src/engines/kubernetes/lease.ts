import {
  CoordinationV1Api,
  CoreV1Api,
  V1MicroTime,
  type KubeConfig,
  type V1Lease,
} from '@kubernetes/client-node';
import { LeaseConflictError, type LeaseRecord, type LeaseStore } from '../../election/types.js';
import { apiMessage, classify, httpCode } from './errors.js';
import { kubeConfigOf } from './kubeconfig.js';
import { MANAGED_BY } from './names.js';

// The leader election's side of the API server: its Lease (coordination.k8s.io/v1) and the role label
// on the daemon's own pod that the Service selects.

export interface KubeLeaseStoreOptions {
  name: string;
  namespace: string;
  kubeConfig?: KubeConfig;
  env?: Record<string, string | undefined>;
}

/** The election's Lease on the API server; a 409 (stale resourceVersion, exists already) is a LeaseConflictError. */
export function createLeaseStore(options: KubeLeaseStoreOptions): LeaseStore {
  const found = kubeConfigOf(options);
  const api = found.kc.makeApiClient(CoordinationV1Api);
  const server = found.kc.getCurrentCluster()?.server ?? 'unknown';
  const { name, namespace } = options;
  const where = `Lease ${namespace}/${name} on ${server}`;
  const toRecord = (lease: V1Lease): LeaseRecord => ({
    ...(lease.spec?.holderIdentity !== undefined ? { holderIdentity: lease.spec.holderIdentity } : {}),
    ...(lease.spec?.leaseDurationSeconds !== undefined
      ? { leaseDurationSeconds: lease.spec.leaseDurationSeconds }
      : {}),
    ...(lease.spec?.acquireTime ? { acquireTime: new Date(lease.spec.acquireTime).toISOString() } : {}),
    ...(lease.spec?.renewTime ? { renewTime: new Date(lease.spec.renewTime).toISOString() } : {}),
    ...(lease.spec?.leaseTransitions !== undefined ? { leaseTransitions: lease.spec.leaseTransitions } : {}),
    ...(lease.metadata?.resourceVersion ? { resourceVersion: lease.metadata.resourceVersion } : {}),
  });
  const toLease = (r: LeaseRecord): V1Lease => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name,
      namespace,
      labels: { [MANAGED_BY.key]: MANAGED_BY.value },
      ...(r.resourceVersion ? { resourceVersion: r.resourceVersion } : {}),
    },
    spec: {
      holderIdentity: r.holderIdentity ?? '',
      ...(r.leaseDurationSeconds !== undefined ? { leaseDurationSeconds: r.leaseDurationSeconds } : {}),
      // MicroTime: RFC 3339 with microseconds, as the API server expects for these fields.
      ...(r.acquireTime ? { acquireTime: new V1MicroTime(r.acquireTime) } : {}),
      ...(r.renewTime ? { renewTime: new V1MicroTime(r.renewTime) } : {}),
      ...(r.leaseTransitions !== undefined ? { leaseTransitions: r.leaseTransitions } : {}),
    },
  });
  const failed = (err: unknown, what: string): Error => {
    if (httpCode(err) === 409)
      return new LeaseConflictError(`${where}: ${what} lost a race (HTTP 409 ${apiMessage(err)})`, {
        cause: err,
      });
    return classify(err, `${what} ${where}`, server);
  };
  return {
    where,
    async get() {
      if (found.missing) throw new Error(found.missing);
      try {
        return toRecord(await api.readNamespacedLease({ name, namespace }));
      } catch (err) {
        if (httpCode(err) === 404) return undefined;
        throw failed(err, 'read');
      }
    },
    async create(record) {
      try {
        return toRecord(await api.createNamespacedLease({ namespace, body: toLease(record) }));
      } catch (err) {
        throw failed(err, 'create');
      }
    },
    async update(record) {
      try {
        return toRecord(await api.replaceNamespacedLease({ name, namespace, body: toLease(record) }));
      } catch (err) {
        throw failed(err, 'update');
      }
    },
  };
}

/** The label the leader election keeps on the daemon's own pod: the Service selects `leader`. */
export const ROLE_LABEL = 'triage-runner.io/role';

export interface PodLabeler {
  /** Sets ROLE_LABEL on the daemon's pod to `role`. */
  label(role: 'leader' | 'standby'): Promise<void>;
}

/** Labels the daemon's own pod (POD_NAME in POD_NAMESPACE, from the downward API) with its role. */
export function createPodLabeler(options: {
  podName: string;
  namespace: string;
  kubeConfig?: KubeConfig;
  env?: Record<string, string | undefined>;
}): PodLabeler {
  const found = kubeConfigOf(options);
  const core = found.kc.makeApiClient(CoreV1Api);
  const server = found.kc.getCurrentCluster()?.server ?? 'unknown';
  const { podName: name, namespace } = options;
  return {
    async label(role) {
      if (found.missing) throw new Error(found.missing);
      // A JSON patch (the client's default for patch): `add` sets the label whether or not it exists.
      const body = [{ op: 'add', path: `/metadata/labels/${ROLE_LABEL.replace('/', '~1')}`, value: role }];
      try {
        await core.patchNamespacedPod({ name, namespace, body });
      } catch (err) {
        throw classify(err, `label pod ${namespace}/${name} ${ROLE_LABEL}=${role}`, server);
      }
    },
  };
}
