import { arr, field, num, rec, str, type FrozenObject } from './cluster.js';
import { age } from './table.js';

// The columns `kubectl get` prints per type, computed from recorded objects the way kubectl's
// printers (pkg/printers/internalversion/printers.go) compute them: pod STATUS and READY, deployment
// READY, node ROLES, PVC columns, event LAST SEEN and OBJECT.

export interface Printer {
  headers: string[];
  /** Extra columns of `-o wide`, appended. */
  wide: string[];
  row(object: unknown, now: number): string[];
  wideRow(object: unknown, now: number): string[];
}

const created = (o: unknown, now: number) => age(field(o, 'metadata', 'creationTimestamp'), now);
const none = (v: string) => (v === '' ? '<none>' : v);

interface ContainerState {
  waiting?: { reason?: string };
  running?: unknown;
  terminated?: { reason?: string; exitCode?: number; signal?: number; finishedAt?: string };
}

function podStatus(pod: unknown, now: number): { ready: string; status: string; restarts: string } {
  const containers = arr(field(pod, 'spec', 'containers'));
  const statuses = arr(field(pod, 'status', 'containerStatuses'));
  let reason = str(field(pod, 'status', 'reason')) || str(field(pod, 'status', 'phase'));
  let restarts = 0;
  let ready = 0;
  let lastRestart = 0;
  let initializing = false;
  const inits = arr(field(pod, 'status', 'initContainerStatuses'));
  const initCount = arr(field(pod, 'spec', 'initContainers')).length;
  for (const [i, s] of inits.entries()) {
    const state = rec(field(s, 'state')) as ContainerState;
    restarts += num(field(s, 'restartCount'));
    if (state.terminated && state.terminated.exitCode === 0) continue;
    if (state.terminated) {
      reason = state.terminated.reason
        ? `Init:${state.terminated.reason}`
        : `Init:ExitCode:${state.terminated.exitCode ?? 0}`;
    } else if (state.waiting?.reason && state.waiting.reason !== 'PodInitializing') {
      reason = `Init:${state.waiting.reason}`;
    } else {
      reason = `Init:${i}/${initCount}`;
    }
    initializing = true;
    break;
  }
  if (!initializing) {
    restarts = 0;
    let hasRunning = false;
    for (let i = statuses.length - 1; i >= 0; i--) {
      const s = statuses[i];
      const state = rec(field(s, 'state')) as ContainerState;
      restarts += num(field(s, 'restartCount'));
      const finished = str(field(s, 'lastState', 'terminated', 'finishedAt'));
      if (finished) lastRestart = Math.max(lastRestart, Date.parse(finished) || 0);
      if (state.waiting?.reason) reason = state.waiting.reason;
      else if (state.terminated?.reason) reason = state.terminated.reason;
      else if (state.terminated) {
        reason = state.terminated.signal
          ? `Signal:${state.terminated.signal}`
          : `ExitCode:${state.terminated.exitCode ?? 0}`;
      } else if (field(s, 'ready') === true && state.running) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      const readyCondition = arr(field(pod, 'status', 'conditions')).some(
        (c) => field(c, 'type') === 'Ready' && field(c, 'status') === 'True',
      );
      reason = readyCondition ? 'Running' : 'NotReady';
    }
  }
  if (field(pod, 'metadata', 'deletionTimestamp')) reason = 'Terminating';
  const restartText =
    restarts !== 0 && lastRestart > 0
      ? `${restarts} (${age(new Date(lastRestart).toISOString(), now)} ago)`
      : String(restarts);
  return { ready: `${ready}/${containers.length}`, status: reason, restarts: restartText };
}

const pods: Printer = {
  headers: ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE'],
  wide: ['IP', 'NODE', 'NOMINATED NODE', 'READINESS GATES'],
  row(o, now) {
    const s = podStatus(o, now);
    return [str(field(o, 'metadata', 'name')), s.ready, s.status, s.restarts, created(o, now)];
  },
  wideRow(o) {
    const gates = arr(field(o, 'spec', 'readinessGates'));
    const gateText =
      gates.length === 0
        ? '<none>'
        : `${gates.filter((g) => arr(field(o, 'status', 'conditions')).some((c) => field(c, 'type') === field(g, 'conditionType') && field(c, 'status') === 'True')).length}/${gates.length}`;
    return [
      none(str(field(o, 'status', 'podIP'))),
      none(str(field(o, 'spec', 'nodeName'))),
      none(str(field(o, 'status', 'nominatedNodeName'))),
      gateText,
    ];
  },
};

const podTemplateWide = (o: unknown, selector: unknown): string[] => {
  const containers = arr(field(o, 'spec', 'template', 'spec', 'containers'));
  const labels = rec(field(selector, 'matchLabels'));
  const selectorText = Object.entries(labels)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',');
  return [
    containers.map((c) => str(field(c, 'name'))).join(','),
    containers.map((c) => str(field(c, 'image'))).join(','),
    none(selectorText),
  ];
};

const deployments: Printer = {
  headers: ['NAME', 'READY', 'UP-TO-DATE', 'AVAILABLE', 'AGE'],
  wide: ['CONTAINERS', 'IMAGES', 'SELECTOR'],
  row: (o, now) => [
    str(field(o, 'metadata', 'name')),
    `${num(field(o, 'status', 'readyReplicas'))}/${num(field(o, 'spec', 'replicas'), 1)}`,
    String(num(field(o, 'status', 'updatedReplicas'))),
    String(num(field(o, 'status', 'availableReplicas'))),
    created(o, now),
  ],
  wideRow: (o) => podTemplateWide(o, field(o, 'spec', 'selector')),
};

const replicasets: Printer = {
  headers: ['NAME', 'DESIRED', 'CURRENT', 'READY', 'AGE'],
  wide: ['CONTAINERS', 'IMAGES', 'SELECTOR'],
  row: (o, now) => [
    str(field(o, 'metadata', 'name')),
    String(num(field(o, 'spec', 'replicas'), 1)),
    String(num(field(o, 'status', 'replicas'))),
    String(num(field(o, 'status', 'readyReplicas'))),
    created(o, now),
  ],
  wideRow: (o) => podTemplateWide(o, field(o, 'spec', 'selector')),
};

const statefulsets: Printer = {
  headers: ['NAME', 'READY', 'AGE'],
  wide: ['CONTAINERS', 'IMAGES'],
  row: (o, now) => [
    str(field(o, 'metadata', 'name')),
    `${num(field(o, 'status', 'readyReplicas'))}/${num(field(o, 'spec', 'replicas'), 1)}`,
    created(o, now),
  ],
  wideRow: (o) => podTemplateWide(o, undefined).slice(0, 2),
};

function servicePorts(o: unknown): string {
  const ports = arr(field(o, 'spec', 'ports')).map((p) => {
    const node = num(field(p, 'nodePort'));
    const protocol = str(field(p, 'protocol'), 'TCP');
    return node ? `${num(field(p, 'port'))}:${node}/${protocol}` : `${num(field(p, 'port'))}/${protocol}`;
  });
  return none(ports.join(','));
}

const services: Printer = {
  headers: ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE'],
  wide: ['SELECTOR'],
  row(o, now) {
    const type = str(field(o, 'spec', 'type'), 'ClusterIP');
    const ingress = arr(field(o, 'status', 'loadBalancer', 'ingress')).map(
      (i) => str(field(i, 'ip')) || str(field(i, 'hostname')),
    );
    const externalIps = arr(field(o, 'spec', 'externalIPs')).map((i) => String(i));
    const external =
      type === 'LoadBalancer'
        ? ingress.length > 0
          ? ingress.join(',')
          : '<pending>'
        : type === 'ExternalName'
          ? str(field(o, 'spec', 'externalName'))
          : none(externalIps.join(','));
    return [
      str(field(o, 'metadata', 'name')),
      type,
      none(str(field(o, 'spec', 'clusterIP'))),
      external,
      servicePorts(o),
      created(o, now),
    ];
  },
  wideRow: (o) => [
    none(
      Object.entries(rec(field(o, 'spec', 'selector')))
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(','),
    ),
  ],
};

const endpoints: Printer = {
  headers: ['NAME', 'ENDPOINTS', 'AGE'],
  wide: [],
  row(o, now) {
    const list: string[] = [];
    for (const subset of arr(field(o, 'subsets'))) {
      const ports = arr(field(subset, 'ports'));
      for (const address of arr(field(subset, 'addresses'))) {
        const ip = str(field(address, 'ip'));
        if (ports.length === 0) list.push(ip);
        for (const port of ports) list.push(`${ip}:${num(field(port, 'port'))}`);
      }
    }
    const shown =
      list.length > 3 ? `${list.slice(0, 3).join(',')} + ${list.length - 3} more...` : list.join(',');
    return [str(field(o, 'metadata', 'name')), none(shown), created(o, now)];
  },
  wideRow: () => [],
};

const configmaps: Printer = {
  headers: ['NAME', 'DATA', 'AGE'],
  wide: [],
  row: (o, now) => [
    str(field(o, 'metadata', 'name')),
    String(Object.keys(rec(field(o, 'data'))).length + Object.keys(rec(field(o, 'binaryData'))).length),
    created(o, now),
  ],
  wideRow: () => [],
};

const secrets: Printer = {
  headers: ['NAME', 'TYPE', 'DATA', 'AGE'],
  wide: [],
  row: (o, now) => [
    str(field(o, 'metadata', 'name')),
    str(field(o, 'type'), 'Opaque'),
    String(Object.keys(rec(field(o, 'data'))).length),
    created(o, now),
  ],
  wideRow: () => [],
};

const ACCESS_MODES: Record<string, string> = {
  ReadWriteOnce: 'RWO',
  ReadOnlyMany: 'ROX',
  ReadWriteMany: 'RWX',
  ReadWriteOncePod: 'RWOP',
};
const accessModes = (modes: unknown[]) => modes.map((m) => ACCESS_MODES[String(m)] ?? String(m)).join(',');

const persistentvolumeclaims: Printer = {
  headers: [
    'NAME',
    'STATUS',
    'VOLUME',
    'CAPACITY',
    'ACCESS MODES',
    'STORAGECLASS',
    'VOLUMEATTRIBUTESCLASS',
    'AGE',
  ],
  wide: ['VOLUMEMODE'],
  row(o, now) {
    const volume = str(field(o, 'spec', 'volumeName'));
    const bound = volume !== '';
    return [
      str(field(o, 'metadata', 'name')),
      field(o, 'metadata', 'deletionTimestamp') ? 'Terminating' : str(field(o, 'status', 'phase')),
      volume,
      bound ? str(field(o, 'status', 'capacity', 'storage')) : '',
      bound ? accessModes(arr(field(o, 'status', 'accessModes'))) : '',
      str(field(o, 'metadata', 'annotations', 'volume.beta.kubernetes.io/storage-class')) ||
        str(field(o, 'spec', 'storageClassName')),
      str(field(o, 'spec', 'volumeAttributesClassName')) || '<unset>',
      created(o, now),
    ];
  },
  wideRow: (o) => [str(field(o, 'spec', 'volumeMode')) || '<unset>'],
};

const persistentvolumes: Printer = {
  headers: [
    'NAME',
    'CAPACITY',
    'ACCESS MODES',
    'RECLAIM POLICY',
    'STATUS',
    'CLAIM',
    'STORAGECLASS',
    'VOLUMEATTRIBUTESCLASS',
    'REASON',
    'AGE',
  ],
  wide: ['VOLUMEMODE'],
  row(o, now) {
    const claim = field(o, 'spec', 'claimRef');
    return [
      str(field(o, 'metadata', 'name')),
      str(field(o, 'spec', 'capacity', 'storage')),
      accessModes(arr(field(o, 'spec', 'accessModes'))),
      str(field(o, 'spec', 'persistentVolumeReclaimPolicy')),
      str(field(o, 'status', 'phase')),
      claim ? `${str(field(claim, 'namespace'))}/${str(field(claim, 'name'))}` : '',
      str(field(o, 'spec', 'storageClassName')),
      str(field(o, 'spec', 'volumeAttributesClassName')) || '<unset>',
      str(field(o, 'status', 'reason')),
      created(o, now),
    ];
  },
  wideRow: (o) => [str(field(o, 'spec', 'volumeMode')) || '<unset>'],
};

const storageclasses: Printer = {
  headers: ['NAME', 'PROVISIONER', 'RECLAIMPOLICY', 'VOLUMEBINDINGMODE', 'ALLOWVOLUMEEXPANSION', 'AGE'],
  wide: [],
  row(o, now) {
    const isDefault =
      str(field(o, 'metadata', 'annotations', 'storageclass.kubernetes.io/is-default-class')) === 'true';
    return [
      `${str(field(o, 'metadata', 'name'))}${isDefault ? ' (default)' : ''}`,
      str(field(o, 'provisioner')),
      str(field(o, 'reclaimPolicy'), 'Delete'),
      str(field(o, 'volumeBindingMode'), 'Immediate'),
      String(field(o, 'allowVolumeExpansion') === true),
      created(o, now),
    ];
  },
  wideRow: () => [],
};

function nodeRoles(o: unknown): string {
  const labels = rec(field(o, 'metadata', 'labels'));
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(labels)) {
    if (k.startsWith('node-role.kubernetes.io/')) roles.add(k.slice('node-role.kubernetes.io/'.length));
    else if (k === 'kubernetes.io/role') roles.add(String(v));
  }
  return roles.size === 0 ? '<none>' : [...roles].sort().join(',');
}

const nodes: Printer = {
  headers: ['NAME', 'STATUS', 'ROLES', 'AGE', 'VERSION'],
  wide: ['INTERNAL-IP', 'EXTERNAL-IP', 'OS-IMAGE', 'KERNEL-VERSION', 'CONTAINER-RUNTIME'],
  row(o, now) {
    const ready = arr(field(o, 'status', 'conditions')).find((c) => field(c, 'type') === 'Ready');
    const readyStatus = field(ready, 'status');
    const status = [readyStatus === 'True' ? 'Ready' : readyStatus === 'False' ? 'NotReady' : 'Unknown'];
    if (field(o, 'spec', 'unschedulable') === true) status.push('SchedulingDisabled');
    return [
      str(field(o, 'metadata', 'name')),
      status.join(','),
      nodeRoles(o),
      created(o, now),
      str(field(o, 'status', 'nodeInfo', 'kubeletVersion')),
    ];
  },
  wideRow(o) {
    const address = (type: string) =>
      none(
        arr(field(o, 'status', 'addresses'))
          .filter((a) => field(a, 'type') === type)
          .map((a) => str(field(a, 'address')))
          .join(','),
      );
    return [
      address('InternalIP'),
      address('ExternalIP'),
      str(field(o, 'status', 'nodeInfo', 'osImage')),
      str(field(o, 'status', 'nodeInfo', 'kernelVersion')),
      str(field(o, 'status', 'nodeInfo', 'containerRuntimeVersion')),
    ];
  },
};

const namespaces: Printer = {
  headers: ['NAME', 'STATUS', 'AGE'],
  wide: [],
  row: (o, now) => [
    str(field(o, 'metadata', 'name')),
    str(field(o, 'status', 'phase'), 'Active'),
    created(o, now),
  ],
  wideRow: () => [],
};

/** An event's last and first sighting, and its count, the way printEvent reads them. */
export function eventTimes(o: unknown): { last: string; first: string; count: number } {
  const first = str(field(o, 'firstTimestamp')) || str(field(o, 'eventTime'));
  let last = str(field(o, 'lastTimestamp')) || first;
  let count = num(field(o, 'count'));
  const series = field(o, 'series');
  if (series) {
    last = str(field(series, 'lastObservedTime')) || last;
    count = num(field(series, 'count'), count);
  } else if (count === 0) count = 1;
  return { last, first, count };
}

export const eventObject = (o: unknown): string => {
  const kind = str(field(o, 'involvedObject', 'kind')).toLowerCase();
  const name = str(field(o, 'involvedObject', 'name'));
  return name ? `${kind}/${name}` : kind;
};

const events: Printer = {
  headers: ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'],
  wide: [],
  row(o, now) {
    const t = eventTimes(o);
    return [
      age(t.last, now),
      str(field(o, 'type')),
      str(field(o, 'reason')),
      eventObject(o),
      str(field(o, 'message')).trim(),
    ];
  },
  wideRow: () => [],
};

const generic: Printer = {
  headers: ['NAME', 'AGE'],
  wide: [],
  row: (o, now) => [str(field(o, 'metadata', 'name')), created(o, now)],
  wideRow: () => [],
};

const PRINTERS: Record<string, Printer> = {
  pods,
  deployments,
  replicasets,
  statefulsets,
  services,
  endpoints,
  configmaps,
  secrets,
  persistentvolumeclaims,
  persistentvolumes,
  storageclasses,
  nodes,
  namespaces,
  events,
};

export const printerFor = (type: string): Printer => PRINTERS[type] ?? generic;

/** `kubectl get events -o wide` has its own column set rather than extra columns. */
export const EVENTS_WIDE_HEADERS = [
  'LAST SEEN',
  'TYPE',
  'REASON',
  'OBJECT',
  'SUBOBJECT',
  'SOURCE',
  'MESSAGE',
  'FIRST SEEN',
  'COUNT',
  'NAME',
];

export function eventsWideRow(o: FrozenObject, now: number): string[] {
  const t = eventTimes(o.object);
  const source = [str(field(o.object, 'source', 'component')), str(field(o.object, 'source', 'host'))]
    .filter(Boolean)
    .join(', ');
  return [
    age(t.last, now),
    str(field(o.object, 'type')),
    str(field(o.object, 'reason')),
    eventObject(o.object),
    str(field(o.object, 'involvedObject', 'fieldPath')),
    source || str(field(o.object, 'reportingComponent')),
    str(field(o.object, 'message')).trim(),
    age(t.first, now),
    String(t.count),
    o.name,
  ];
}
