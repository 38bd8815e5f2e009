// The built-in Kubernetes resource types kubectl knows by name, short name and singular (what
// `kubectl api-resources` lists on a stock cluster), so that `po`, `pod`, `pods` and `pods.v1.` name
// one type. Used by the command parser (guard and frozen-cluster shim alike).

export interface ResourceType {
  /** Plural resource name, the canonical form: `pods`, `deployments`. */
  name: string;
  singular: string;
  shortNames: string[];
  kind: string;
  /** API group; '' for the core group. */
  group: string;
  version: string;
  namespaced: boolean;
}

const t = (
  name: string,
  kind: string,
  group: string,
  version: string,
  namespaced: boolean,
  shortNames: string[] = [],
): ResourceType => ({ name, singular: kind.toLowerCase(), shortNames, kind, group, version, namespaced });

/** Stock types of a recent Kubernetes release (kubectl api-resources, v1.31). */
export const RESOURCE_TYPES: readonly ResourceType[] = [
  t('bindings', 'Binding', '', 'v1', true),
  t('componentstatuses', 'ComponentStatus', '', 'v1', false, ['cs']),
  t('configmaps', 'ConfigMap', '', 'v1', true, ['cm']),
  t('endpoints', 'Endpoints', '', 'v1', true, ['ep']),
  t('events', 'Event', '', 'v1', true, ['ev']),
  t('limitranges', 'LimitRange', '', 'v1', true, ['limits']),
  t('namespaces', 'Namespace', '', 'v1', false, ['ns']),
  t('nodes', 'Node', '', 'v1', false, ['no']),
  t('persistentvolumeclaims', 'PersistentVolumeClaim', '', 'v1', true, ['pvc']),
  t('persistentvolumes', 'PersistentVolume', '', 'v1', false, ['pv']),
  t('pods', 'Pod', '', 'v1', true, ['po']),
  t('podtemplates', 'PodTemplate', '', 'v1', true),
  t('replicationcontrollers', 'ReplicationController', '', 'v1', true, ['rc']),
  t('resourcequotas', 'ResourceQuota', '', 'v1', true, ['quota']),
  t('secrets', 'Secret', '', 'v1', true),
  t('serviceaccounts', 'ServiceAccount', '', 'v1', true, ['sa']),
  t('services', 'Service', '', 'v1', true, ['svc']),
  t(
    'mutatingwebhookconfigurations',
    'MutatingWebhookConfiguration',
    'admissionregistration.k8s.io',
    'v1',
    false,
  ),
  t(
    'validatingwebhookconfigurations',
    'ValidatingWebhookConfiguration',
    'admissionregistration.k8s.io',
    'v1',
    false,
  ),
  t('customresourcedefinitions', 'CustomResourceDefinition', 'apiextensions.k8s.io', 'v1', false, [
    'crd',
    'crds',
  ]),
  t('apiservices', 'APIService', 'apiregistration.k8s.io', 'v1', false),
  t('controllerrevisions', 'ControllerRevision', 'apps', 'v1', true),
  t('daemonsets', 'DaemonSet', 'apps', 'v1', true, ['ds']),
  t('deployments', 'Deployment', 'apps', 'v1', true, ['deploy']),
  t('replicasets', 'ReplicaSet', 'apps', 'v1', true, ['rs']),
  t('statefulsets', 'StatefulSet', 'apps', 'v1', true, ['sts']),
  t('selfsubjectreviews', 'SelfSubjectReview', 'authentication.k8s.io', 'v1', false),
  t('tokenreviews', 'TokenReview', 'authentication.k8s.io', 'v1', false),
  t('localsubjectaccessreviews', 'LocalSubjectAccessReview', 'authorization.k8s.io', 'v1', true),
  t('selfsubjectaccessreviews', 'SelfSubjectAccessReview', 'authorization.k8s.io', 'v1', false),
  t('selfsubjectrulesreviews', 'SelfSubjectRulesReview', 'authorization.k8s.io', 'v1', false),
  t('subjectaccessreviews', 'SubjectAccessReview', 'authorization.k8s.io', 'v1', false),
  t('horizontalpodautoscalers', 'HorizontalPodAutoscaler', 'autoscaling', 'v2', true, ['hpa']),
  t('cronjobs', 'CronJob', 'batch', 'v1', true, ['cj']),
  t('jobs', 'Job', 'batch', 'v1', true),
  t('certificatesigningrequests', 'CertificateSigningRequest', 'certificates.k8s.io', 'v1', false, ['csr']),
  t('leases', 'Lease', 'coordination.k8s.io', 'v1', true),
  t('endpointslices', 'EndpointSlice', 'discovery.k8s.io', 'v1', true),
  t('flowschemas', 'FlowSchema', 'flowcontrol.apiserver.k8s.io', 'v1', false),
  t('prioritylevelconfigurations', 'PriorityLevelConfiguration', 'flowcontrol.apiserver.k8s.io', 'v1', false),
  t('ingressclasses', 'IngressClass', 'networking.k8s.io', 'v1', false),
  t('ingresses', 'Ingress', 'networking.k8s.io', 'v1', true, ['ing']),
  t('networkpolicies', 'NetworkPolicy', 'networking.k8s.io', 'v1', true, ['netpol']),
  t('runtimeclasses', 'RuntimeClass', 'node.k8s.io', 'v1', false),
  t('poddisruptionbudgets', 'PodDisruptionBudget', 'policy', 'v1', true, ['pdb']),
  t('clusterrolebindings', 'ClusterRoleBinding', 'rbac.authorization.k8s.io', 'v1', false),
  t('clusterroles', 'ClusterRole', 'rbac.authorization.k8s.io', 'v1', false),
  t('rolebindings', 'RoleBinding', 'rbac.authorization.k8s.io', 'v1', true),
  t('roles', 'Role', 'rbac.authorization.k8s.io', 'v1', true),
  t('priorityclasses', 'PriorityClass', 'scheduling.k8s.io', 'v1', false, ['pc']),
  t('csidrivers', 'CSIDriver', 'storage.k8s.io', 'v1', false),
  t('csinodes', 'CSINode', 'storage.k8s.io', 'v1', false),
  t('csistoragecapacities', 'CSIStorageCapacity', 'storage.k8s.io', 'v1', true),
  t('storageclasses', 'StorageClass', 'storage.k8s.io', 'v1', false, ['sc']),
  t('volumeattachments', 'VolumeAttachment', 'storage.k8s.io', 'v1', false),
];

/** `kubectl get all`: the types the `all` category expands to. */
export const ALL_CATEGORY = [
  'pods',
  'services',
  'daemonsets',
  'deployments',
  'replicasets',
  'statefulsets',
  'horizontalpodautoscalers',
  'cronjobs',
  'jobs',
  'replicationcontrollers',
] as const;

/**
 * Finds a type by plural, singular, short name or kind, optionally qualified by group or version and
 * group (`deployments.apps`, `deployments.v1.apps`, `Deployment`); case-insensitive like kubectl.
 */
export function findResourceType(
  text: string,
  types: readonly ResourceType[] = RESOURCE_TYPES,
): ResourceType | undefined {
  const lower = text.toLowerCase();
  const dot = lower.indexOf('.');
  const base = dot === -1 ? lower : lower.slice(0, dot);
  const qualifier = dot === -1 ? undefined : lower.slice(dot + 1);
  const named = types === RESOURCE_TYPES ? BY_NAME.get(base) : types.filter((r) => namesOf(r).includes(base));
  return named?.find(
    (r) =>
      qualifier === undefined ||
      qualifier === '' ||
      qualifier === r.group ||
      qualifier === `${r.version}.${r.group}` ||
      qualifier === r.version,
  );
}

/** Every name a type answers to: plural, singular, kind and short names. */
const namesOf = (r: ResourceType): string[] => [r.name, r.singular, r.kind.toLowerCase(), ...r.shortNames];

/** The built-in types by each name they answer to, in RESOURCE_TYPES order (a parse looks up every word). */
const BY_NAME = new Map<string, ResourceType[]>();
for (const r of RESOURCE_TYPES)
  for (const name of new Set(namesOf(r))) BY_NAME.set(name, [...(BY_NAME.get(name) ?? []), r]);

/** `deployment.apps` / `pod`: the prefix kubectl prints for `-o name` and for mixed-type tables. */
export const qualifiedSingular = (r: ResourceType): string =>
  r.group === '' ? r.singular : `${r.singular}.${r.group}`;

/** `apps/v1` / `v1`. */
export const apiVersionOf = (r: ResourceType): string =>
  r.group === '' ? r.version : `${r.group}/${r.version}`;
