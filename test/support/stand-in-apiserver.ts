import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RESOURCE_TYPES, type ResourceType } from '../../src/kubectl/resources.js';

// A recording stand-in for a Kubernetes API server, for running the real kubectl against: it answers
// discovery (legacy /api, /apis and each group version, built from the stock resource types), lists
// with one object, one object by name, pod logs, and /version; it records every request that arrives
// (one client at a time: `take()` hands over what arrived since the last call).

export interface RecordedRequest {
  method: string;
  /** The path as it arrived (not decoded). */
  path: string;
  /** The user asked for with Impersonate-User (kubectl --as), if any. */
  as?: string;
}

/** What a SelfSubjectAccessReview asks (`kubectl auth can-i`). */
export interface AccessReview {
  verb: string;
  resource: string;
  group: string;
  subresource: string;
  /** Impersonate-User of the request, if any. */
  as?: string;
}

export interface StandInOptions {
  /** The answer to `kubectl auth can-i`; default: nothing is allowed. */
  allows?: (review: AccessReview) => boolean;
  /**
   * Objects served per resource name (`secrets`, `pods`…) instead of the generated one: a list answers
   * all of them, a get the one of that name (404 when none has it).
   */
  objects?: Partial<Record<string, { metadata: { name: string } }[]>>;
  /**
   * Objects of its own for the requests it answers (pods, events, logs: test/support/kube-objects/);
   * undefined lets the stand-in answer with its one stock object per type.
   */
  answer?: (request: ObjectRequest) => ObjectAnswer | undefined;
}

/** A GET the answer hook may answer: its path (with the query) and its Accept header. */
export interface ObjectRequest {
  path: string;
  accept: string;
}

export interface ObjectAnswer {
  status: number;
  contentType: string;
  body: string;
}

export interface StandInApiServer {
  readonly url: string;
  /** The requests that arrived since the last take. */
  take(): RecordedRequest[];
  close(): Promise<void>;
}

const METRICS = { group: 'metrics.k8s.io', version: 'v1beta1' };
const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

const groupVersion = (group: string, version: string) => (group === '' ? version : `${group}/${version}`);

function resourceList(group: string, version: string): object {
  const types = RESOURCE_TYPES.filter((r) => r.group === group && r.version === version);
  const resources = types.flatMap((r) => [
    {
      name: r.name,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: VERBS,
      ...(r.shortNames.length > 0 ? { shortNames: r.shortNames } : {}),
      ...(['pods', 'services', 'deployments'].includes(r.name) ? { categories: ['all'] } : {}),
    },
    ...(r.name === 'pods'
      ? ['log', 'exec', 'attach', 'portforward', 'proxy', 'status', 'eviction'].map((sub) => ({
          name: `pods/${sub}`,
          singularName: '',
          namespaced: true,
          kind: sub === 'log' ? 'Pod' : 'PodProxyOptions',
          verbs: ['get', 'create'],
        }))
      : []),
  ]);
  if (group === METRICS.group)
    resources.push(
      ...['pods', 'nodes'].map((name) => ({
        name,
        singularName: name.slice(0, -1),
        namespaced: name === 'pods',
        kind: name === 'pods' ? 'PodMetrics' : 'NodeMetrics',
        verbs: ['get', 'list'],
      })),
    );
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: groupVersion(group, version), resources };
}

function groupList(): object {
  const groups = new Map<string, string>();
  for (const r of RESOURCE_TYPES) if (r.group !== '') groups.set(r.group, r.version);
  groups.set(METRICS.group, METRICS.version);
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...groups].map(([name, version]) => {
      const gv = { groupVersion: `${name}/${version}`, version };
      return { name, versions: [gv], preferredVersion: gv };
    }),
  };
}

/** The stock type a request path names, with the namespace and name it gives, if any. */
function typeOf(
  path: string,
): { type: ResourceType; namespace?: string; name?: string; sub?: string } | undefined {
  const parts = path.split('?')[0]?.split('/').filter(Boolean) ?? [];
  let rest: string[];
  let group = '';
  let version: string;
  if (parts[0] === 'api') {
    version = parts[1] ?? '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    group = parts[1] ?? '';
    version = parts[2] ?? '';
    rest = parts.slice(3);
  } else return undefined;
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const type = RESOURCE_TYPES.find((r) => r.name === rest[0] && r.group === group && r.version === version);
  if (!type) return undefined;
  return {
    type,
    ...(namespace ? { namespace } : {}),
    ...(rest[1] ? { name: rest[1] } : {}),
    ...(rest[2] ? { sub: rest[2] } : {}),
  };
}

const objectOf = (type: ResourceType, name: string, namespace?: string) => ({
  kind: type.kind,
  apiVersion: groupVersion(type.group, type.version),
  metadata: {
    name,
    ...(type.namespaced ? { namespace: namespace ?? 'default' } : {}),
    uid: `uid-${name}`,
    resourceVersion: '1',
    creationTimestamp: '2026-11-26T09:00:00Z',
  },
  ...(type.name === 'pods'
    ? {
        spec: { containers: [{ name: 'app', image: 'app:1' }], nodeName: 'node-1' },
        status: { phase: 'Running' },
      }
    : {}),
  ...(type.name === 'serviceaccounts' ? { secrets: [{ name: 'sa-token' }] } : {}),
});

/**
 * The ResourceAttributes of a SelfSubjectAccessReview sent as protobuf (kubectl's default): its seven
 * string fields (namespace, verb, group, version, resource, subresource, name) in field order, each
 * written even when empty.
 */
function resourceAttributesOf(body: Buffer): Partial<AccessReview> {
  for (let start = 0; start < body.length; start++) {
    const fields: string[] = [];
    let i = start;
    for (let field = 1; field <= 7; field++) {
      if (body[i] !== (field << 3) + 2) break;
      const length = body[i + 1] ?? 255;
      if (length > 127 || i + 2 + length > body.length) break;
      fields.push(body.subarray(i + 2, i + 2 + length).toString('utf8'));
      i += 2 + length;
    }
    if (fields.length === 7) {
      const [, verb = '', group = '', , resource = '', subresource = ''] = fields;
      return { verb, group, resource, subresource };
    }
  }
  return {};
}

export async function startStandInApiServer(options: StandInOptions = {}): Promise<StandInApiServer> {
  let recorded: RecordedRequest[] = [];
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    const as = req.headers['impersonate-user'];
    recorded.push({ method: req.method ?? '', path, ...(typeof as === 'string' ? { as } : {}) });
    if (req.method === 'POST' && path.split('?')[0]?.endsWith('/selfsubjectaccessreviews')) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const attrs = (req.headers['content-type'] ?? '').includes('protobuf')
          ? resourceAttributesOf(body)
          : ((JSON.parse(body.toString('utf8')) as { spec?: { resourceAttributes?: Partial<AccessReview> } })
              .spec?.resourceAttributes ?? {});
        const allowed =
          options.allows?.({
            verb: attrs.verb ?? '',
            resource: attrs.resource ?? '',
            group: attrs.group ?? '',
            subresource: attrs.subresource ?? '',
            ...(typeof as === 'string' ? { as } : {}),
          }) ?? false;
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            kind: 'SelfSubjectAccessReview',
            apiVersion: 'authorization.k8s.io/v1',
            spec: { resourceAttributes: attrs },
            status: { allowed },
          }),
        );
      });
      return;
    }
    req.resume();
    const json = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const bare = path.split('?')[0] ?? '';
    if (bare === '/version')
      return json(200, { major: '1', minor: '32', gitVersion: 'v1.32.0', platform: 'linux/amd64' });
    if (bare === '/api')
      return json(200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] });
    if (bare === '/apis') return json(200, groupList());
    if (bare === '/api/v1') return json(200, resourceList('', 'v1'));
    const gv = /^\/apis\/([^/]+)\/([^/]+)$/.exec(bare);
    if (gv) return json(200, resourceList(gv[1] ?? '', gv[2] ?? ''));
    const own =
      req.method === 'GET' ? options.answer?.({ path, accept: req.headers.accept ?? '' }) : undefined;
    if (own) {
      res.writeHead(own.status, { 'content-type': own.contentType });
      return res.end(own.body);
    }
    if (path.includes('watch=true') || path.includes('follow=true')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end();
    }
    const target = typeOf(path);
    if (!target)
      return json(404, {
        kind: 'Status',
        apiVersion: 'v1',
        status: 'Failure',
        reason: 'NotFound',
        code: 404,
      });
    if (target.sub === 'log') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end('log line\n');
    }
    const served = options.objects?.[target.type.name];
    if (target.name) {
      const name = decodeURIComponent(target.name);
      if (!served) return json(200, objectOf(target.type, name, target.namespace));
      const found = served.find((o) => o.metadata.name === name);
      return found
        ? json(200, found)
        : json(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404 });
    }
    return json(200, {
      kind: `${target.type.kind}List`,
      apiVersion: groupVersion(target.type.group, target.type.version),
      metadata: { resourceVersion: '1' },
      items: served ?? [objectOf(target.type, 'evidence-1', target.namespace)],
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    take: () => {
      const out = recorded;
      recorded = [];
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
