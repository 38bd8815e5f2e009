import { faultTypeOf } from './fault-types.js';
import type { AlertFields, K8sRef } from './types.js';

// Alert labels and annotations -> incident fields. Pure: table-tested in test/unit/intake/webhooks.

export interface MappingOptions {
  faultTypes: Readonly<Record<string, string>>;
  clusterLabels: readonly string[];
  defaultCluster: string;
  /** The cluster registry's name for a label value (an alias becomes its entry's name); default: as is. */
  canonicalCluster?: (cluster: string) => string;
}

export type Labels = Readonly<Record<string, string>>;

/** kube_pod_owner / kube-state-metrics style owner labels, when a rule joins them in. */
const OWNER_LABELS: readonly [kindLabel: string, nameLabel: string][] = [
  ['owner_kind', 'owner_name'],
  ['created_by_kind', 'created_by_name'],
];

/**
 * Label -> kind for labels naming an object directly. Not `job` (Prometheus' scrape job, not a Job),
 * nor `service` and `instance`: on kube-state-metrics alerts they name the exporter, not the subject.
 */
const OBJECT_LABELS: readonly [label: string, kind: string, apiVersion: string][] = [
  ['deployment', 'Deployment', 'apps/v1'],
  ['statefulset', 'StatefulSet', 'apps/v1'],
  ['daemonset', 'DaemonSet', 'apps/v1'],
  ['job_name', 'Job', 'batch/v1'],
  ['cronjob', 'CronJob', 'batch/v1'],
  ['replicaset', 'ReplicaSet', 'apps/v1'],
  ['horizontalpodautoscaler', 'HorizontalPodAutoscaler', 'autoscaling/v2'],
  ['persistentvolumeclaim', 'PersistentVolumeClaim', 'v1'],
  ['persistentvolume', 'PersistentVolume', 'v1'],
  ['node', 'Node', 'v1'],
];

const WORKLOAD_KINDS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob']);
const CLUSTER_SCOPED = new Set(['Node', 'PersistentVolume']);
const API_VERSIONS: Record<string, string> = Object.fromEntries(
  OBJECT_LABELS.map(([, kind, v]) => [kind, v]),
);

/**
 * A ReplicaSet's pod-template-hash is the decimal FNV hash of the pod template written with
 * Kubernetes' "safe" alphabet, in which the digits 0-9 become 4-9 and b, c, d, f: so a ReplicaSet
 * name is `<deployment>-<6 to 10 of [4-9bcdf]>` and its pods add `-<5 of the safe alphabet>`.
 * Names made by other controllers (StatefulSet ordinals, CronJob minutes, which start with 2) do
 * not fit, which makes the derivation reliable enough to group on.
 */
const RS_HASH = '[4-9bcdf]{6,10}';
const POD_SUFFIX = '[bcdfghjklmnpqrstvwxz2456789]{5}';
const DEPLOYMENT_POD = new RegExp(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)-${RS_HASH}-${POD_SUFFIX}$`);
const DEPLOYMENT_RS = new RegExp(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)-${RS_HASH}$`);

/** The Deployment owning a pod, derived from its name; undefined when the name does not say. */
export function deploymentOfPod(pod: string): string | undefined {
  return DEPLOYMENT_POD.exec(pod)?.[1];
}

/** The Deployment owning a ReplicaSet, derived from its name. */
export function deploymentOfReplicaSet(replicaSet: string): string | undefined {
  return DEPLOYMENT_RS.exec(replicaSet)?.[1];
}

const ref = (kind: string, name: string, namespace: string | undefined): K8sRef => {
  const apiVersion = API_VERSIONS[kind] ?? (kind === 'Pod' ? 'v1' : undefined);
  return {
    ...(apiVersion ? { apiVersion } : {}),
    kind,
    name,
    ...(namespace && !CLUSTER_SCOPED.has(kind) ? { namespace } : {}),
  };
};

/** The object an alert is about and its owning workload. */
export function objectsOf(labels: Labels, cluster: string): { resource: K8sRef; workload: K8sRef } {
  const ns = labels.namespace;
  const named = OBJECT_LABELS.find(([label]) => labels[label]);
  const owner = OWNER_LABELS.map(([k, n]) => [labels[k], labels[n]] as const).find(([k, n]) => k && n);
  const pod = labels.pod;
  if (pod) {
    const resource = ref('Pod', pod, ns);
    if (named && WORKLOAD_KINDS.has(named[1]))
      return { resource, workload: ref(named[1], labels[named[0]] ?? '', ns) };
    if (owner) {
      const [kind, name] = owner as [string, string];
      const deployment = kind === 'ReplicaSet' ? deploymentOfReplicaSet(name) : undefined;
      return { resource, workload: deployment ? ref('Deployment', deployment, ns) : ref(kind, name, ns) };
    }
    const deployment = deploymentOfPod(pod);
    return { resource, workload: deployment ? ref('Deployment', deployment, ns) : resource };
  }
  if (named) {
    const [label, kind] = named;
    const resource = ref(kind, labels[label] ?? '', ns);
    const deployment = kind === 'ReplicaSet' ? deploymentOfReplicaSet(resource.name) : undefined;
    return { resource, workload: deployment ? ref('Deployment', deployment, ns) : resource };
  }
  const fallback = ns ? ref('Namespace', ns, undefined) : ref('Cluster', cluster, undefined);
  return { resource: fallback, workload: fallback };
}

/** Normalised severity: the `severity` label lower-cased (critical, high, warning, info…), else warning. */
export function severityOf(labels: Labels): string {
  const value = labels.severity?.trim().toLowerCase();
  return value ? value : 'warning';
}

/** Labels and annotations of one alert -> the incident fields. */
export function fieldsOf(labels: Labels, annotations: Labels, options: MappingOptions): AlertFields {
  const alertname = labels.alertname?.trim() || 'UnnamedAlert';
  const clusterLabel = options.clusterLabels.find((l) => labels[l]?.trim());
  const labelled = (clusterLabel ? labels[clusterLabel]?.trim() : undefined) ?? options.defaultCluster;
  const cluster = options.canonicalCluster?.(labelled) ?? labelled;
  const namespace = labels.namespace?.trim() || 'default';
  const { resource, workload } = objectsOf(labels, cluster);
  const text = (key: string) => annotations[key]?.trim() || undefined;
  return {
    alertname,
    cluster,
    namespace,
    resource,
    workload,
    faultType: faultTypeOf(alertname, labels, options.faultTypes),
    severity: severityOf(labels),
    ...optional('summary', text('summary') ?? text('message')),
    ...optional('description', text('description')),
    ...optional('runbookUrl', text('runbook_url')),
    ...optional('container', labels.container?.trim() || undefined),
  };
}

const optional = <K extends string>(key: K, value: string | undefined): Partial<Record<K, string>> =>
  value === undefined ? {} : ({ [key]: value } as Record<K, string>);

/** The value of one group_by / storm_by field: the derived cluster, namespace, workload, or a label. */
export function groupValue(field: string, fields: AlertFields, labels: Labels): string {
  switch (field) {
    case 'cluster':
      return fields.cluster;
    case 'namespace':
      return fields.namespace;
    case 'alertname':
      return fields.alertname;
    case 'workload':
      return `${fields.workload.kind}/${fields.workload.name}`;
    default:
      return labels[field] ?? '';
  }
}

/** The group_by values and a canonical key for them. */
export function groupOf(
  by: readonly string[],
  fields: AlertFields,
  labels: Labels,
): { key: string; values: Record<string, string> } {
  const values = Object.fromEntries(by.map((f) => [f, groupValue(f, fields, labels)]));
  return { key: JSON.stringify(by.map((f) => [f, values[f]])), values };
}
