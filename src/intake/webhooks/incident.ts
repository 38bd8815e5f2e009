import type { z } from '../../shared/zod.js';
import { incidentSchema } from '../../workspace/incident-schema.js';
import type { Incident } from '../../workspace/incident.js';
import type { AlertRef, MappedAlert } from './types.js';
import { ALERTS_FILE } from '../../workspace/layout.js';

// The incident.json an alert opens: nightcrier's fields, the upstream source (for posting results
// back), the owning workload, and a context the agent reads first. All alerts are in alerts.json.
// An alert whose labels cannot make a valid incident (a `pod` label that is not a Kubernetes name) is
// refused on its own, before it reaches the store: the other alerts of its delivery are taken.

const TEXT_MAX = 4096;

const clip = (text: string | undefined): string | undefined =>
  text === undefined || text.length <= TEXT_MAX
    ? text
    : `${text.slice(0, TEXT_MAX)}… (cut; full text in alerts.json)`;

/** The alert's labels as received (Alertmanager); PagerDuty events have none. */
function labelsOf(alert: MappedAlert): Record<string, string> {
  if (alert.source !== 'alertmanager') return {};
  const labels = (alert.original as { labels?: unknown } | undefined)?.labels;
  return labels && typeof labels === 'object' ? (labels as Record<string, string>) : {};
}

function buildIncident(alert: MappedAlert, incidentId: string, nowIso: string): Incident {
  const { fields } = alert;
  const context = {
    alertname: fields.alertname,
    summary: clip(fields.summary),
    description: clip(fields.description),
    runbookUrl: fields.runbookUrl,
    container: fields.container,
    startsAt: alert.startsAt,
    labels: alert.source === 'alertmanager' ? labelsOf(alert) : undefined,
    alertsFile: ALERTS_FILE,
  };
  return {
    incidentId,
    faultId: alert.sourceRef.id,
    cluster: fields.cluster,
    namespace: fields.namespace,
    resource: { ...fields.resource },
    faultType: fields.faultType,
    severity: fields.severity,
    context: JSON.parse(JSON.stringify(context)) as unknown,
    timestamp: Number.isNaN(Date.parse(alert.startsAt)) ? nowIso : alert.startsAt,
    workload: { ...fields.workload },
    source: alert.sourceRef,
  };
}

export function incidentFromAlert(alert: MappedAlert, incidentId: string, nowIso: string): Incident {
  const incident = buildIncident(alert, incidentId, nowIso);
  // Alerts are checked with alertProblem before they reach the store: this only guards against a
  // mapping bug reaching the daemon.
  incidentSchema.parse(incident);
  return incident;
}

/**
 * The incident fields an alert's labels decide. The others (id, context, timestamp, source) the daemon
 * makes valid; checking only these costs a quarter of parsing the whole incident, on every alert.
 */
const labelledFields = incidentSchema.pick({
  cluster: true,
  namespace: true,
  resource: true,
  faultType: true,
  severity: true,
});

const valueAt = (source: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>(
    (node, key) =>
      node && typeof node === 'object' ? (node as Record<PropertyKey, unknown>)[key] : undefined,
    source,
  );

/** One schema issue, naming the label its value came from when one label holds exactly that value. */
function describeIssue(issue: z.core.$ZodIssue, checked: unknown, labels: Record<string, string>): string {
  const field = issue.path.map(String).join('.') || '(root)';
  const value = valueAt(checked, issue.path);
  const label =
    typeof value === 'string'
      ? Object.keys(labels).find((name) => labels[name]?.trim() === value)
      : undefined;
  return label ? `label ${label}: ${issue.message} (the incident's ${field})` : `${field}: ${issue.message}`;
}

/**
 * Why the alert cannot become an incident (a label that is not a Kubernetes name, …), naming the
 * label; undefined when it can.
 */
export function alertProblem(alert: MappedAlert): string | undefined {
  const { cluster, namespace, resource, faultType, severity } = alert.fields;
  const checked = { cluster, namespace, resource, faultType, severity };
  const parsed = labelledFields.safeParse(checked);
  if (parsed.success) return undefined;
  const labels = labelsOf(alert);
  return parsed.error.issues
    .slice(0, 4)
    .map((issue) => describeIssue(issue, checked, labels))
    .join('; ');
}

/** Which alert of a delivery `alert` is (the `index`th), for an answer about it. */
export function alertRef(alert: MappedAlert, index: number): AlertRef {
  const labels = labelsOf(alert);
  return {
    index,
    source: alert.source,
    id: alert.sourceRef.id,
    alertname: alert.fields.alertname,
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
  };
}
