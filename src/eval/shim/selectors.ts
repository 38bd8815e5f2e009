// Label selectors (`app=api,tier!=db,env in (a,b),!legacy`) and field selectors
// (`status.phase=Pending`) evaluated against recorded objects, with the API server's refusals.

export type Labels = Record<string, string>;

interface Requirement {
  key: string;
  op: 'eq' | 'ne' | 'in' | 'notin' | 'exists' | 'absent';
  values: string[];
}

/** Splits on commas outside parentheses. */
function splitTop(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of text) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

/** Parses a label selector; a string is the error kubectl would print. */
export function parseLabelSelector(text: string): Requirement[] | string {
  const out: Requirement[] = [];
  for (const part of splitTop(text)) {
    let m = /^!\s*([A-Za-z0-9_./-]+)$/.exec(part);
    if (m) {
      out.push({ key: m[1] as string, op: 'absent', values: [] });
      continue;
    }
    m = /^([A-Za-z0-9_./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(part);
    if (m) {
      const values = (m[3] as string).split(',').map((v) => v.trim());
      out.push({ key: m[1] as string, op: m[2] === 'in' ? 'in' : 'notin', values });
      continue;
    }
    m = /^([A-Za-z0-9_./-]+)\s*(==|=|!=)\s*([A-Za-z0-9_.-]*)$/.exec(part);
    if (m) {
      out.push({ key: m[1] as string, op: m[2] === '!=' ? 'ne' : 'eq', values: [m[3] as string] });
      continue;
    }
    m = /^([A-Za-z0-9_./-]+)$/.exec(part);
    if (m) {
      out.push({ key: m[1] as string, op: 'exists', values: [] });
      continue;
    }
    return `unable to parse requirement: found '${part}', expected: identifier`;
  }
  return out;
}

export function matchesLabels(requirements: Requirement[], labels: Labels): boolean {
  return requirements.every((r) => {
    const value = labels[r.key];
    switch (r.op) {
      case 'eq':
        return value === r.values[0];
      case 'ne':
        return value !== r.values[0];
      case 'in':
        return value !== undefined && r.values.includes(value);
      case 'notin':
        return value === undefined || !r.values.includes(value);
      case 'exists':
        return value !== undefined;
      case 'absent':
        return value === undefined;
    }
    return false;
  });
}

/** The field labels the API server supports per type (the rest are refused). */
const FIELD_LABELS: Record<string, string[]> = {
  pods: [
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'spec.hostNetwork',
    'status.phase',
    'status.podIP',
    'status.nominatedNodeName',
  ],
  events: [
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  nodes: ['spec.unschedulable'],
  secrets: ['type'],
  namespaces: ['status.phase'],
  replicasets: ['status.replicas'],
  jobs: ['status.successful'],
};

export interface FieldRequirement {
  path: string;
  equal: boolean;
  value: string;
}

/** Parses a field selector for `type`; a string is the API server's refusal. */
export function parseFieldSelector(text: string, type: string): FieldRequirement[] | string {
  const out: FieldRequirement[] = [];
  for (const part of text.split(',').filter((p) => p.trim() !== '')) {
    const m = /^\s*([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(part);
    if (!m) return `invalid selector: '${text}'; can't understand '${part}'`;
    const path = m[1] as string;
    const allowed = ['metadata.name', 'metadata.namespace', ...(FIELD_LABELS[type] ?? [])];
    if (!allowed.includes(path)) return `field label not supported: ${path}`;
    out.push({ path, equal: m[2] !== '!=', value: m[3] as string });
  }
  return out;
}

function fieldValue(object: unknown, path: string): string {
  if (path === 'source') {
    const source = (object as { source?: { component?: string } }).source;
    return source?.component ?? '';
  }
  let node: unknown = object;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object') return '';
    node = (node as Record<string, unknown>)[key];
  }
  if (node === undefined || node === null) return path === 'spec.unschedulable' ? 'false' : '';
  return String(node);
}

export function matchesFields(requirements: FieldRequirement[], object: unknown): boolean {
  return requirements.every((r) => (fieldValue(object, r.path) === r.value) === r.equal);
}
