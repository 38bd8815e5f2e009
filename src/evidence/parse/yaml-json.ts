import { parseAllDocuments } from '../../shared/yaml.js';
import type { ContainerFacts, EventFacts, PodFacts } from './types.js';

// `kubectl get -o yaml|json` read back into the same fields as `describe`: a Pod, a List of them (or a
// PodList), Events. YAML is a superset of JSON, so one parser reads both; an output that does not
// parse has no fields (its lines are still searched as text).

type Obj = Record<string, unknown>;
const rec = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const quantities = (v: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(rec(v)).map(([k, q]) => [k, String(q)]));

/** `state: {waiting: {reason}}` → Waiting, its reason and exit code. */
function stateOf(v: unknown): { state?: string; reason?: string; exitCode?: number } {
  const [key, detail] = Object.entries(rec(v))[0] ?? [];
  if (!key) return {};
  const d = rec(detail);
  const reason = str(d.reason);
  const exitCode = num(d.exitCode);
  return {
    state: key.charAt(0).toUpperCase() + key.slice(1),
    ...(reason ? { reason } : {}),
    ...(exitCode !== undefined ? { exitCode } : {}),
  };
}

function containersOf(pod: Obj): ContainerFacts[] {
  const status = rec(pod.status);
  const statuses = new Map(
    [...arr(status.containerStatuses), ...arr(status.initContainerStatuses)].map((s) => [
      str(rec(s).name) ?? '',
      rec(s),
    ]),
  );
  const spec = rec(pod.spec);
  return [...arr(spec.initContainers), ...arr(spec.containers)].map((raw) => {
    const c = rec(raw);
    const name = str(c.name) ?? '';
    const s = statuses.get(name) ?? {};
    const resources = rec(c.resources);
    const now = stateOf(s.state);
    const last = stateOf(s.lastState);
    const image = str(s.image) ?? str(c.image);
    const restartCount = num(s.restartCount);
    return {
      name,
      ...(image ? { image } : {}),
      ...(now.state ? { state: now.state } : {}),
      ...(now.reason ? { reason: now.reason } : {}),
      ...(now.exitCode !== undefined ? { exitCode: now.exitCode } : {}),
      ...(last.state ? { lastState: last.state } : {}),
      ...(last.reason ? { lastReason: last.reason } : {}),
      ...(last.exitCode !== undefined ? { lastExitCode: last.exitCode } : {}),
      ...(typeof s.ready === 'boolean' ? { ready: s.ready } : {}),
      ...(restartCount !== undefined ? { restartCount } : {}),
      limits: quantities(resources.limits),
      requests: quantities(resources.requests),
    };
  });
}

function podOf(o: Obj): PodFacts {
  const meta = rec(o.metadata);
  const namespace = str(meta.namespace);
  const phase = str(rec(o.status).phase);
  return {
    name: str(meta.name) ?? '',
    ...(namespace ? { namespace } : {}),
    ...(phase ? { phase } : {}),
    containers: containersOf(o),
  };
}

function eventOf(o: Obj): EventFacts {
  const involved = rec(o.involvedObject ?? o.regarding);
  const type = str(o.type);
  return {
    object: `${(str(involved.kind) ?? '').toLowerCase()}/${str(involved.name) ?? ''}`,
    ...(type ? { type } : {}),
    reason: str(o.reason) ?? '',
    message: str(o.message ?? o.note) ?? '',
  };
}

/** The pods and events of a `-o yaml|json` output; none when it does not parse. */
export function parseObjects(text: string): { pods: PodFacts[]; events: EventFacts[] } {
  const pods: PodFacts[] = [];
  const events: EventFacts[] = [];
  let docs: unknown[];
  try {
    docs = parseAllDocuments(text).flatMap((d) => ('errors' in d && d.errors.length > 0 ? [] : [d.toJS()]));
  } catch {
    return { pods, events };
  }
  const visit = (value: unknown, depth: number): void => {
    const o = rec(value);
    if (depth > 2) return;
    if (o.kind === 'Pod') pods.push(podOf(o));
    else if (o.kind === 'Event') events.push(eventOf(o));
    else for (const item of arr(o.items)) visit(item, depth + 1);
  };
  for (const doc of docs) visit(doc, 0);
  return { pods, events };
}
