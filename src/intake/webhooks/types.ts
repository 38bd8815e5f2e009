// Shapes shared by the webhook mappers, the intake store and the routes.

export type AlertSource = 'alertmanager' | 'pagerduty' | 'http';

/** Where an incident came from, so that results can be posted back (e.g. a PagerDuty note). */
export interface IncidentSource {
  type: AlertSource;
  /** The upstream id: PagerDuty incident id, Alertmanager fingerprint of the first alert. */
  id: string;
  /** A link back: the PagerDuty incident page, the alert's generatorURL. */
  url?: string;
  [field: string]: unknown;
}

export interface K8sRef {
  apiVersion?: string;
  kind: string;
  name: string;
  namespace?: string;
}

/** The incident fields an alert maps to (before it is given an id and a folder). */
export interface AlertFields {
  alertname: string;
  cluster: string;
  namespace: string;
  /** The object the alert is about (a Pod, a Node, a PersistentVolumeClaim, …). */
  resource: K8sRef;
  /** The owning workload (a Deployment derived from a pod name, …); equals resource when none. */
  workload: K8sRef;
  faultType: string;
  severity: string;
  summary?: string;
  description?: string;
  runbookUrl?: string;
  container?: string;
}

/**
 * Which alert of a delivery an answer is about: its place in the delivery (0-based), its upstream id
 * (Alertmanager's fingerprint, the PagerDuty incident id), its alertname and, from Alertmanager, its labels.
 */
export interface AlertRef {
  index: number;
  source: AlertSource;
  id: string;
  alertname: string;
  labels?: Record<string, string>;
}

/** One alert (or PagerDuty event) ready for the store. */
export interface MappedAlert {
  source: AlertSource;
  /**
   * Firing: the delivery's idempotency key (a second delivery changes nothing), by which a later
   * resolution finds the incident. Resolved: the key of the firing alert(s) it resolves.
   */
  key: string;
  /** Firing: a second name the incident is found by (PagerDuty incident id; a later firing takes it over). */
  aliasKey?: string;
  /** Resolved: this resolution's own idempotency key (default `<key>:resolved`). */
  resolutionKey?: string;
  status: 'firing' | 'resolved';
  /** When it started firing / was resolved (ISO-8601). */
  startsAt: string;
  endsAt?: string;
  fields: AlertFields;
  /** Alerts with equal group keys join one incident inside the window. */
  groupKey: string;
  /** The wider key whose incidents are capped at storm_limit inside the window. */
  stormKey: string;
  /** The group_by values, recorded in alerts.json. */
  group: Record<string, string>;
  sourceRef: IncidentSource;
  /** The alert exactly as received. */
  original: unknown;
}
