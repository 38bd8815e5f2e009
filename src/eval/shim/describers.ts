import { arr, field, listObjects, num, rec, str, type FrozenCluster, type FrozenObject } from './cluster.js';
import { eventTimes } from './printers.js';
import { formatBytes, formatCpu, parseQuantity } from './quantity.js';
import { age } from './table.js';
import { PrefixWriter } from './tabwriter.js';

// kubectl describe for pods, deployments, replicasets, statefulsets, nodes, PVCs, services, ConfigMaps
// and Secrets, generated from the recorded objects and events with kubectl's own format strings
// (staging/src/k8s.io/kubectl/pkg/describe/describe.go, v1.31) and tab alignment, so a case needs no
// hand-written describe text.

const MAX_ANNOTATION_LEN = 140;

/** Go's time.RFC1123Z in UTC: `Sat, 14 Mar 2026 01:41:02 +0000`. */
export function rfc1123z(ts: unknown): string {
  const at = typeof ts === 'string' ? new Date(ts) : undefined;
  if (!at || Number.isNaN(at.getTime())) return '<unset>';
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const two = (n: number) => String(n).padStart(2, '0');
  return `${days[at.getUTCDay()]}, ${two(at.getUTCDate())} ${months[at.getUTCMonth()]} ${at.getUTCFullYear()} ${two(at.getUTCHours())}:${two(at.getUTCMinutes())}:${two(at.getUTCSeconds())} +0000`;
}

const sortedEntries = (v: unknown) => Object.entries(rec(v)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

function labelsMultiline(w: PrefixWriter, title: string, labels: unknown, indent = ''): void {
  w.write(0, `${indent}${title}:\t`);
  const entries = sortedEntries(labels);
  if (entries.length === 0) return w.write(0, '<none>\n');
  entries.forEach(([k, v], i) => w.write(0, `${i === 0 ? '' : `${indent}\t`}${k}=${String(v)}\n`));
}

function annotationsMultiline(w: PrefixWriter, title: string, annotations: unknown): void {
  w.write(0, `${title}:\t`);
  const entries = sortedEntries(annotations);
  if (entries.length === 0) return w.write(0, '<none>\n');
  entries.forEach(([k, raw], i) => {
    if (i !== 0) w.write(0, '\t');
    const value = String(raw).replace(/\n$/, '');
    if (value.length + k.length + 2 > MAX_ANNOTATION_LEN || value.includes('\n')) {
      w.write(0, `${k}:\n`);
      for (const s of value.split('\n')) {
        const short = s.length > MAX_ANNOTATION_LEN - 2 ? `${s.slice(0, MAX_ANNOTATION_LEN - 2)}...` : s;
        w.write(0, `\t  ${short}\n`);
      }
    } else w.write(0, `${k}: ${value}\n`);
  });
}

function tolerationsMultiline(w: PrefixWriter, title: string, tolerations: unknown[]): void {
  w.write(0, `${title}:\t`);
  if (tolerations.length === 0) return w.write(0, '<none>\n');
  const sorted = [...tolerations].sort((a, b) => str(field(a, 'key')).localeCompare(str(field(b, 'key'))));
  sorted.forEach((t, i) => {
    let text = i === 0 ? '' : '\t';
    const key = str(field(t, 'key'));
    const value = str(field(t, 'value'));
    const effect = str(field(t, 'effect'));
    text += key;
    if (value) text += `=${value}`;
    if (effect) text += `:${effect}`;
    if (field(t, 'operator') === 'Exists' && !value) text += key || effect ? ' op=Exists' : 'op=Exists';
    const seconds = field(t, 'tolerationSeconds');
    if (typeof seconds === 'number') text += ` for ${seconds}s`;
    w.write(0, `${text}\n`);
  });
}

function controllerOf(o: unknown): string | undefined {
  const ref = arr(field(o, 'metadata', 'ownerReferences')).find((r) => field(r, 'controller') === true);
  return ref ? `${str(field(ref, 'kind'))}/${str(field(ref, 'name'))}` : undefined;
}

/** A writer holding the Name and Namespace lines every describer starts with. */
function begin(o: FrozenObject): PrefixWriter {
  const w = new PrefixWriter();
  w.write(0, `Name:\t${o.name}\n`);
  if (o.namespace !== undefined) w.write(0, `Namespace:\t${o.namespace}\n`);
  return w;
}

function metadataLines(w: PrefixWriter, object: unknown): void {
  labelsMultiline(w, 'Labels', field(object, 'metadata', 'labels'));
  annotationsMultiline(w, 'Annotations', field(object, 'metadata', 'annotations'));
}

/** Events about one object, oldest first (kubectl's SortableEvents). */
export function eventsFor(cluster: FrozenCluster, o: FrozenObject, kind: string): FrozenObject[] {
  return listObjects(cluster, 'events', o.namespace)
    .filter(
      (e) =>
        field(e.object, 'involvedObject', 'kind') === kind &&
        field(e.object, 'involvedObject', 'name') === o.name,
    )
    .sort((a, b) => Date.parse(eventTimes(a.object).last) - Date.parse(eventTimes(b.object).last));
}

function describeEvents(w: PrefixWriter, events: FrozenObject[], now: number): void {
  if (events.length === 0) return w.write(0, 'Events:\t<none>\n');
  w.flush();
  w.write(0, 'Events:\n  Type\tReason\tAge\tFrom\tMessage\n');
  w.write(1, '----\t------\t----\t----\t-------\n');
  for (const e of events) {
    const t = eventTimes(e.object);
    const first = age(t.first, now);
    const interval = t.count > 1 ? `${age(t.last, now)} (x${t.count} over ${first})` : first;
    const source = str(field(e.object, 'source', 'component')) || str(field(e.object, 'reportingComponent'));
    w.write(
      1,
      `${str(field(e.object, 'type'))}\t${str(field(e.object, 'reason'))}\t${interval}\t${source}\t${str(field(e.object, 'message')).trim()}\n`,
    );
  }
}

function probeText(p: unknown): string {
  const attrs = `delay=${num(field(p, 'initialDelaySeconds'))}s timeout=${num(field(p, 'timeoutSeconds'), 1)}s period=${num(field(p, 'periodSeconds'), 10)}s #success=${num(field(p, 'successThreshold'), 1)} #failure=${num(field(p, 'failureThreshold'), 3)}`;
  const http = field(p, 'httpGet');
  if (http) {
    const scheme = str(field(http, 'scheme'), 'HTTP').toLowerCase();
    return `http-get ${scheme}://${str(field(http, 'host'))}:${String(field(http, 'port') ?? '')}${str(field(http, 'path'))} ${attrs}`;
  }
  const exec = field(p, 'exec');
  if (exec) return `exec [${arr(field(exec, 'command')).map(String).join(' ')}] ${attrs}`;
  const tcp = field(p, 'tcpSocket');
  if (tcp) return `tcp-socket ${str(field(tcp, 'host'))}:${String(field(tcp, 'port') ?? '')} ${attrs}`;
  return `unknown ${attrs}`;
}

function stateLines(w: PrefixWriter, name: string, state: unknown): void {
  const running = field(state, 'running');
  const waiting = field(state, 'waiting');
  const terminated = field(state, 'terminated');
  if (running) {
    w.write(2, `${name}:\tRunning\n`);
    w.write(3, `Started:\t${rfc1123z(field(running, 'startedAt'))}\n`);
  } else if (waiting) {
    w.write(2, `${name}:\tWaiting\n`);
    if (str(field(waiting, 'reason'))) w.write(3, `Reason:\t${str(field(waiting, 'reason'))}\n`);
  } else if (terminated) {
    w.write(2, `${name}:\tTerminated\n`);
    if (str(field(terminated, 'reason'))) w.write(3, `Reason:\t${str(field(terminated, 'reason'))}\n`);
    if (str(field(terminated, 'message'))) w.write(3, `Message:\t${str(field(terminated, 'message'))}\n`);
    w.write(3, `Exit Code:\t${num(field(terminated, 'exitCode'))}\n`);
    if (num(field(terminated, 'signal')) > 0) w.write(3, `Signal:\t${num(field(terminated, 'signal'))}\n`);
    w.write(3, `Started:\t${rfc1123z(field(terminated, 'startedAt'))}\n`);
    w.write(3, `Finished:\t${rfc1123z(field(terminated, 'finishedAt'))}\n`);
  } else {
    w.write(2, `${name}:\tWaiting\n`);
  }
}

function describeContainers(
  w: PrefixWriter,
  label: string,
  containers: unknown[],
  statuses: unknown[] | undefined,
  space: string,
): void {
  w.write(0, `${space}${label}:\n`);
  for (const c of containers) {
    const name = str(field(c, 'name'));
    const status = statuses?.find((s) => field(s, 'name') === name);
    w.write(1, `${space ? ' ' : ''}${name}:\n`);
    if (status) w.write(2, `Container ID:\t${str(field(status, 'containerID'))}\n`);
    w.write(2, `Image:\t${str(field(c, 'image'))}\n`);
    if (status) w.write(2, `Image ID:\t${str(field(status, 'imageID'))}\n`);
    const ports = arr(field(c, 'ports'));
    const portText = ports
      .map((p) => `${num(field(p, 'containerPort'))}/${str(field(p, 'protocol'), 'TCP')}`)
      .join(', ');
    const hostText = ports
      .map((p) => `${num(field(p, 'hostPort'))}/${str(field(p, 'protocol'), 'TCP')}`)
      .join(', ');
    w.write(2, portText.includes(',') ? `Ports:\t${portText}\n` : `Port:\t${portText || '<none>'}\n`);
    w.write(
      2,
      hostText.includes(',') ? `Host Ports:\t${hostText}\n` : `Host Port:\t${hostText || '<none>'}\n`,
    );
    for (const [key, title] of [
      ['command', 'Command'],
      ['args', 'Args'],
    ] as const) {
      const values = arr(field(c, key));
      if (values.length === 0) continue;
      w.write(2, `${title}:\n`);
      for (const v of values) for (const line of String(v).split('\n')) w.write(3, `${line}\n`);
    }
    if (status) {
      stateLines(w, 'State', field(status, 'state'));
      if (field(status, 'lastState', 'terminated')) stateLines(w, 'Last State', field(status, 'lastState'));
      w.write(2, `Ready:\t${field(status, 'ready') === true ? 'True' : 'False'}\n`);
      w.write(2, `Restart Count:\t${num(field(status, 'restartCount'))}\n`);
    }
    for (const [key, title] of [
      ['limits', 'Limits'],
      ['requests', 'Requests'],
    ] as const) {
      const entries = sortedEntries(field(c, 'resources', key));
      if (entries.length === 0) continue;
      w.write(2, `${title}:\n`);
      for (const [k, v] of entries) w.write(3, `${k}:\t${String(v)}\n`);
    }
    for (const [key, title] of [
      ['livenessProbe', 'Liveness'],
      ['readinessProbe', 'Readiness'],
      ['startupProbe', 'Startup'],
    ] as const) {
      const probe = field(c, key);
      if (probe) w.write(2, `${title}:\t${probeText(probe)}\n`);
    }
    const envFrom = arr(field(c, 'envFrom'));
    if (envFrom.length > 0) {
      w.write(2, 'Environment Variables from:\n');
      for (const e of envFrom) {
        const ref = field(e, 'configMapRef') ?? field(e, 'secretRef');
        const from = field(e, 'configMapRef') ? 'ConfigMap' : 'Secret';
        const prefix = str(field(e, 'prefix'));
        const optional = field(ref, 'optional') === true;
        w.write(
          3,
          `${str(field(ref, 'name'))}\t${from}${prefix ? ` with prefix '${prefix}'` : ''}\tOptional: ${optional}\n`,
        );
      }
    }
    const env = arr(field(c, 'env'));
    w.write(2, env.length === 0 ? 'Environment:\t<none>\n' : 'Environment:\n');
    for (const e of env) {
      const name = str(field(e, 'name'));
      const secret = field(e, 'valueFrom', 'secretKeyRef');
      const cm = field(e, 'valueFrom', 'configMapKeyRef');
      const fieldRef = field(e, 'valueFrom', 'fieldRef');
      if (secret) {
        w.write(
          3,
          `${name}:\t<set to the key '${str(field(secret, 'key'))}' in secret '${str(field(secret, 'name'))}'>\tOptional: ${field(secret, 'optional') === true}\n`,
        );
      } else if (cm) {
        w.write(
          3,
          `${name}:\t<set to the key '${str(field(cm, 'key'))}' of config map '${str(field(cm, 'name'))}'>\tOptional: ${field(cm, 'optional') === true}\n`,
        );
      } else if (fieldRef) {
        w.write(
          3,
          `${name}:\t (${str(field(fieldRef, 'apiVersion'), 'v1')}:${str(field(fieldRef, 'fieldPath'))})\n`,
        );
      } else {
        str(field(e, 'value'))
          .split('\n')
          .forEach((line, i) => w.write(3, i === 0 ? `${name}:\t${line}\n` : `\t${line}\n`));
      }
    }
    const mounts = [...arr(field(c, 'volumeMounts'))].sort((a, b) =>
      str(field(a, 'mountPath')).localeCompare(str(field(b, 'mountPath'))),
    );
    w.write(2, mounts.length === 0 ? 'Mounts:\t<none>\n' : 'Mounts:\n');
    for (const m of mounts) {
      const flags = [field(m, 'readOnly') === true ? 'ro' : 'rw'];
      if (str(field(m, 'subPath'))) flags.push(`path="${str(field(m, 'subPath'))}"`);
      w.write(3, `${str(field(m, 'mountPath'))} from ${str(field(m, 'name'))} (${flags.join(',')})\n`);
    }
  }
}

function describeVolumes(w: PrefixWriter, volumes: unknown[], space: string): void {
  if (volumes.length === 0) return w.write(0, `${space}Volumes:\t<none>\n`);
  w.write(0, `${space}Volumes:\n`);
  for (const v of volumes) {
    w.write(1, `${space ? ' ' : ''}${str(field(v, 'name'))}:\n`);
    const projected = field(v, 'projected');
    const optional = (o: unknown) => (o === undefined ? '<nil>' : String(o));
    if (field(v, 'configMap')) {
      w.write(
        2,
        `Type:\tConfigMap (a volume populated by a ConfigMap)\n    Name:\t${str(field(v, 'configMap', 'name'))}\n    Optional:\t${field(v, 'configMap', 'optional') === true}\n`,
      );
    } else if (field(v, 'secret')) {
      w.write(
        2,
        `Type:\tSecret (a volume populated by a Secret)\n    SecretName:\t${str(field(v, 'secret', 'secretName'))}\n    Optional:\t${field(v, 'secret', 'optional') === true}\n`,
      );
    } else if (field(v, 'persistentVolumeClaim')) {
      w.write(
        2,
        `Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:\t${str(field(v, 'persistentVolumeClaim', 'claimName'))}\n    ReadOnly:\t${field(v, 'persistentVolumeClaim', 'readOnly') === true}\n`,
      );
    } else if (field(v, 'emptyDir') !== undefined) {
      w.write(
        2,
        `Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n    Medium:\t${str(field(v, 'emptyDir', 'medium'))}\n    SizeLimit:\t${str(field(v, 'emptyDir', 'sizeLimit')) || '<unset>'}\n`,
      );
    } else if (projected) {
      w.write(2, 'Type:\tProjected (a volume that contains injected data from multiple sources)\n');
      for (const s of arr(field(projected, 'sources'))) {
        if (field(s, 'serviceAccountToken'))
          w.write(
            2,
            `TokenExpirationSeconds:\t${num(field(s, 'serviceAccountToken', 'expirationSeconds'), 3607)}\n`,
          );
        else if (field(s, 'configMap'))
          w.write(
            2,
            `ConfigMapName:\t${str(field(s, 'configMap', 'name'))}\n    ConfigMapOptional:\t${optional(field(s, 'configMap', 'optional'))}\n`,
          );
        else if (field(s, 'downwardAPI')) w.write(2, 'DownwardAPI:\ttrue\n');
        else if (field(s, 'secret'))
          w.write(
            2,
            `SecretName:\t${str(field(s, 'secret', 'name'))}\n    SecretOptionalName:\t${optional(field(s, 'secret', 'optional'))}\n`,
          );
      }
    } else if (field(v, 'hostPath')) {
      w.write(
        2,
        `Type:\tHostPath (bare host directory volume)\n    Path:\t${str(field(v, 'hostPath', 'path'))}\n    HostPathType:\t${str(field(v, 'hostPath', 'type'))}\n`,
      );
    } else {
      w.write(2, `<unknown>\n`);
    }
  }
}

function describePod(cluster: FrozenCluster, o: FrozenObject, now: number): string {
  const p = o.object;
  const w = begin(o);
  if (typeof field(p, 'spec', 'priority') === 'number')
    w.write(0, `Priority:\t${num(field(p, 'spec', 'priority'))}\n`);
  if (str(field(p, 'spec', 'priorityClassName')))
    w.write(0, `Priority Class Name:\t${str(field(p, 'spec', 'priorityClassName'))}\n`);
  if (str(field(p, 'spec', 'serviceAccountName')))
    w.write(0, `Service Account:\t${str(field(p, 'spec', 'serviceAccountName'))}\n`);
  const node = str(field(p, 'spec', 'nodeName'));
  w.write(0, node ? `Node:\t${node}/${str(field(p, 'status', 'hostIP'))}\n` : 'Node:\t<none>\n');
  if (field(p, 'status', 'startTime'))
    w.write(0, `Start Time:\t${rfc1123z(field(p, 'status', 'startTime'))}\n`);
  metadataLines(w, p);
  w.write(0, `Status:\t${str(field(p, 'status', 'phase'))}\n`);
  if (str(field(p, 'status', 'reason'))) w.write(0, `Reason:\t${str(field(p, 'status', 'reason'))}\n`);
  if (str(field(p, 'status', 'message'))) w.write(0, `Message:\t${str(field(p, 'status', 'message'))}\n`);
  w.write(0, `IP:\t${str(field(p, 'status', 'podIP'))}\n`);
  const ips = arr(field(p, 'status', 'podIPs'));
  if (ips.length === 0) w.write(0, 'IPs:\t<none>\n');
  else {
    w.write(0, 'IPs:\n');
    for (const ip of ips) w.write(1, `IP:\t${str(field(ip, 'ip'))}\n`);
  }
  const controller = controllerOf(p);
  if (controller) w.write(0, `Controlled By:\t${controller}\n`);
  if (str(field(p, 'status', 'nominatedNodeName')))
    w.write(0, `NominatedNodeName:\t${str(field(p, 'status', 'nominatedNodeName'))}\n`);
  const inits = arr(field(p, 'spec', 'initContainers'));
  if (inits.length > 0)
    describeContainers(w, 'Init Containers', inits, arr(field(p, 'status', 'initContainerStatuses')), '');
  describeContainers(
    w,
    'Containers',
    arr(field(p, 'spec', 'containers')),
    arr(field(p, 'status', 'containerStatuses')),
    '',
  );
  const conditions = arr(field(p, 'status', 'conditions'));
  if (conditions.length > 0) {
    w.write(0, 'Conditions:\n  Type\tStatus\n');
    for (const c of conditions) w.write(1, `${str(field(c, 'type'))} \t${str(field(c, 'status'))} \n`);
  }
  describeVolumes(w, arr(field(p, 'spec', 'volumes')), '');
  w.write(0, `QoS Class:\t${str(field(p, 'status', 'qosClass'))}\n`);
  labelsMultiline(w, 'Node-Selectors', field(p, 'spec', 'nodeSelector'));
  tolerationsMultiline(w, 'Tolerations', arr(field(p, 'spec', 'tolerations')));
  describeEvents(w, eventsFor(cluster, o, 'Pod'), now);
  return w.toString();
}

function podTemplate(w: PrefixWriter, template: unknown): void {
  w.write(0, 'Pod Template:\n');
  labelsMultiline(w, '  Labels', field(template, 'metadata', 'labels'));
  if (Object.keys(rec(field(template, 'metadata', 'annotations'))).length > 0) {
    annotationsMultiline(w, '  Annotations', field(template, 'metadata', 'annotations'));
  }
  const sa = str(field(template, 'spec', 'serviceAccountName'));
  if (sa) w.write(1, `Service Account:\t${sa}\n`);
  const inits = arr(field(template, 'spec', 'initContainers'));
  if (inits.length > 0) describeContainers(w, 'Init Containers', inits, undefined, '  ');
  describeContainers(w, 'Containers', arr(field(template, 'spec', 'containers')), undefined, '  ');
  describeVolumes(w, arr(field(template, 'spec', 'volumes')), '  ');
  const pc = str(field(template, 'spec', 'priorityClassName'));
  if (pc) w.write(1, `Priority Class Name:\t${pc}\n`);
  labelsMultiline(w, '  Node-Selectors', field(template, 'spec', 'nodeSelector'));
  tolerationsMultiline(w, '  Tolerations', arr(field(template, 'spec', 'tolerations')));
}

const selectorText = (selector: unknown) =>
  sortedEntries(field(selector, 'matchLabels'))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',');

function conditionsTable(w: PrefixWriter, conditions: unknown[]): void {
  if (conditions.length === 0) return;
  w.write(0, 'Conditions:\n  Type\tStatus\tReason\n');
  w.write(1, '----\t------\t------\n');
  for (const c of conditions)
    w.write(1, `${str(field(c, 'type'))} \t${str(field(c, 'status'))}\t${str(field(c, 'reason'))}\n`);
}

function ownedBy(cluster: FrozenCluster, kind: string, owner: FrozenObject, type: string): FrozenObject[] {
  return listObjects(cluster, type, owner.namespace).filter((x) =>
    arr(field(x.object, 'metadata', 'ownerReferences')).some(
      (r) => field(r, 'kind') === kind && field(r, 'name') === owner.name,
    ),
  );
}

function describeDeployment(cluster: FrozenCluster, o: FrozenObject, now: number): string {
  const d = o.object;
  const w = begin(o);
  w.write(0, `CreationTimestamp:\t${rfc1123z(field(d, 'metadata', 'creationTimestamp'))}\n`);
  metadataLines(w, d);
  w.write(0, `Selector:\t${selectorText(field(d, 'spec', 'selector'))}\n`);
  const s = (k: string) => num(field(d, 'status', k));
  w.write(
    0,
    `Replicas:\t${num(field(d, 'spec', 'replicas'), 1)} desired | ${s('updatedReplicas')} updated | ${s('replicas')} total | ${s('availableReplicas')} available | ${s('unavailableReplicas')} unavailable\n`,
  );
  w.write(0, `StrategyType:\t${str(field(d, 'spec', 'strategy', 'type'), 'RollingUpdate')}\n`);
  w.write(0, `MinReadySeconds:\t${num(field(d, 'spec', 'minReadySeconds'))}\n`);
  const ru = field(d, 'spec', 'strategy', 'rollingUpdate');
  if (ru)
    w.write(
      0,
      `RollingUpdateStrategy:\t${String(field(ru, 'maxUnavailable') ?? '25%')} max unavailable, ${String(field(ru, 'maxSurge') ?? '25%')} max surge\n`,
    );
  podTemplate(w, field(d, 'spec', 'template'));
  conditionsTable(w, arr(field(d, 'status', 'conditions')));
  const sets = ownedBy(cluster, 'Deployment', o, 'replicasets');
  const hash = (rs: FrozenObject) => str(field(rs.object, 'metadata', 'labels', 'pod-template-hash'));
  const revision = (rs: FrozenObject) =>
    Number(str(field(rs.object, 'metadata', 'annotations', 'deployment.kubernetes.io/revision'), '0'));
  const newest = [...sets].sort((a, b) => revision(b) - revision(a))[0];
  const newRs = newest && hash(newest) !== '' ? newest : undefined;
  const fmt = (list: FrozenObject[]) =>
    list.length === 0
      ? '<none>'
      : list
          .map(
            (rs) =>
              `${rs.name} (${num(field(rs.object, 'status', 'replicas'))}/${num(field(rs.object, 'spec', 'replicas'), 1)} replicas created)`,
          )
          .join(', ');
  const old = sets.filter(
    (rs) =>
      rs !== newRs &&
      (num(field(rs.object, 'spec', 'replicas')) > 0 || num(field(rs.object, 'status', 'replicas')) > 0),
  );
  w.write(0, `OldReplicaSets:\t${fmt(old)}\n`);
  w.write(0, `NewReplicaSet:\t${fmt(newRs ? [newRs] : [])}\n`);
  describeEvents(w, eventsFor(cluster, o, 'Deployment'), now);
  return w.toString();
}

function describeReplicaSet(cluster: FrozenCluster, o: FrozenObject, now: number): string {
  const rs = o.object;
  const w = begin(o);
  w.write(0, `Selector:\t${selectorText(field(rs, 'spec', 'selector'))}\n`);
  metadataLines(w, rs);
  const controller = controllerOf(rs);
  if (controller) w.write(0, `Controlled By:\t${controller}\n`);
  w.write(
    0,
    `Replicas:\t${num(field(rs, 'status', 'replicas'))} current / ${num(field(rs, 'spec', 'replicas'), 1)} desired\n`,
  );
  const pods = ownedBy(cluster, 'ReplicaSet', o, 'pods');
  const phase = (p: string) => pods.filter((x) => field(x.object, 'status', 'phase') === p).length;
  w.write(
    0,
    `Pods Status:\t${phase('Running')} Running / ${phase('Pending')} Waiting / ${phase('Succeeded')} Succeeded / ${phase('Failed')} Failed\n`,
  );
  podTemplate(w, field(rs, 'spec', 'template'));
  conditionsTable(w, arr(field(rs, 'status', 'conditions')));
  describeEvents(w, eventsFor(cluster, o, 'ReplicaSet'), now);
  return w.toString();
}

function describeNode(cluster: FrozenCluster, o: FrozenObject, now: number): string {
  const n = o.object;
  const w = begin(o);
  const roles = Object.keys(rec(field(n, 'metadata', 'labels')))
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .sort();
  w.write(0, `Roles:\t${roles.length ? roles.join(',') : '<none>'}\n`);
  metadataLines(w, n);
  w.write(0, `CreationTimestamp:\t${rfc1123z(field(n, 'metadata', 'creationTimestamp'))}\n`);
  const taints = arr(field(n, 'spec', 'taints'));
  w.write(0, 'Taints:\t');
  if (taints.length === 0) w.write(0, '<none>\n');
  taints.forEach((t, i) => {
    const value = str(field(t, 'value'));
    w.write(
      0,
      `${i === 0 ? '' : '\t'}${str(field(t, 'key'))}${value ? `=${value}` : ''}:${str(field(t, 'effect'))}\n`,
    );
  });
  w.write(0, `Unschedulable:\t${field(n, 'spec', 'unschedulable') === true}\n`);
  w.write(0, 'Lease:\n');
  w.write(1, `HolderIdentity:\t${o.name}\n`);
  w.write(1, 'AcquireTime:\t<unset>\n');
  const heartbeat = arr(field(n, 'status', 'conditions')).find((c) => field(c, 'type') === 'Ready');
  w.write(1, `RenewTime:\t${rfc1123z(field(heartbeat, 'lastHeartbeatTime'))}\n`);
  w.write(0, 'Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n');
  w.write(1, '----\t------\t-----------------\t------------------\t------\t-------\n');
  for (const c of arr(field(n, 'status', 'conditions'))) {
    w.write(
      1,
      `${str(field(c, 'type'))} \t${str(field(c, 'status'))} \t${rfc1123z(field(c, 'lastHeartbeatTime'))} \t${rfc1123z(field(c, 'lastTransitionTime'))} \t${str(field(c, 'reason'))} \t${str(field(c, 'message'))}\n`,
    );
  }
  w.write(0, 'Addresses:\n');
  for (const a of arr(field(n, 'status', 'addresses')))
    w.write(1, `${str(field(a, 'type'))}:\t${str(field(a, 'address'))}\n`);
  for (const [key, title] of [
    ['capacity', 'Capacity'],
    ['allocatable', 'Allocatable'],
  ] as const) {
    w.write(0, `${title}:\n`);
    for (const [k, v] of sortedEntries(field(n, 'status', key))) w.write(1, `${k}:\t${String(v)}\n`);
  }
  const info = field(n, 'status', 'nodeInfo');
  w.write(0, 'System Info:\n');
  for (const [title, key] of [
    ['Machine ID', 'machineID'],
    ['System UUID', 'systemUUID'],
    ['Boot ID', 'bootID'],
    ['Kernel Version', 'kernelVersion'],
    ['OS Image', 'osImage'],
    ['Operating System', 'operatingSystem'],
    ['Architecture', 'architecture'],
    ['Container Runtime Version', 'containerRuntimeVersion'],
    ['Kubelet Version', 'kubeletVersion'],
  ] as const) {
    w.write(1, `${title}:\t${str(field(info, key))}\n`);
  }
  const cidr = str(field(n, 'spec', 'podCIDR'));
  if (cidr) {
    w.write(0, `PodCIDR:\t${cidr}\n`);
    w.write(
      0,
      `PodCIDRs:\t${
        arr(field(n, 'spec', 'podCIDRs'))
          .map(String)
          .join(',') || cidr
      }\n`,
    );
  }
  if (str(field(n, 'spec', 'providerID')))
    w.write(0, `ProviderID:\t${str(field(n, 'spec', 'providerID'))}\n`);
  const pods = listObjects(cluster, 'pods', undefined).filter(
    (p) =>
      field(p.object, 'spec', 'nodeName') === o.name &&
      !['Succeeded', 'Failed'].includes(str(field(p.object, 'status', 'phase'))),
  );
  const allocCpu = parseQuantity(field(n, 'status', 'allocatable', 'cpu'));
  const allocMem = parseQuantity(field(n, 'status', 'allocatable', 'memory'));
  const pct = (v: number, total: number) => (total > 0 ? Math.floor((v / total) * 100) : 0);
  const sum = (p: FrozenObject, kind: 'requests' | 'limits', res: 'cpu' | 'memory') =>
    arr(field(p.object, 'spec', 'containers')).reduce<number>(
      (acc, c) => acc + (parseQuantity(field(c, 'resources', kind, res)) || 0),
      0,
    );
  w.write(0, `Non-terminated Pods:\t(${pods.length} in total)\n`);
  w.write(1, 'Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n');
  w.write(1, '---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n');
  const totals = { cr: 0, cl: 0, mr: 0, ml: 0 };
  for (const p of pods) {
    const [cr, cl, mr, ml] = [
      sum(p, 'requests', 'cpu'),
      sum(p, 'limits', 'cpu'),
      sum(p, 'requests', 'memory'),
      sum(p, 'limits', 'memory'),
    ];
    totals.cr += cr;
    totals.cl += cl;
    totals.mr += mr;
    totals.ml += ml;
    w.write(
      1,
      `${p.namespace ?? ''}\t${p.name}\t\t${formatCpu(cr)} (${pct(cr, allocCpu)}%)\t${formatCpu(cl)} (${pct(cl, allocCpu)}%)\t${formatBytes(mr)} (${pct(mr, allocMem)}%)\t${formatBytes(ml)} (${pct(ml, allocMem)}%)\t${age(field(p.object, 'metadata', 'creationTimestamp'), now)}\n`,
    );
  }
  w.write(0, 'Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n');
  w.write(1, 'Resource\tRequests\tLimits\n');
  w.write(1, '--------\t--------\t------\n');
  w.write(
    1,
    `cpu\t${formatCpu(totals.cr)} (${pct(totals.cr, allocCpu)}%)\t${formatCpu(totals.cl)} (${pct(totals.cl, allocCpu)}%)\n`,
  );
  w.write(
    1,
    `memory\t${formatBytes(totals.mr)} (${pct(totals.mr, allocMem)}%)\t${formatBytes(totals.ml)} (${pct(totals.ml, allocMem)}%)\n`,
  );
  w.write(1, 'ephemeral-storage\t0 (0%)\t0 (0%)\n');
  for (const k of Object.keys(rec(field(n, 'status', 'capacity')))
    .filter((k) => k.startsWith('hugepages-'))
    .sort()) {
    w.write(1, `${k}\t0 (0%)\t0 (0%)\n`);
  }
  describeEvents(w, eventsFor(cluster, o, 'Node'), now);
  return w.toString();
}

function describePvc(cluster: FrozenCluster, o: FrozenObject, now: number): string {
  const c = o.object;
  const w = begin(o);
  const bound = str(field(c, 'spec', 'volumeName')) !== '';
  w.write(0, `StorageClass:\t${str(field(c, 'spec', 'storageClassName'))}\n`);
  w.write(0, `Status:\t${str(field(c, 'status', 'phase'))}\n`);
  w.write(0, `Volume:\t${str(field(c, 'spec', 'volumeName'))}\n`);
  metadataLines(w, c);
  w.write(
    0,
    `Finalizers:\t[${arr(field(c, 'metadata', 'finalizers'))
      .map(String)
      .join(' ')}]\n`,
  );
  w.write(0, `Capacity:\t${bound ? str(field(c, 'status', 'capacity', 'storage')) : ''}\n`);
  const modes: Record<string, string> = {
    ReadWriteOnce: 'RWO',
    ReadOnlyMany: 'ROX',
    ReadWriteMany: 'RWX',
    ReadWriteOncePod: 'RWOP',
  };
  w.write(
    0,
    `Access Modes:\t${
      bound
        ? arr(field(c, 'status', 'accessModes'))
            .map((m) => modes[String(m)] ?? String(m))
            .join(',')
        : ''
    }\n`,
  );
  if (str(field(c, 'spec', 'volumeMode')))
    w.write(0, `VolumeMode:\t${str(field(c, 'spec', 'volumeMode'))}\n`);
  const users = listObjects(cluster, 'pods', o.namespace).filter((p) =>
    arr(field(p.object, 'spec', 'volumes')).some(
      (v) => field(v, 'persistentVolumeClaim', 'claimName') === o.name,
    ),
  );
  w.write(0, 'Used By:\t');
  if (users.length === 0) w.write(0, '<none>\n');
  users.forEach((p, i) => w.write(0, `${i === 0 ? '' : '\t'}${p.name}\n`));
  describeEvents(w, eventsFor(cluster, o, 'PersistentVolumeClaim'), now);
  return w.toString();
}

function describeService(cluster: FrozenCluster, o: FrozenObject, now: number): string {
  const s = o.object;
  const w = begin(o);
  metadataLines(w, s);
  w.write(
    0,
    `Selector:\t${sortedEntries(field(s, 'spec', 'selector'))
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(',')}\n`,
  );
  w.write(0, `Type:\t${str(field(s, 'spec', 'type'), 'ClusterIP')}\n`);
  if (str(field(s, 'spec', 'ipFamilyPolicy')))
    w.write(0, `IP Family Policy:\t${str(field(s, 'spec', 'ipFamilyPolicy'))}\n`);
  w.write(
    0,
    `IP Families:\t${
      arr(field(s, 'spec', 'ipFamilies'))
        .map(String)
        .join(',') || '<none>'
    }\n`,
  );
  w.write(0, `IP:\t${str(field(s, 'spec', 'clusterIP'))}\n`);
  w.write(
    0,
    `IPs:\t${
      arr(field(s, 'spec', 'clusterIPs'))
        .map(String)
        .join(',') || '<none>'
    }\n`,
  );
  const endpoints = listObjects(cluster, 'endpoints', o.namespace).find((e) => e.name === o.name);
  for (const port of arr(field(s, 'spec', 'ports'))) {
    const protocol = str(field(port, 'protocol'), 'TCP');
    const name = str(field(port, 'name')) || '<unset>';
    w.write(0, `Port:\t${name}\t${num(field(port, 'port'))}/${protocol}\n`);
    w.write(0, `TargetPort:\t${String(field(port, 'targetPort') ?? field(port, 'port'))}/${protocol}\n`);
    if (num(field(port, 'nodePort')))
      w.write(0, `NodePort:\t${name}\t${num(field(port, 'nodePort'))}/${protocol}\n`);
    const list: string[] = [];
    for (const subset of arr(field(endpoints?.object, 'subsets'))) {
      const match = arr(field(subset, 'ports')).find(
        (p) => str(field(p, 'name')) === str(field(port, 'name')),
      );
      if (!match) continue;
      for (const a of arr(field(subset, 'addresses')))
        list.push(`${str(field(a, 'ip'))}:${num(field(match, 'port'))}`);
    }
    const shown =
      list.length > 3 ? `${list.slice(0, 3).join(',')} + ${list.length - 3} more...` : list.join(',');
    w.write(0, `Endpoints:\t${shown || '<none>'}\n`);
  }
  w.write(0, `Session Affinity:\t${str(field(s, 'spec', 'sessionAffinity'), 'None')}\n`);
  if (str(field(s, 'spec', 'internalTrafficPolicy')))
    w.write(0, `Internal Traffic Policy:\t${str(field(s, 'spec', 'internalTrafficPolicy'))}\n`);
  describeEvents(w, eventsFor(cluster, o, 'Service'), now);
  return w.toString();
}

function describeStatefulSet(cluster: FrozenCluster, o: FrozenObject, now: number): string {
  const s = o.object;
  const w = begin(o);
  w.write(0, `CreationTimestamp:\t${rfc1123z(field(s, 'metadata', 'creationTimestamp'))}\n`);
  w.write(0, `Selector:\t${selectorText(field(s, 'spec', 'selector'))}\n`);
  metadataLines(w, s);
  w.write(
    0,
    `Replicas:\t${num(field(s, 'spec', 'replicas'), 1)} desired | ${num(field(s, 'status', 'replicas'))} total\n`,
  );
  w.write(0, `Update Strategy:\t${str(field(s, 'spec', 'updateStrategy', 'type'), 'RollingUpdate')}\n`);
  const partition = field(s, 'spec', 'updateStrategy', 'rollingUpdate', 'partition');
  if (typeof partition === 'number') w.write(1, `Partition:\t${partition}\n`);
  const pods = ownedBy(cluster, 'StatefulSet', o, 'pods');
  const phase = (p: string) => pods.filter((x) => field(x.object, 'status', 'phase') === p).length;
  w.write(
    0,
    `Pods Status:\t${phase('Running')} Running / ${phase('Pending')} Waiting / ${phase('Succeeded')} Succeeded / ${phase('Failed')} Failed\n`,
  );
  podTemplate(w, field(s, 'spec', 'template'));
  const claims = arr(field(s, 'spec', 'volumeClaimTemplates'));
  if (claims.length === 0) w.write(0, 'Volume Claims:\t<none>\n');
  else {
    w.write(0, 'Volume Claims:\n');
    for (const claim of claims) {
      w.write(1, `Name:\t${str(field(claim, 'metadata', 'name'))}\n`);
      w.write(1, `StorageClass:\t${str(field(claim, 'spec', 'storageClassName'))}\n`);
      labelsMultiline(w, 'Labels', field(claim, 'metadata', 'labels'), '  ');
      labelsMultiline(w, 'Annotations', field(claim, 'metadata', 'annotations'), '  ');
      w.write(
        1,
        `Capacity:\t${str(field(claim, 'spec', 'resources', 'requests', 'storage')) || '<default>'}\n`,
      );
      w.write(
        1,
        `Access Modes:\t[${arr(field(claim, 'spec', 'accessModes'))
          .map(String)
          .join(' ')}]\n`,
      );
    }
  }
  describeEvents(w, eventsFor(cluster, o, 'StatefulSet'), now);
  return w.toString();
}

function describeConfigMap(cluster: FrozenCluster, o: FrozenObject, now: number): string {
  const w = begin(o);
  metadataLines(w, o.object);
  w.write(0, '\nData\n====\n');
  for (const [k, v] of sortedEntries(field(o.object, 'data'))) {
    w.write(0, `${k}:\n----\n`);
    w.write(0, `${String(v)}\n`);
    w.write(0, '\n');
  }
  w.write(0, '\nBinaryData\n====\n');
  for (const [k, v] of sortedEntries(field(o.object, 'binaryData'))) {
    w.write(0, `${k}: ${Buffer.from(String(v), 'base64').length} bytes\n`);
  }
  w.write(0, '\n');
  describeEvents(w, eventsFor(cluster, o, 'ConfigMap'), now);
  return w.toString();
}

/** Secret data is described by size only, as kubectl does: values never leave the recordings. */
function describeSecret(_cluster: FrozenCluster, o: FrozenObject): string {
  const w = begin(o);
  metadataLines(w, o.object);
  w.write(0, `\nType:\t${str(field(o.object, 'type'), 'Opaque')}\n`);
  w.write(0, '\nData\n====\n');
  for (const [k, v] of sortedEntries(field(o.object, 'data'))) {
    w.write(0, `${k}:\t${Buffer.from(String(v), 'base64').length} bytes\n`);
  }
  return w.toString();
}

const DESCRIBERS: Record<string, (cluster: FrozenCluster, o: FrozenObject, now: number) => string> = {
  pods: describePod,
  deployments: describeDeployment,
  replicasets: describeReplicaSet,
  nodes: describeNode,
  persistentvolumeclaims: describePvc,
  services: describeService,
  statefulsets: describeStatefulSet,
  configmaps: describeConfigMap,
  secrets: describeSecret,
};

/** kubectl describe output generated from the recordings, or undefined for types without a describer here. */
export function generatedDescribe(cluster: FrozenCluster, type: string, o: FrozenObject): string | undefined {
  const describer = DESCRIBERS[type];
  return describer ? describer(cluster, o, Date.parse(cluster.now)) : undefined;
}
