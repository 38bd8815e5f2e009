import { incidentSchema } from '../../workspace/incident-schema.js';
import type { Incident } from '../../workspace/incident.js';
import { ALERTS_FILE } from '../../workspace/layout.js';
import type { MappedAlert } from './types.js';

// The incident.json an alert opens: nightcrier's fields, the upstream source (for posting results
// back), the owning workload, and a context the agent reads first. All alerts are in alerts.json.

const TEXT_MAX = 4096;

const clip = (text: string | undefined): string | undefined =>
  text === undefined || text.length <= TEXT_MAX
    ? text
    : `${text.slice(0, TEXT_MAX)}… (cut; full text in alerts.json)`;

export function incidentFromAlert(alert: MappedAlert, incidentId: string, nowIso: string): Incident {
  const { fields } = alert;
  const original = alert.original as { labels?: unknown } | undefined;
  const context = {
    alertname: fields.alertname,
    summary: clip(fields.summary),
    description: clip(fields.description),
    runbookUrl: fields.runbookUrl,
    container: fields.container,
    startsAt: alert.startsAt,
    labels: alert.source === 'alertmanager' ? original?.labels : undefined,
    alertsFile: ALERTS_FILE,
  };
  const incident: Incident = {
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
  // Built from validated parts, so this only guards against a mapping bug reaching the daemon.
  incidentSchema.parse(incident);
  return incident;
}
