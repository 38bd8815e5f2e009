// Alertmanager webhook payloads (version 4) as Alertmanager sends them, for tests and benchmarks.

export interface AmAlert {
  [field: string]: unknown;
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
  fingerprint: string;
}

let counter = 0;

export function amAlert(labels: Record<string, string>, overrides: Partial<AmAlert> = {}): AmAlert {
  counter++;
  return {
    status: 'firing',
    labels: { alertname: 'KubePodCrashLooping', severity: 'warning', ...labels },
    annotations: {
      summary: 'Pod is crash looping.',
      description: `Pod ${labels.namespace ?? 'default'}/${labels.pod ?? 'x'} is in waiting state (reason: "CrashLoopBackOff").`,
      runbook_url: 'https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping',
    },
    startsAt: '2026-11-22T01:00:00.000Z',
    endsAt: '0001-01-01T00:00:00Z',
    generatorURL: 'http://prometheus:9090/graph?g0.expr=x',
    fingerprint: `fp${String(counter).padStart(14, '0')}`,
    ...overrides,
  };
}

export function amPayload(alerts: AmAlert[], status: 'firing' | 'resolved' = 'firing') {
  return {
    version: '4',
    groupKey: '{}:{alertname="KubePodCrashLooping"}',
    truncatedAlerts: 0,
    status,
    receiver: 'triage-runner',
    groupLabels: { alertname: alerts[0]?.labels.alertname ?? '' },
    commonLabels: {},
    commonAnnotations: {},
    externalURL: 'http://alertmanager:9093',
    alerts,
  };
}
