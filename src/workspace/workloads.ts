// The workloads behind an incident. An alert storm joins the alerts of many workloads into one incident
// (storm_limit): incident.json names the first, alerts.json's `workloads` every one, in the order they
// first alerted, each with how many of its alerts arrived. Notifications, the status page, the API and
// the agent's prompt name them all from here (bounded, with the count of the rest).

/** One workload of an incident's alerts: its kind, name and namespace, and how many alerts it sent. */
export interface IncidentWorkload {
  kind: string;
  name: string;
  namespace?: string;
  /** Alerts of this workload received (also those over max_alerts_per_incident, counted only). */
  alerts: number;
}

/** "Deployment payments/cart" (a cluster-scoped object without the namespace). */
export const workloadLabel = (w: Pick<IncidentWorkload, 'kind' | 'name' | 'namespace'>): string =>
  `${w.kind} ${w.namespace ? `${w.namespace}/` : ''}${w.name}`;

/** The same workload (kind, name and namespace alike). */
export const sameWorkload = (
  a: Pick<IncidentWorkload, 'kind' | 'name' | 'namespace'>,
  b: Pick<IncidentWorkload, 'kind' | 'name' | 'namespace'>,
): boolean => a.kind === b.kind && a.name === b.name && (a.namespace ?? '') === (b.namespace ?? '');

/**
 * Counts one more alert of `workload` in `list` (in place): an alert of a workload not there yet is
 * appended while the list holds fewer than `max`; past it, only the alerts of listed ones are counted.
 */
export function countWorkload(
  list: IncidentWorkload[],
  workload: Pick<IncidentWorkload, 'kind' | 'name' | 'namespace'>,
  max: number,
): void {
  const known = list.find((w) => sameWorkload(w, workload));
  if (known) known.alerts++;
  else if (list.length < max)
    list.push({
      kind: workload.kind,
      name: workload.name,
      ...(workload.namespace ? { namespace: workload.namespace } : {}),
      alerts: 1,
    });
}

const text = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '' && v.length <= 253;

/** alerts.json's `workloads`, read loosely: entries that are not a workload are left out. */
export function workloadsFrom(value: unknown): IncidentWorkload[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const list: IncidentWorkload[] = [];
  for (const entry of value as unknown[]) {
    if (typeof entry !== 'object' || entry === null) continue;
    const { kind, name, namespace, alerts } = entry as Record<string, unknown>;
    if (!text(kind) || !text(name)) continue;
    list.push({
      kind,
      name,
      ...(text(namespace) ? { namespace } : {}),
      alerts: Number.isSafeInteger(alerts) && (alerts as number) > 0 ? (alerts as number) : 1,
    });
  }
  return list;
}

/** Why `value` is not a `workloads` list intake can count alerts in; undefined when it is one. */
export function workloadsProblem(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return '"workloads" is not a list';
  const bad = (value as unknown[]).findIndex((entry) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return true;
    const { kind, name, alerts } = entry as Record<string, unknown>;
    return typeof kind !== 'string' || typeof name !== 'string' || !Number.isSafeInteger(alerts);
  });
  return bad >= 0
    ? `workloads[${bad}] is not a workload (an object with "kind", "name" and "alerts")`
    : undefined;
}

/**
 * The workloads as one line, at most `max` named: "Deployment payments/cart (2 alerts), Deployment
 * payments/pricing, … and 4 more workloads".
 */
export function listWorkloads(workloads: readonly IncidentWorkload[], max: number): string {
  const named = workloads
    .slice(0, max)
    .map((w) => `${workloadLabel(w)}${w.alerts > 1 ? ` (${w.alerts} alerts)` : ''}`);
  const rest = workloads.length - named.length;
  return rest > 0
    ? `${named.join(', ')} and ${rest} more workload${rest === 1 ? '' : 's'}`
    : named.join(', ');
}
