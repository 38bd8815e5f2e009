import type { ObjectAnswer, ObjectRequest } from '../stand-in-apiserver.js';
import { type Obj, type Scenario } from './shop.js';

// Answers the stand-in API server's GETs for a scenario's pods, events and logs, as the API server
// does: objects and lists as JSON, and — when kubectl asks for a Table (`kubectl get` does, and prints
// what comes back) — the server-side table of Kubernetes' own pod and event printers (columns, their
// priorities, the STATUS and RESTARTS rules, ages as `HumanDuration`). kubectl itself lays the table
// out, adds NAMESPACE for -A and hides priority-1 columns without -o wide; `describe`, `events`,
// `-o yaml|json` and `logs` are printed by kubectl from the objects alone.

const json = (status: number, body: unknown): ObjectAnswer => ({
  status,
  contentType: 'application/json',
  body: JSON.stringify(body),
});

const rec = (v: unknown): Obj => (v && typeof v === 'object' ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** Kubernetes' `duration.HumanDuration`: 45s, 3m20s, 40m, 5h10m, 5d, 2y30d. */
export function humanDuration(seconds: number): string {
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8)
    return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 365 * 8)
    return days % 365 === 0 ? `${Math.floor(days / 365)}y` : `${Math.floor(days / 365)}y${days % 365}d`;
  return `${Math.floor(days / 365)}y`;
}

const since = (now: number, at: string): string =>
  at ? humanDuration(Math.floor((now - Date.parse(at)) / 1000)) : '<unknown>';

const column = (name: string, priority = 0, format = '') => ({
  name,
  type: 'string',
  format,
  description: name,
  priority,
});

const POD_COLUMNS = [
  column('Name', 0, 'name'),
  column('Ready'),
  column('Status'),
  column('Restarts'),
  column('Age'),
  column('IP', 1),
  column('Node', 1),
  column('Nominated Node', 1),
  column('Readiness Gates', 1),
];

const EVENT_COLUMNS = [
  column('Last Seen'),
  column('Type'),
  column('Reason'),
  column('Object'),
  column('Subobject', 1),
  column('Source', 1),
  column('Message'),
  column('First Seen', 1),
  column('Count', 1),
  column('Name', 1, 'name'),
];

/** The pod printer's row: READY, STATUS (a waiting or terminated reason wins over the phase), RESTARTS. */
function podCells(pod: Obj, now: number): unknown[] {
  const meta = rec(pod.metadata);
  const status = rec(pod.status);
  const statuses = (status.containerStatuses as Obj[] | undefined) ?? [];
  let reason = str(status.reason) || str(status.phase);
  let restarts = 0;
  let ready = 0;
  let lastRestart = 0;
  for (const s of [...statuses].reverse()) {
    restarts += num(s.restartCount);
    const finished = str(rec(rec(s.lastState).terminated).finishedAt);
    if (finished) lastRestart = Math.max(lastRestart, Date.parse(finished));
    const state = rec(s.state);
    const waiting = rec(state.waiting);
    const terminated = rec(state.terminated);
    if (str(waiting.reason)) reason = str(waiting.reason);
    else if (str(terminated.reason)) reason = str(terminated.reason);
    else if (state.terminated) reason = `ExitCode:${num(terminated.exitCode)}`;
    else if (s.ready === true && state.running) ready++;
  }
  const restartCell = lastRestart
    ? `${restarts} (${humanDuration(Math.floor((now - lastRestart) / 1000))} ago)`
    : String(restarts);
  return [
    str(meta.name),
    // printers.go: READY counts the spec's containers (a pod not yet scheduled has no statuses).
    `${ready}/${((rec(pod.spec).containers as Obj[] | undefined) ?? []).length}`,
    reason,
    restartCell,
    since(now, str(meta.creationTimestamp)),
    str(status.podIP) || '<none>',
    str(rec(pod.spec).nodeName) || '<none>',
    '<none>',
    '<none>',
  ];
}

function eventCells(event: Obj, now: number): unknown[] {
  const involved = rec(event.involvedObject);
  const source = rec(event.source);
  const target = `${str(involved.kind).toLowerCase()}/${str(involved.name)}`;
  const count = num(event.count) || 1;
  return [
    since(now, str(event.lastTimestamp)),
    str(event.type),
    str(event.reason),
    target,
    str(involved.fieldPath),
    [str(source.component), str(source.host)].filter(Boolean).join(', '),
    str(event.message).trim(),
    since(now, str(event.firstTimestamp)),
    count,
    str(rec(event.metadata).name),
  ];
}

function table(columns: unknown[], items: Obj[], cells: (item: Obj) => unknown[]) {
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion: '4711' },
    columnDefinitions: columns,
    rows: items.map((item) => ({
      cells: cells(item),
      object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: item.metadata },
    })),
  };
}

const list = (kind: string, items: Obj[]) => ({
  kind: `${kind}List`,
  apiVersion: 'v1',
  metadata: { resourceVersion: '4711' },
  items,
});

/** `involvedObject.name=x,involvedObject.namespace=y,…`: the events that match every term. */
function selected(events: Obj[], fieldSelector: string | null): Obj[] {
  if (!fieldSelector) return events;
  const terms = fieldSelector.split(',').map((t) => t.split('='));
  return events.filter((e) =>
    terms.every(([key, value]) => {
      const [, field] = (key ?? '').split('.');
      return !key?.startsWith('involvedObject.') || str(rec(e.involvedObject)[field ?? '']) === value;
    }),
  );
}

const notFound = (kind: string, name: string) =>
  json(404, {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `${kind} "${name}" not found`,
    reason: 'NotFound',
    details: { name, kind },
    code: 404,
  });

/** The objects hook of the stand-in API server for `scenario(now)`, built afresh for each request. */
export function serveScenario(
  scenario: (now: number) => Scenario,
  clock: () => number = Date.now,
): (request: ObjectRequest) => ObjectAnswer | undefined {
  return (request) => {
    const url = new URL(request.path, 'http://stand-in');
    const m = /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?(pods|events)(?:\/([^/]+))?(?:\/(log))?$/.exec(
      url.pathname,
    );
    if (!m) return undefined;
    const [, namespace, resource, name, sub] = m;
    const now = clock();
    const world = scenario(now);
    const inNamespace = (o: Obj) => !namespace || str(rec(o.metadata).namespace) === namespace;
    const asTable = request.accept.includes('as=Table');
    if (resource === 'events') {
      const events = selected(world.events.filter(inNamespace), url.searchParams.get('fieldSelector'));
      return json(
        200,
        asTable ? table(EVENT_COLUMNS, events, (e) => eventCells(e, now)) : list('Event', events),
      );
    }
    const pods = world.pods.filter(inNamespace);
    if (!name)
      return json(200, asTable ? table(POD_COLUMNS, pods, (p) => podCells(p, now)) : list('Pod', pods));
    const pod = pods.find((p) => str(rec(p.metadata).name) === name);
    if (!pod) return notFound('pods', name);
    if (!sub) return json(200, asTable ? table(POD_COLUMNS, [pod], (p) => podCells(p, now)) : pod);
    const container = url.searchParams.get('container') ?? '';
    const previous = url.searchParams.get('previous') === 'true';
    const text = world.logs[`${name}/${container}${previous ? '/previous' : ''}`];
    if (text === undefined)
      return json(400, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        message: `previous terminated container "${container}" in pod "${name}" not found`,
        reason: 'BadRequest',
        code: 400,
      });
    return { status: 200, contentType: 'text/plain', body: text };
  };
}
