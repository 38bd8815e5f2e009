import type { KubectlCommand } from '../../kubectl/parse.js';
import {
  arr,
  field,
  findObject,
  labelsOf,
  listObjects,
  rec,
  str,
  type FrozenCluster,
  type FrozenObject,
} from './cluster.js';
import { effectiveNamespace, notFound } from './get.js';
import { fail, ok, type ShimAnswer } from './output.js';
import { matchesLabels, parseLabelSelector } from './selectors.js';
import { RESOURCE_TYPES, type ResourceType } from '../../kubectl/resources.js';

// `kubectl logs` from recorded container logs, with kubectl's container defaulting, its
// `--previous` and waiting-container errors, `--tail`, `--limit-bytes`, `-l` (10 lines per pod by
// default) and `deploy/x`-style owners resolved to one of their pods.

const POD_TYPE = RESOURCE_TYPES.find((r) => r.name === 'pods') as ResourceType;
/** What the kubelet says about a container that has not started, by waiting reason. */
const WAITING_MESSAGES: Record<string, string> = {
  ImagePullBackOff: 'trying and failing to pull image',
  ErrImagePull: "image can't be pulled",
};

function containerNames(pod: FrozenObject, key: 'containers' | 'initContainers'): string[] {
  return arr(field(pod.object, 'spec', key)).map((c) => str(field(c, 'name')));
}

function tail(text: string, lines: number | undefined): string {
  if (lines === undefined || lines < 0) return text;
  if (lines === 0) return '';
  const all = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
  return `${all.slice(-lines).join('\n')}\n`;
}

/** The pods a logs call reads, and kubectl's note when an owner has several. */
function podsFor(
  cmd: KubectlCommand,
  cluster: FrozenCluster,
  namespace: string,
): { pods: FrozenObject[]; note?: string } | ShimAnswer {
  const target = cmd.targets[0];
  if (!target) {
    if (cmd.selector === undefined) {
      return fail(
        "error: expected 'logs [-f] [-p] (POD | TYPE/NAME) [-c CONTAINER]'.\nPOD or TYPE/NAME is a required argument for the logs command\nSee 'kubectl logs -h' for help and examples",
        'usage-error',
      );
    }
    const labels = parseLabelSelector(cmd.selector);
    if (typeof labels === 'string') return fail(`error: ${labels}`, 'usage-error');
    const pods = listObjects(cluster, 'pods', cmd.allNamespaces ? undefined : namespace);
    return { pods: pods.filter((p) => matchesLabels(labels, labelsOf(p))) };
  }
  const type = target.type;
  const name = target.names[0] ?? '';
  if (!type) return fail(`error: the server doesn't have a resource type "${target.text}"`, 'objects');
  if (type.name === 'pods') {
    const pod = findObject(cluster, 'pods', namespace, name);
    return pod ? { pods: [pod] } : fail(notFound(POD_TYPE, name), 'objects');
  }
  const owner = findObject(cluster, type.name, namespace, name);
  if (!owner) return fail(notFound(type, name), 'objects');
  const selector = rec(field(owner.object, 'spec', 'selector', 'matchLabels'));
  const requirements = Object.entries(selector).map(([key, value]) => ({
    key,
    op: 'eq' as const,
    values: [String(value)],
  }));
  const pods = listObjects(cluster, 'pods', namespace).filter((p) =>
    matchesLabels(requirements, labelsOf(p)),
  );
  const first = pods[0];
  if (!first) return fail(`error: timed out waiting for the condition`, 'objects');
  return pods.length > 1
    ? { pods: [first], note: `Found ${pods.length} pods, using pod/${first.name}` }
    : { pods: [first] };
}

function oneContainer(
  cmd: KubectlCommand,
  cluster: FrozenCluster,
  pod: FrozenObject,
  container: string,
  tailLines: number | undefined,
): { text: string } | { error: string; answeredFrom: 'objects' | 'not-recorded' } {
  const namespace = pod.namespace ?? '';
  const previous = cmd.flags.previous === 'true';
  const log = cluster.logs.find(
    (l) =>
      l.namespace === namespace && l.pod === pod.name && l.container === container && l.previous === previous,
  );
  const statuses = [
    ...arr(field(pod.object, 'status', 'containerStatuses')),
    ...arr(field(pod.object, 'status', 'initContainerStatuses')),
  ];
  const status = statuses.find((s) => field(s, 'name') === container);
  if (!log) {
    if (previous) {
      return {
        error: `Error from server (BadRequest): previous terminated container "${container}" in pod "${pod.name}" not found`,
        answeredFrom: 'objects',
      };
    }
    const waiting = str(field(status, 'state', 'waiting', 'reason'));
    const started =
      field(status, 'state', 'running') !== undefined || field(status, 'state', 'terminated') !== undefined;
    if (!started && field(status, 'lastState', 'terminated') === undefined) {
      const why = WAITING_MESSAGES[waiting] ?? (waiting || 'ContainerCreating');
      return {
        error: `Error from server (BadRequest): container "${container}" in pod "${pod.name}" is waiting to start: ${why}`,
        answeredFrom: 'objects',
      };
    }
    return {
      error: `error: the logs of container "${container}" in pod "${pod.name}" were not recorded in this frozen cluster (case ${cluster.caseName})`,
      answeredFrom: 'not-recorded',
    };
  }
  let text = tail(log.text, tailLines);
  const limit = cmd.flags['limit-bytes'];
  if (limit !== undefined && /^\d+$/.test(limit))
    text = Buffer.from(text).subarray(0, Number(limit)).toString('utf8');
  if (cmd.flags.prefix === 'true') {
    text = text
      .split('\n')
      .map((line, i, all) =>
        i === all.length - 1 && line === '' ? line : `[pod/${pod.name}/${container}] ${line}`,
      )
      .join('\n');
  }
  return { text };
}

/** `kubectl logs`. */
export function logs(cmd: KubectlCommand, cluster: FrozenCluster): ShimAnswer {
  const namespace = effectiveNamespace(cmd, cluster) ?? cluster.namespace;
  const found = podsFor(cmd, cluster, namespace);
  if ('answeredFrom' in found) return found;
  const tailFlag = cmd.flags.tail;
  const bySelector = cmd.targets.length === 0;
  const tailLines =
    tailFlag !== undefined && /^-?\d+$/.test(tailFlag) ? Number(tailFlag) : bySelector ? 10 : undefined;
  const notes: string[] = found.note ? [found.note] : [];
  let stdout = '';
  const errors: string[] = [];
  let notRecorded = false;
  for (const pod of found.pods) {
    const main = containerNames(pod, 'containers');
    const init = containerNames(pod, 'initContainers');
    let containers: string[];
    const asked = cmd.flags.container;
    if (cmd.flags['all-containers'] === 'true') containers = [...init, ...main];
    else if (asked !== undefined) {
      if (![...main, ...init].includes(asked)) {
        errors.push(`error: container ${asked} is not valid for pod ${pod.name}`);
        continue;
      }
      containers = [asked];
    } else {
      const annotated = str(
        field(pod.object, 'metadata', 'annotations', 'kubectl.kubernetes.io/default-container'),
      );
      const chosen = annotated && main.includes(annotated) ? annotated : (main[0] ?? '');
      if (main.length + init.length > 1 && !annotated) {
        const all = [...main, ...init.map((c) => `${c} (init)`)].join(', ');
        notes.push(`Defaulted container "${chosen}" out of: ${all}`);
      }
      containers = [chosen];
    }
    for (const container of containers) {
      const result = oneContainer(cmd, cluster, pod, container, tailLines);
      if ('text' in result) stdout += result.text;
      else {
        errors.push(result.error);
        if (result.answeredFrom === 'not-recorded') notRecorded = true;
      }
    }
  }
  const stderr = [...notes, ...errors].map((l) => `${l}\n`).join('');
  if (errors.length > 0)
    return { stdout, stderr, exitCode: 1, answeredFrom: notRecorded ? 'not-recorded' : 'logs' };
  return ok(stdout, 'logs', stderr);
}
