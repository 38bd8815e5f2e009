import { parseTables } from './get-table.js';
import type { ContainerFacts, EventFacts, PodFacts } from './types.js';

// `kubectl describe pod` read back into fields, as kubectl's describer prints them: each pod opens
// with `Name:` at the margin; under `Containers:` (and `Init Containers:`) each container is a name at
// two spaces, its fields at four (Image, State, Last State, Ready, Restart Count, Limits, Requests), and
// their details at six (Reason, Exit Code, `cpu: 500m`). The `Events:` table closes each pod.

export interface DescribedPod extends PodFacts {
  events: EventFacts[];
}

/** `   Key:   value` → its indent, key and value; undefined for a line that is not a field. */
function fieldOf(line: string): { indent: number; key: string; value: string } | undefined {
  let indent = 0;
  while (line.charCodeAt(indent) === 32) indent++;
  const colon = line.indexOf(':', indent);
  if (colon <= indent) return undefined;
  // The key ends at the first colon, which a space or the end of the line follows.
  const after = line.charCodeAt(colon + 1);
  if (colon + 1 < line.length && after !== 32 && after !== 9) return undefined;
  return { indent, key: line.slice(indent, colon), value: line.slice(colon + 1).trim() };
}

type Block = 'state' | 'last' | 'limits' | 'requests' | 'other';

const BLOCKS: Record<string, Block> = {
  State: 'state',
  'Last State': 'last',
  Limits: 'limits',
  Requests: 'requests',
};

function containerField(container: ContainerFacts, key: string, value: string): Block {
  switch (key) {
    case 'Image':
      container.image = value;
      break;
    case 'State':
      container.state = value;
      break;
    case 'Last State':
      container.lastState = value;
      break;
    case 'Ready':
      container.ready = value === 'True';
      break;
    case 'Restart Count':
      container.restartCount = Number(value);
      break;
  }
  return BLOCKS[key] ?? 'other';
}

function detailField(container: ContainerFacts, block: Block, key: string, value: string): void {
  if (block === 'limits') container.limits[key] = value;
  else if (block === 'requests') container.requests[key] = value;
  else if (block === 'state' && key === 'Reason') container.reason = value;
  else if (block === 'state' && key === 'Exit Code') container.exitCode = Number(value);
  else if (block === 'last' && key === 'Reason') container.lastReason = value;
  else if (block === 'last' && key === 'Exit Code') container.lastExitCode = Number(value);
}

/** The events table under `Events:` (lines up to the next pod or the end). */
function eventsOf(lines: string[], podName: string): EventFacts[] {
  const body = lines.map((l) => l.replace(/^ {2}/, '')).filter((l) => !/^-+(?:\s+-+)*\s*$/.test(l.trim()));
  // The describer's header is in title case (`Type  Reason  Age  From  Message`).
  const [header = '', ...rows] = body;
  const table = parseTables([header.toUpperCase(), ...rows].join('\n'))[0];
  return (table?.rows ?? []).map((row) => ({
    object: `pod/${podName}`,
    ...(row.TYPE ? { type: row.TYPE } : {}),
    reason: row.REASON ?? '',
    message: row.MESSAGE ?? '',
  }));
}

/** Every pod `kubectl describe pod(s)` printed. */
export function parseDescribePods(text: string): DescribedPod[] {
  const pods: DescribedPod[] = [];
  let pod: DescribedPod | undefined;
  let section = '';
  let container: ContainerFacts | undefined;
  let block: Block = 'other';
  let eventLines: string[] = [];
  const close = () => {
    if (pod && eventLines.length > 0) pod.events = eventsOf(eventLines, pod.name);
    eventLines = [];
  };
  for (const line of text.split('\n')) {
    if (section === 'Events' && /^ {2}\S/.test(line)) {
      eventLines.push(line);
      continue;
    }
    const field = fieldOf(line);
    if (!field) continue;
    const { indent, key, value } = field;
    if (indent === 0) {
      if (key === 'Name') {
        close();
        pod = { name: value, containers: [], events: [] };
        pods.push(pod);
      } else if (pod && key === 'Namespace') pod.namespace = value;
      else if (pod && key === 'Status') pod.phase = value;
      section = key;
      container = undefined;
      continue;
    }
    if (!pod || (section !== 'Containers' && section !== 'Init Containers')) continue;
    if (indent === 2 && value === '') {
      container = { name: key, limits: {}, requests: {} };
      pod.containers.push(container);
      block = 'other';
    } else if (container && indent === 4) block = containerField(container, key, value);
    else if (container && indent === 6) detailField(container, block, key, value);
  }
  close();
  return pods;
}
