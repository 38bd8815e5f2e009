// The objects of namespace `shop`, as an API server would hold them, for running the real kubectl
// against (test/support/kube-objects/serve.ts): a pod crash-looping on a bad HTTP_PORT (its previous
// log says `FATAL invalid HTTP_PORT "8O80"`, its last state is Error, exit 1), a separate worker pod
// with an old OOMKilled (exit 137, five days ago), a two-container web pod with a failing readiness
// probe, their events and their logs. Times are relative to `now`, as a live cluster's would be.

export type Obj = Record<string, unknown>;

export interface Scenario {
  pods: Obj[];
  events: Obj[];
  /** Logs by `<pod>/<container>` and `<pod>/<container>/previous`. */
  logs: Record<string, string>;
}

export const NAMESPACE = 'shop';
export const API_POD = 'api-7d9f-x2k9q';
export const WORKER_POD = 'worker-5c8d9-q7m2p';
export const WEB_POD = 'web-6b7c8-zx9lk';

const ago = (now: number, seconds: number): string =>
  new Date(Math.floor(now / 1000) * 1000 - seconds * 1000).toISOString().replace('.000Z', 'Z');

const MIN = 60;
const HOUR = 3600;
const DAY = 86_400;

function pod(
  now: number,
  name: string,
  app: string,
  hash: string,
  age: number,
  ip: string,
  containers: Obj[],
  statuses: Obj[],
): Obj {
  const uid = `${name}-uid`;
  const ready = statuses.every((s) => s.ready === true);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NAMESPACE,
      uid,
      resourceVersion: '4711',
      creationTimestamp: ago(now, age),
      labels: { app, 'pod-template-hash': hash },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `${app}-${hash}`,
          uid: `${app}-${hash}-uid`,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      nodeName: 'node-1',
      restartPolicy: 'Always',
      serviceAccountName: 'default',
      containers,
    },
    status: {
      phase: 'Running',
      hostIP: '10.1.0.5',
      podIP: ip,
      podIPs: [{ ip }],
      startTime: ago(now, age),
      qosClass: 'Burstable',
      conditions: [
        { type: 'Initialized', status: 'True', lastTransitionTime: ago(now, age) },
        { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: ago(now, age) },
        { type: 'ContainersReady', status: ready ? 'True' : 'False', lastTransitionTime: ago(now, age) },
        { type: 'PodScheduled', status: 'True', lastTransitionTime: ago(now, age) },
      ],
      containerStatuses: statuses,
    },
  };
}

function event(
  now: number,
  name: string,
  podName: string,
  container: string,
  e: { type: string; reason: string; message: string; count: number; first: number; last: number },
): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: NAMESPACE, uid: `${name}-uid`, creationTimestamp: ago(now, e.first) },
    involvedObject: {
      apiVersion: 'v1',
      kind: 'Pod',
      name: podName,
      namespace: NAMESPACE,
      uid: `${podName}-uid`,
      fieldPath: `spec.containers{${container}}`,
    },
    reason: e.reason,
    message: e.message,
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: ago(now, e.first),
    lastTimestamp: ago(now, e.last),
    count: e.count,
    type: e.type,
    reportingComponent: 'kubelet',
    reportingInstance: 'node-1',
  };
}

const API_IMAGE = 'registry.example/shop/api:2.3.1';
const WORKER_IMAGE = 'registry.example/shop/worker:1.4.0';

/** The namespace as it stands at `now` (milliseconds). */
export function shopScenario(now: number): Scenario {
  const api = pod(
    now,
    API_POD,
    'api',
    '7d9f',
    40 * MIN,
    '10.0.0.12',
    [
      {
        name: 'api',
        image: API_IMAGE,
        ports: [{ containerPort: 8080, protocol: 'TCP' }],
        env: [
          { name: 'HTTP_PORT', valueFrom: { configMapKeyRef: { name: 'api-config', key: 'port' } } },
          { name: 'DATABASE_PASSWORD', value: 'hunter2-prod-4471' },
        ],
        resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '128Mi' } },
      },
    ],
    [
      {
        name: 'api',
        image: API_IMAGE,
        imageID: `${API_IMAGE}@sha256:${'a'.repeat(64)}`,
        containerID: `containerd://${'c'.repeat(64)}`,
        ready: false,
        started: false,
        restartCount: 14,
        state: {
          waiting: {
            reason: 'CrashLoopBackOff',
            message: `back-off 5m0s restarting failed container=api pod=${API_POD}_shop(${API_POD}-uid)`,
          },
        },
        lastState: {
          terminated: {
            exitCode: 1,
            reason: 'Error',
            startedAt: ago(now, 2 * MIN + 5),
            finishedAt: ago(now, 2 * MIN),
            containerID: `containerd://${'c'.repeat(64)}`,
          },
        },
      },
    ],
  );
  const worker = pod(
    now,
    WORKER_POD,
    'worker',
    '5c8d9',
    6 * DAY,
    '10.0.0.13',
    [
      {
        name: 'worker',
        image: WORKER_IMAGE,
        resources: { limits: { cpu: '1', memory: '512Mi' }, requests: { cpu: '200m', memory: '256Mi' } },
      },
    ],
    [
      {
        name: 'worker',
        image: WORKER_IMAGE,
        imageID: `${WORKER_IMAGE}@sha256:${'b'.repeat(64)}`,
        containerID: `containerd://${'d'.repeat(64)}`,
        ready: true,
        started: true,
        restartCount: 1,
        state: { running: { startedAt: ago(now, 5 * DAY) } },
        lastState: {
          terminated: {
            exitCode: 137,
            reason: 'OOMKilled',
            startedAt: ago(now, 6 * DAY),
            finishedAt: ago(now, 5 * DAY),
            containerID: `containerd://${'e'.repeat(64)}`,
          },
        },
      },
    ],
  );
  const web = pod(
    now,
    WEB_POD,
    'web',
    '6b7c8',
    3 * HOUR,
    '10.0.0.14',
    [
      {
        name: 'web',
        image: 'nginx:1.25.3',
        ports: [{ containerPort: 8080, protocol: 'TCP' }],
        readinessProbe: { httpGet: { path: '/ready', port: 8080 }, periodSeconds: 10 },
        resources: { limits: { memory: '128Mi' }, requests: { cpu: '50m', memory: '64Mi' } },
      },
      { name: 'log-shipper', image: 'fluent/fluent-bit:2.2.0', resources: {} },
    ],
    [
      {
        name: 'log-shipper',
        image: 'fluent/fluent-bit:2.2.0',
        imageID: `fluent/fluent-bit@sha256:${'f'.repeat(64)}`,
        containerID: `containerd://${'1'.repeat(64)}`,
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: ago(now, 3 * HOUR) } },
        lastState: {},
      },
      {
        name: 'web',
        image: 'nginx:1.25.3',
        imageID: `nginx@sha256:${'2'.repeat(64)}`,
        containerID: `containerd://${'3'.repeat(64)}`,
        ready: true,
        started: true,
        restartCount: 0,
        state: { running: { startedAt: ago(now, 3 * HOUR) } },
        lastState: {},
      },
    ],
  );
  const events = [
    event(now, `${API_POD}.17a1`, API_POD, 'api', {
      type: 'Warning',
      reason: 'BackOff',
      message: `Back-off restarting failed container api in pod ${API_POD}_shop(${API_POD}-uid)`,
      count: 63,
      first: 38 * MIN,
      last: 1 * MIN,
    }),
    event(now, `${API_POD}.17a2`, API_POD, 'api', {
      type: 'Normal',
      reason: 'Pulled',
      message: `Container image "${API_IMAGE}" already present on machine`,
      count: 15,
      first: 40 * MIN,
      last: 2 * MIN,
    }),
    event(now, `${WEB_POD}.18b1`, WEB_POD, 'web', {
      type: 'Warning',
      reason: 'Unhealthy',
      message: 'Readiness probe failed: Get "http://10.0.0.14:8080/ready": context deadline exceeded',
      count: 3,
      first: 25 * MIN,
      last: 10 * MIN,
    }),
  ];
  return { pods: [api, worker, web], events, logs: LOGS };
}

const LOGS: Record<string, string> = {
  [`${API_POD}/api/previous`]: [
    '2026-11-28T16:35:01.812Z INFO  starting api v2.3.1 (commit 9f2c1e7)',
    '2026-11-28T16:35:01.815Z INFO  loading configuration from environment',
    '2026-11-28T16:35:01.902Z FATAL invalid HTTP_PORT "8O80": strconv.Atoi: parsing "8O80": invalid syntax',
    '',
  ].join('\n'),
  [`${API_POD}/api`]: [
    '2026-11-28T16:37:06.001Z INFO  starting api v2.3.1 (commit 9f2c1e7)',
    '2026-11-28T16:37:06.003Z INFO  loading configuration from environment',
    '',
  ].join('\n'),
  [`${WORKER_POD}/worker`]: [
    'time="2026-11-23T16:38:00Z" level=info msg="worker starting" version=1.4.0',
    'time="2026-11-23T16:38:01Z" level=info msg="connected to database" dsn="postgres://worker:s3cr3t-Pa55w0rd-9931@db.shop:5432/orders"',
    ...Array.from(
      { length: 8 },
      (_, i) =>
        `time="2026-11-28T16:${String(30 + i).padStart(2, '0')}:00Z" level=info msg="processed batch" size=500 took=${120 + i * 7}ms`,
    ),
    '',
  ].join('\n'),
  [`${WORKER_POD}/worker/previous`]: [
    'time="2026-11-22T09:12:00Z" level=info msg="worker starting" version=1.4.0',
    'time="2026-11-23T16:36:40Z" level=info msg="processing batch" size=5000',
    'time="2026-11-23T16:37:02Z" level=info msg="processing batch" size=20000',
    '',
  ].join('\n'),
  [`${WEB_POD}/web`]: [
    '10.0.0.1 - - [28/Nov/2026:16:20:11 +0000] "GET /ready HTTP/1.1" 503 0 "-" "kube-probe/1.32"',
    '10.0.0.1 - - [28/Nov/2026:16:20:21 +0000] "GET /ready HTTP/1.1" 200 2 "-" "kube-probe/1.32"',
    '',
  ].join('\n'),
};
