// A small fake Kubernetes API server on loopback for engine unit tests: it serves the few endpoints
// the kubernetes engine uses (Jobs: create/get/list/watch/delete; pods: list, log with follow) and the
// leader election's (Leases: get/create/replace, a replace with a stale resourceVersion refused with
// 409 as the API server does) and Secrets (create/get/delete: a run's files token), records every request, lets a test push watch events and log lines, and
// can fail on demand. Run as a process of its own with `fake-kube-api-main.ts`.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
}

type Obj = {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string>; [k: string]: unknown };
  [k: string]: unknown;
};

interface Failure {
  method?: string;
  pathIncludes: string;
  status: number;
  remaining: number;
}

interface Watcher {
  namespace: string;
  name?: string;
  res: ServerResponse;
}

interface LogStream {
  chunks: string[];
  ended: boolean;
  followers: Set<ServerResponse>;
}

const JOBS = /^\/apis\/batch\/v1\/namespaces\/([^/]+)\/jobs(?:\/([^/]+))?$/;
const PODS = /^\/api\/v1\/namespaces\/([^/]+)\/pods$/;
const POD_LOG = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/log$/;
const POD = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/;
const SECRETS = /^\/api\/v1\/namespaces\/([^/]+)\/secrets(?:\/([^/]+))?$/;
const LEASES = /^\/apis\/coordination\.k8s\.io\/v1\/namespaces\/([^/]+)\/leases(?:\/([^/]+))?$/;

/** Matches `k=v,k2=v2` selectors (the only form the engine sends). */
function matchesSelector(labels: Record<string, string> | undefined, selector: string | undefined): boolean {
  if (!selector) return true;
  return selector.split(',').every((term) => {
    const [k, v] = term.split('=');
    return k !== undefined && labels?.[k] === v;
  });
}

export class FakeKubeApi {
  readonly requests: RecordedRequest[] = [];
  readonly jobs = new Map<string, Obj>();
  readonly pods = new Map<string, Obj>();
  /** Leases by `<namespace>/<name>`. */
  readonly leases = new Map<string, Obj>();
  /** Secrets by `<namespace>/<name>`. */
  readonly secrets = new Map<string, Obj>();
  private readonly logs = new Map<string, LogStream>();
  private readonly watchers = new Set<Watcher>();
  private readonly failures: Failure[] = [];
  private resourceVersion = 1;
  private server?: Server;
  port = 0;

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** A KubeConfig pointing at this server (or at any URL, e.g. a closed port). */
  kubeConfig(server = this.url): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'fake', server, skipTLSVerify: true }],
      users: [{ name: 'tester', token: 'fake-token' }],
      contexts: [{ name: 'fake', cluster: 'fake', user: 'tester', namespace: 'default' }],
      currentContext: 'fake',
    });
    return kc;
  }

  /** The next `times` requests whose path contains `pathIncludes` answer with `status`. */
  failNext(pathIncludes: string, status: number, times = 1, method?: string): void {
    this.failures.push({ pathIncludes, status, remaining: times, method });
  }

  requestsTo(method: string, pathIncludes: string): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && r.path.includes(pathIncludes));
  }

  /** Replaces a Job's status and sends MODIFIED to its watchers. */
  updateJob(name: string, status: Record<string, unknown>): void {
    const job = this.jobs.get(name);
    if (!job) throw new Error(`fake API: no Job ${name}`);
    job.status = status;
    this.bump(job);
    this.emit('MODIFIED', job);
  }

  /** Sends a raw watch event (e.g. ERROR, BOOKMARK) to every watcher of the Job. */
  emitRaw(name: string, type: string, object: unknown): void {
    for (const w of this.watchers) {
      if (w.name === undefined || w.name === name) w.res.write(`${JSON.stringify({ type, object })}\n`);
    }
  }

  /** Adds a pod that is not a Job's (a daemon replica), for tests of what the daemon does to its own pod. */
  addPod(name: string, namespace: string, labels: Record<string, string> = {}): void {
    this.pods.set(name, { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels } });
  }

  /** Creates or replaces the Job's pod with the agent container in the given state. */
  setPod(jobName: string, agentState: Record<string, unknown>, phase = 'Running'): string {
    const job = this.jobs.get(jobName);
    const namespace = job?.metadata?.namespace ?? 'default';
    const name = `${jobName}-pod`;
    this.pods.set(name, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace,
        labels: { 'job-name': jobName },
        creationTimestamp: new Date().toISOString(),
      },
      status: {
        phase,
        containerStatuses: [{ name: 'agent', ready: phase === 'Running', state: agentState }],
      },
    });
    return name;
  }

  /** Ends a Job: its pod's agent container terminates with `exitCode` and the Job gets its condition. */
  finishJob(jobName: string, exitCode: number, extra: Record<string, unknown> = {}): void {
    this.setPod(
      jobName,
      { terminated: { exitCode, reason: exitCode === 0 ? 'Completed' : 'Error', ...extra } },
      exitCode === 0 ? 'Succeeded' : 'Failed',
    );
    const type = exitCode === 0 ? 'Complete' : 'Failed';
    this.updateJob(jobName, {
      conditions: [{ type, status: 'True', reason: exitCode === 0 ? undefined : 'BackoffLimitExceeded' }],
    });
    this.endLog(`${jobName}-pod`);
  }

  appendLog(podName: string, text: string): void {
    const stream = this.logOf(podName);
    stream.chunks.push(text);
    for (const res of stream.followers) res.write(text);
  }

  endLog(podName: string): void {
    const stream = this.logOf(podName);
    stream.ended = true;
    for (const res of stream.followers) res.end();
    stream.followers.clear();
  }

  /** Closes every open follow stream without ending the log (as an API server restart would). */
  dropLogFollowers(podName: string): void {
    const stream = this.logOf(podName);
    for (const res of stream.followers) res.end();
    stream.followers.clear();
  }

  /** Ends every open watch normally, as an API server does when a watch times out. */
  closeWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  get openWatches(): number {
    return this.watchers.size;
  }

  async close(): Promise<void> {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
    for (const s of this.logs.values()) for (const r of s.followers) r.end();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private logOf(podName: string): LogStream {
    let s = this.logs.get(podName);
    if (!s) this.logs.set(podName, (s = { chunks: [], ended: false, followers: new Set() }));
    return s;
  }

  private bump(obj: Obj): void {
    this.resourceVersion += 1;
    obj.metadata = { ...obj.metadata, resourceVersion: String(this.resourceVersion) };
  }

  private emit(type: string, job: Obj): void {
    for (const w of this.watchers) {
      if (
        w.namespace === job.metadata?.namespace &&
        (w.name === undefined || w.name === job.metadata?.name)
      ) {
        w.res.write(`${JSON.stringify({ type, object: job })}\n`);
      }
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = undefined;
    if (raw) {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    const method = req.method ?? 'GET';
    const query = Object.fromEntries(url.searchParams.entries());
    this.requests.push({ method, path: url.pathname, query, body });

    const failure = this.failures.find(
      (f) => f.remaining > 0 && url.pathname.includes(f.pathIncludes) && (!f.method || f.method === method),
    );
    if (failure) {
      failure.remaining -= 1;
      return this.status(res, failure.status, `injected failure ${failure.status}`);
    }

    const secrets = SECRETS.exec(url.pathname);
    if (secrets) return this.handleSecrets(method, secrets[1]!, secrets[2], body, res);
    const leases = LEASES.exec(url.pathname);
    if (leases) return this.handleLeases(method, leases[1]!, leases[2], body, res);
    const jobs = JOBS.exec(url.pathname);
    if (jobs) return this.handleJobs(method, jobs[1]!, jobs[2], query, body, res);
    const pods = PODS.exec(url.pathname);
    if (pods && method === 'GET') {
      const items = [...this.pods.values()].filter(
        (p) => p.metadata?.namespace === pods[1] && matchesSelector(p.metadata?.labels, query.labelSelector),
      );
      return this.json(res, 200, { apiVersion: 'v1', kind: 'PodList', metadata: {}, items });
    }
    const pod = POD.exec(url.pathname);
    if (pod && method === 'PATCH') {
      const found = this.pods.get(pod[2]!);
      if (!found || found.metadata?.namespace !== pod[1])
        return this.status(res, 404, `pods "${pod[2]}" not found`);
      // JSON patch `add` on labels only: what the daemon sends to mark its role.
      for (const op of body as { op: string; path: string; value: string }[]) {
        const key = /^\/metadata\/labels\/(.+)$/.exec(op.path)?.[1]?.replace('~1', '/');
        if (op.op !== 'add' || !key)
          return this.status(res, 422, `fake API: unsupported patch ${op.op} ${op.path}`);
        found.metadata = { ...found.metadata, labels: { ...found.metadata?.labels, [key]: op.value } };
      }
      this.bump(found);
      return this.json(res, 200, found);
    }
    const podLog = POD_LOG.exec(url.pathname);
    if (podLog && method === 'GET') {
      if (!this.pods.has(podLog[2]!)) return this.status(res, 404, `pods "${podLog[2]}" not found`);
      const stream = this.logOf(podLog[2]!);
      res.writeHead(200, { 'content-type': 'text/plain' });
      for (const c of stream.chunks) res.write(c);
      if (query.follow !== 'true' || stream.ended) return void res.end();
      stream.followers.add(res);
      res.on('close', () => stream.followers.delete(res));
      return;
    }
    this.status(res, 404, `fake API: no route for ${method} ${url.pathname}`);
  }

  private handleSecrets(
    method: string,
    namespace: string,
    name: string | undefined,
    body: unknown,
    res: ServerResponse,
  ): void {
    if (method === 'POST' && name === undefined) {
      const secret = body as Obj;
      const key = `${namespace}/${secret.metadata?.name ?? ''}`;
      if (this.secrets.has(key))
        return this.status(res, 409, `secrets "${secret.metadata?.name}" already exists`);
      secret.metadata = { ...secret.metadata, namespace };
      this.bump(secret);
      this.secrets.set(key, secret);
      return this.json(res, 201, secret);
    }
    const key = `${namespace}/${name ?? ''}`;
    const found = this.secrets.get(key);
    if (!found || name === undefined) return this.status(res, 404, `secrets "${name}" not found`);
    if (method === 'GET') return this.json(res, 200, found);
    if (method === 'DELETE') {
      this.secrets.delete(key);
      return this.json(res, 200, { kind: 'Status', status: 'Success' });
    }
    this.status(res, 405, `fake API: ${method} on a Secret`);
  }

  /** A Secret's value under `key`, decoded. */
  secretValue(namespace: string, name: string, key: string): string | undefined {
    const data = this.secrets.get(`${namespace}/${name}`)?.data as Record<string, string> | undefined;
    const value = data?.[key];
    return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  }

  private handleJobs(
    method: string,
    namespace: string,
    name: string | undefined,
    query: Record<string, string>,
    body: unknown,
    res: ServerResponse,
  ): void {
    if (!name && method === 'GET' && query.watch === 'true') {
      const field = query.fieldSelector?.match(/^metadata\.name=(.+)$/)?.[1];
      const watcher: Watcher = { namespace, name: field, res };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.flushHeaders();
      this.watchers.add(watcher);
      res.on('close', () => this.watchers.delete(watcher));
      return;
    }
    if (!name && method === 'GET') {
      let items = [...this.jobs.values()].filter(
        (j) =>
          j.metadata?.namespace === namespace && matchesSelector(j.metadata?.labels, query.labelSelector),
      );
      if (query.limit) items = items.slice(0, Number(query.limit));
      return this.json(res, 200, { apiVersion: 'batch/v1', kind: 'JobList', metadata: {}, items });
    }
    if (!name && method === 'POST') {
      const job = structuredClone(body) as Obj;
      const jobName = job.metadata?.name ?? '';
      if (this.jobs.has(jobName)) return this.status(res, 409, `jobs.batch "${jobName}" already exists`);
      job.metadata = {
        ...job.metadata,
        namespace,
        uid: `uid-${jobName}`,
        creationTimestamp: new Date().toISOString(),
      };
      this.bump(job);
      this.jobs.set(jobName, job);
      return this.json(res, 201, job);
    }
    const job = name ? this.jobs.get(name) : undefined;
    if (!job || job.metadata?.namespace !== namespace)
      return this.status(res, 404, `jobs.batch "${name}" not found`);
    if (method === 'GET') return this.json(res, 200, job);
    if (method === 'DELETE') {
      this.jobs.delete(name!);
      for (const [podName, pod] of this.pods)
        if (pod.metadata?.labels?.['job-name'] === name) this.pods.delete(podName);
      this.bump(job);
      this.emit('DELETED', job);
      return this.json(res, 200, { kind: 'Status', apiVersion: 'v1', status: 'Success' });
    }
    this.status(res, 405, `fake API: ${method} not supported on a Job`);
  }

  private handleLeases(
    method: string,
    namespace: string,
    name: string | undefined,
    body: unknown,
    res: ServerResponse,
  ): void {
    if (!name && method === 'POST') {
      const lease = structuredClone(body) as Obj;
      const key = `${namespace}/${lease.metadata?.name ?? ''}`;
      if (this.leases.has(key))
        return this.status(res, 409, `leases.coordination.k8s.io "${lease.metadata?.name}" already exists`);
      lease.metadata = { ...lease.metadata, namespace, uid: `uid-lease-${key}` };
      this.bump(lease);
      this.leases.set(key, lease);
      return this.json(res, 201, lease);
    }
    const key = `${namespace}/${name ?? ''}`;
    const lease = this.leases.get(key);
    if (!name || !lease) return this.status(res, 404, `leases.coordination.k8s.io "${name}" not found`);
    if (method === 'GET') return this.json(res, 200, lease);
    if (method === 'PUT') {
      const next = structuredClone(body) as Obj;
      // Optimistic concurrency: the write must carry the resourceVersion it read.
      if (next.metadata?.resourceVersion !== lease.metadata?.resourceVersion)
        return this.status(
          res,
          409,
          `Operation cannot be fulfilled on leases.coordination.k8s.io "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        );
      next.metadata = { ...next.metadata, namespace, uid: lease.metadata?.uid };
      this.bump(next);
      this.leases.set(key, next);
      return this.json(res, 200, next);
    }
    this.status(res, 405, `fake API: ${method} not supported on a Lease`);
  }

  private json(res: ServerResponse, code: number, body: unknown): void {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private status(res: ServerResponse, code: number, message: string): void {
    this.json(res, code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message, code });
  }
}
