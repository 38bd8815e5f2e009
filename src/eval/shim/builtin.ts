import type { KubectlCommand } from '../../kubectl/parse.js';
import {
  RESOURCE_TYPES,
  apiVersionOf,
  findResourceType,
  type ResourceType,
} from '../../kubectl/resources.js';
import {
  arr,
  field,
  findObject,
  listObjects,
  num,
  str,
  type FrozenCluster,
  type FrozenObject,
} from './cluster.js';
import { effectiveNamespace, notFound, printObjects } from './get.js';
import { fail, ok, type ShimAnswer } from './output.js';
import { eventObject, eventTimes } from './printers.js';
import { age, renderTable } from './table.js';

// The read commands that are facts of the frozen cluster rather than object listings: version,
// cluster-info, config, auth, api-resources, rollout status/history, `kubectl events`, top, raw GETs.

const EVENT_TYPE = RESOURCE_TYPES.find((r) => r.name === 'events') as ResourceType;

export function version(cmd: KubectlCommand, cluster: FrozenCluster): ShimAnswer {
  const lines = [
    `Client Version: ${cluster.versions.client}`,
    `Kustomize Version: ${cluster.versions.kustomize}`,
  ];
  if (cmd.flags.client !== 'true') lines.push(`Server Version: ${cluster.versions.server}`);
  return ok(`${lines.join('\n')}\n`, 'builtin');
}

export function clusterInfo(cmd: KubectlCommand, cluster: FrozenCluster): ShimAnswer {
  if (cmd.subcommand === 'dump') {
    return fail(
      `error: cluster-info dump is not available in this frozen cluster (case ${cluster.caseName})`,
      'unsupported',
    );
  }
  return ok(
    [
      `Kubernetes control plane is running at ${cluster.server}`,
      `CoreDNS is running at ${cluster.server}/api/v1/namespaces/kube-system/services/kube-dns:dns/proxy`,
      '',
      "To further debug and diagnose cluster problems, use 'kubectl cluster-info dump'.",
      '',
    ].join('\n'),
    'builtin',
  );
}

const USER_NAME = 'triage-agent';

export function config(cmd: KubectlCommand, cluster: FrozenCluster): ShimAnswer {
  const ctx = cluster.context;
  switch (cmd.subcommand) {
    case 'current-context':
      return ok(`${ctx}\n`, 'builtin');
    case 'get-contexts':
      return ok(
        renderTable(
          ['CURRENT', 'NAME', 'CLUSTER', 'AUTHINFO', 'NAMESPACE'],
          [['*', ctx, ctx, USER_NAME, cluster.namespace]],
        ),
        'builtin',
      );
    case 'get-clusters':
      return ok(`NAME\n${ctx}\n`, 'builtin');
    case 'get-users':
      return ok(`NAME\n${USER_NAME}\n`, 'builtin');
    case 'view':
      return ok(
        [
          'apiVersion: v1',
          'clusters:',
          '- cluster:',
          '    certificate-authority-data: DATA+OMITTED',
          `    server: ${cluster.server}`,
          `  name: ${ctx}`,
          'contexts:',
          '- context:',
          `    cluster: ${ctx}`,
          `    namespace: ${cluster.namespace}`,
          `    user: ${USER_NAME}`,
          `  name: ${ctx}`,
          `current-context: ${ctx}`,
          'kind: Config',
          'preferences: {}',
          'users:',
          `- name: ${USER_NAME}`,
          '  user:',
          '    token: REDACTED',
          '',
        ].join('\n'),
        'builtin',
      );
    default:
      return fail(`error: unknown command "${cmd.args[0] ?? ''}" for "kubectl config"`, 'unknown-command');
  }
}

const READ_RBAC_VERBS = new Set(['get', 'list', 'watch']);

export function auth(cmd: KubectlCommand, cluster: FrozenCluster): ShimAnswer {
  if (cmd.subcommand === 'whoami') {
    const sa = cluster.user.split(':');
    const groups =
      sa[0] === 'system' && sa[1] === 'serviceaccount'
        ? ['system:serviceaccounts', `system:serviceaccounts:${sa[2] ?? ''}`, 'system:authenticated']
        : ['system:authenticated'];
    return ok(
      renderTable(
        ['ATTRIBUTE', 'VALUE'],
        [
          ['Username', cluster.user],
          ['Groups', `[${groups.join(' ')}]`],
        ],
      ),
      'builtin',
    );
  }
  if (cmd.flags.list === 'true') {
    return fail(
      `error: auth can-i --list is not available in this frozen cluster (case ${cluster.caseName})`,
      'unsupported',
    );
  }
  const [verb, resource] = cmd.args;
  if (verb === undefined || resource === undefined) {
    return fail(
      "error: you must specify two arguments: verb resource or a non-resource URL\nSee 'kubectl auth can-i -h' for help and examples",
      'usage-error',
    );
  }
  const typeText = resource.split('/')[0] ?? resource;
  const type = findResourceType(typeText);
  const allowed =
    READ_RBAC_VERBS.has(verb) && (type === undefined || type.name !== 'secrets' || verb !== 'get');
  if (type === undefined && !resource.startsWith('/')) {
    return {
      stdout: 'no\n',
      stderr: `Warning: the server doesn't have a resource type '${typeText}'\n`,
      exitCode: 1,
      answeredFrom: 'builtin',
    };
  }
  return allowed
    ? ok('yes\n', 'builtin')
    : { stdout: 'no\n', stderr: '', exitCode: 1, answeredFrom: 'builtin' };
}

export function apiResources(cmd: KubectlCommand): ShimAnswer {
  const sorted = [...RESOURCE_TYPES].sort(
    (a, b) => a.group.localeCompare(b.group) || a.name.localeCompare(b.name),
  );
  const filtered = sorted.filter(
    (r) =>
      (cmd.flags['api-group'] === undefined || r.group === cmd.flags['api-group']) &&
      (cmd.flags.namespaced === undefined || String(r.namespaced) === cmd.flags.namespaced),
  );
  if (cmd.output === 'name') {
    return ok(
      filtered.map((r) => `${r.group === '' ? r.name : `${r.name}.${r.group}`}\n`).join(''),
      'builtin',
    );
  }
  return ok(
    renderTable(
      ['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND'],
      filtered.map((r) => [r.name, r.shortNames.join(','), apiVersionOf(r), String(r.namespaced), r.kind]),
      { noHeaders: cmd.flags['no-headers'] === 'true' },
    ),
    'builtin',
  );
}

export function apiVersions(): ShimAnswer {
  const versions = [...new Set(RESOURCE_TYPES.map(apiVersionOf))].sort();
  return ok(versions.map((v) => `${v}\n`).join(''), 'builtin');
}

function ownedReplicaSets(cluster: FrozenCluster, deployment: FrozenObject): FrozenObject[] {
  return listObjects(cluster, 'replicasets', deployment.namespace).filter((rs) =>
    arr(field(rs.object, 'metadata', 'ownerReferences')).some(
      (o) => field(o, 'kind') === 'Deployment' && field(o, 'name') === deployment.name,
    ),
  );
}

export function rollout(cmd: KubectlCommand, cluster: FrozenCluster): ShimAnswer {
  const target = cmd.targets[0];
  const name = target?.names[0];
  if (!target || name === undefined) {
    return fail(
      "error: required resource not specified\nSee 'kubectl rollout -h' for help and examples",
      'usage-error',
    );
  }
  if (!target.type) return fail(`error: the server doesn't have a resource type "${target.text}"`, 'objects');
  if (target.type.name !== 'deployments') {
    return fail(
      `error: rollout ${cmd.subcommand ?? ''} of ${target.type.name} is not available in this frozen cluster (case ${cluster.caseName}); deployments are`,
      'unsupported',
    );
  }
  const namespace = effectiveNamespace(cmd, cluster) ?? cluster.namespace;
  const deployment = findObject(cluster, 'deployments', namespace, name);
  if (!deployment) return fail(notFound(target.type, name), 'objects');
  const o = deployment.object;
  if (cmd.subcommand === 'history') {
    if (cmd.flags.revision !== undefined) {
      return fail(
        `error: rollout history --revision is not available in this frozen cluster (case ${cluster.caseName})`,
        'unsupported',
      );
    }
    const rows = ownedReplicaSets(cluster, deployment)
      .map((rs) => ({
        revision: Number(
          str(field(rs.object, 'metadata', 'annotations', 'deployment.kubernetes.io/revision'), '0'),
        ),
        cause: str(field(rs.object, 'metadata', 'annotations', 'kubernetes.io/change-cause')) || '<none>',
      }))
      .sort((a, b) => a.revision - b.revision)
      .map((r) => [String(r.revision), r.cause]);
    return ok(
      `deployment.apps/${name} \n${renderTable(['REVISION', 'CHANGE-CAUSE'], rows, { minWidth: 0, padding: 2 })}\n`,
      'builtin',
    );
  }
  const replicas = num(field(o, 'spec', 'replicas'), 1);
  const updated = num(field(o, 'status', 'updatedReplicas'));
  const current = num(field(o, 'status', 'replicas'));
  const available = num(field(o, 'status', 'availableReplicas'));
  const progressing = arr(field(o, 'status', 'conditions')).find((c) => field(c, 'type') === 'Progressing');
  if (field(progressing, 'reason') === 'ProgressDeadlineExceeded') {
    return fail(`error: deployment "${name}" exceeded its progress deadline`, 'builtin');
  }
  let waiting: string | undefined;
  if (updated < replicas)
    waiting = `Waiting for deployment "${name}" rollout to finish: ${updated} out of ${replicas} new replicas have been updated...`;
  else if (current > updated)
    waiting = `Waiting for deployment "${name}" rollout to finish: ${current - updated} old replicas are pending termination...`;
  else if (available < updated)
    waiting = `Waiting for deployment "${name}" rollout to finish: ${available} of ${updated} updated replicas are available...`;
  if (waiting === undefined) return ok(`deployment "${name}" successfully rolled out\n`, 'builtin');
  if (cmd.flags.watch === 'false') return ok(`${waiting}\n`, 'builtin');
  return {
    stdout: `${waiting}\n`,
    stderr: `error: timed out waiting for the condition (the frozen cluster does not change; use --watch=false to read the status once)\n`,
    exitCode: 1,
    answeredFrom: 'builtin',
  };
}

/** `kubectl events` (not `get events`): its own table, oldest first, repeats as `(xN over T)`. */
export function events(cmd: KubectlCommand, cluster: FrozenCluster): ShimAnswer {
  const namespace = effectiveNamespace(cmd, cluster);
  const now = Date.parse(cluster.now);
  let list = listObjects(cluster, 'events', namespace);
  const forText = cmd.flags.for;
  if (forText !== undefined) {
    const [typeText = '', name = ''] = forText.split('/');
    const type = findResourceType(typeText);
    if (!type) return fail(`error: the server doesn't have a resource type "${typeText}"`, 'objects');
    list = list.filter(
      (e) =>
        field(e.object, 'involvedObject', 'kind') === type.kind &&
        field(e.object, 'involvedObject', 'name') === name,
    );
  }
  const types = cmd.flags.types?.split(',').map((t) => t.trim().toLowerCase());
  if (types) list = list.filter((e) => types.includes(str(field(e.object, 'type')).toLowerCase()));
  list.sort((a, b) => Date.parse(eventTimes(a.object).last) - Date.parse(eventTimes(b.object).last));
  if (cmd.output !== undefined)
    return printObjects(cmd, cluster, [{ type: EVENT_TYPE, objects: list }], false);
  if (list.length === 0) {
    return ok(
      '',
      'objects',
      namespace === undefined ? 'No events found.\n' : `No events found in ${namespace} namespace.\n`,
    );
  }
  const rows = list.map((e) => {
    const t = eventTimes(e.object);
    const seen =
      t.count > 1 ? `${age(t.last, now)} (x${t.count} over ${age(t.first, now)})` : age(t.last, now);
    const cells = [
      seen,
      str(field(e.object, 'type')),
      str(field(e.object, 'reason')),
      eventObject(e.object),
      str(field(e.object, 'message')).trim(),
    ];
    return namespace === undefined ? [e.namespace ?? '', ...cells] : cells;
  });
  const headers = ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'];
  return ok(renderTable(namespace === undefined ? ['NAMESPACE', ...headers] : headers, rows), 'objects');
}

export function top(): ShimAnswer {
  return fail('error: Metrics API not available', 'builtin');
}

const READYZ_CHECKS = [
  'ping',
  'log',
  'etcd',
  'etcd-readiness',
  'informer-sync',
  'poststarthook/start-apiserver-admission-initializer',
  'shutdown',
];

/** `kubectl get --raw PATH`: health endpoints, /version, and object paths as the API server answers them (compact JSON). */
export function rawGet(path: string, cluster: FrozenCluster): ShimAnswer {
  const [pathname = '', query = ''] = path.split('?');
  if (['/readyz', '/livez', '/healthz'].includes(pathname)) {
    if (!/(^|&)verbose/.test(query)) return ok('ok', 'builtin');
    const name = pathname.slice(1);
    return ok(`${READYZ_CHECKS.map((c) => `[+]${c} ok`).join('\n')}\n${name} check passed\n`, 'builtin');
  }
  if (pathname === '/version') {
    const [major = '1', minor = '0'] = cluster.versions.server.replace(/^v/, '').split('.');
    return ok(
      JSON.stringify({ major, minor, gitVersion: cluster.versions.server, platform: 'linux/amd64' }, null, 2),
      'builtin',
    );
  }
  const m =
    /^\/(?:api\/(v1)|apis\/([^/]+)\/([^/]+))(?:\/namespaces\/([^/]+))?\/([^/]+)(?:\/([^/]+))?(?:\/(log))?\/?$/.exec(
      pathname,
    );
  const notFoundRaw = fail(
    'Error from server (NotFound): the server could not find the requested resource',
    'objects',
  );
  if (!m) return notFoundRaw;
  const group = m[2] ?? '';
  const typeName = m[5] as string;
  const type = RESOURCE_TYPES.find((r) => r.name === typeName && r.group === group);
  if (!type) return notFoundRaw;
  const namespace = m[4];
  const name = m[6];
  if (name !== undefined) {
    const o = findObject(cluster, type.name, namespace, name);
    if (!o) return fail(notFound(type, name), 'objects');
    if (m[7] === 'log') {
      const log = cluster.logs.find((l) => l.namespace === namespace && l.pod === name && !l.previous);
      return log
        ? ok(log.text, 'logs')
        : fail(`error: the logs of pod "${name}" were not recorded`, 'not-recorded');
    }
    return ok(JSON.stringify(o.object), 'objects');
  }
  const items = listObjects(cluster, type.name, type.namespaced ? namespace : undefined).map((o) => o.object);
  return ok(
    JSON.stringify({
      kind: `${type.kind}List`,
      apiVersion: apiVersionOf(type),
      metadata: { resourceVersion: '1' },
      items,
    }),
    'objects',
  );
}
