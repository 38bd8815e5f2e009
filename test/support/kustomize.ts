// A tiny kustomize renderer for tests, enough for deploy/kubernetes: resources (files and folders),
// components, configMapGenerator (files, literals, a content-hash suffix and reference rewriting),
// namespace, images and JSON6902 patches with a target. Anything else in a kustomization is an error,
// so a test never passes over a feature it does not understand.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
  [k: string]: unknown;
};

const KNOWN_FIELDS = new Set([
  'apiVersion',
  'kind',
  'namespace',
  'resources',
  'components',
  'configMapGenerator',
  'images',
  'patches',
]);
// Kinds that live outside namespaces: the namespace transformer leaves them alone.
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'PersistentVolume',
  'StorageClass',
]);

interface Kustomization {
  namespace?: string;
  resources?: string[];
  components?: string[];
  configMapGenerator?: { name: string; files?: string[]; literals?: string[] }[];
  images?: { name: string; newName?: string; newTag?: string }[];
  patches?: { target: { kind?: string; name?: string }; patch: string }[];
}

/** Parses every YAML document of a file into objects (skipping empty documents). */
export function readManifests(file: string): K8sObject[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      return doc.toJS() as K8sObject | null;
    })
    .filter((o): o is K8sObject => o !== null);
}

/** Renders the kustomization in `dir` as kustomize build would (for the supported subset). */
export function renderKustomization(dir: string): K8sObject[] {
  const file = path.join(dir, 'kustomization.yaml');
  const k = readManifests(file)[0] as unknown as Kustomization & Record<string, unknown>;
  const unknown = Object.keys(k).filter((key) => !KNOWN_FIELDS.has(key));
  if (unknown.length > 0) throw new Error(`${file}: unsupported kustomization fields: ${unknown.join(', ')}`);

  let objects: K8sObject[] = [];
  for (const entry of [...(k.resources ?? []), ...(k.components ?? [])]) {
    const target = path.resolve(dir, entry);
    if (!existsSync(target)) throw new Error(`${file}: resource ${entry} does not exist`);
    objects.push(...(statSync(target).isDirectory() ? renderKustomization(target) : readManifests(target)));
  }

  const renamed = new Map<string, string>();
  for (const gen of k.configMapGenerator ?? []) {
    const data: Record<string, string> = {};
    for (const f of gen.files ?? []) data[path.basename(f)] = readFileSync(path.resolve(dir, f), 'utf8');
    for (const lit of gen.literals ?? []) {
      const eq = lit.indexOf('=');
      data[lit.slice(0, eq)] = lit.slice(eq + 1);
    }
    const hash = createHash('sha256')
      .update(JSON.stringify({ name: gen.name, data }))
      .digest('hex')
      .slice(0, 10);
    const name = `${gen.name}-${hash}`;
    renamed.set(gen.name, name);
    objects.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
  }
  if (renamed.size > 0) objects = objects.map((o) => rewriteConfigMapRefs(o, renamed));

  for (const patch of k.patches ?? []) {
    const ops = readYamlOps(patch.patch);
    const targets = objects.filter(
      (o) =>
        (!patch.target.kind || o.kind === patch.target.kind) &&
        (!patch.target.name || o.metadata.name === patch.target.name),
    );
    if (targets.length === 0)
      throw new Error(`${file}: patch target ${JSON.stringify(patch.target)} matches nothing`);
    for (const t of targets) for (const op of ops) applyOp(t, op);
  }

  for (const image of k.images ?? []) {
    for (const c of containersOf(objects)) {
      const [name, tag] = splitImage(c.image);
      if (name !== image.name) continue;
      c.image = `${image.newName ?? name}:${image.newTag ?? tag ?? 'latest'}`;
    }
  }

  if (k.namespace) {
    for (const o of objects) {
      if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = k.namespace;
      for (const s of (o.subjects as { kind: string; namespace?: string }[] | undefined) ?? []) {
        if (s.kind === 'ServiceAccount') s.namespace = k.namespace;
      }
    }
  }
  return objects;
}

function splitImage(image: string): [string, string | undefined] {
  const at = image.lastIndexOf(':');
  return at > image.lastIndexOf('/') ? [image.slice(0, at), image.slice(at + 1)] : [image, undefined];
}

type PodSpec = {
  containers?: {
    image: string;
    env?: { valueFrom?: { configMapKeyRef?: { name: string } } }[];
    envFrom?: { configMapRef?: { name: string } }[];
  }[];
  volumes?: { configMap?: { name: string } }[];
};

function podSpecOf(o: K8sObject): PodSpec | undefined {
  const spec = o.spec as
    { template?: { spec?: PodSpec }; jobTemplate?: { spec?: { template?: { spec?: PodSpec } } } } | undefined;
  if (o.kind === 'Pod') return o.spec as PodSpec;
  return spec?.template?.spec ?? spec?.jobTemplate?.spec?.template?.spec;
}

function containersOf(objects: K8sObject[]) {
  return objects.flatMap((o) => podSpecOf(o)?.containers ?? []);
}

function rewriteConfigMapRefs(o: K8sObject, renamed: Map<string, string>): K8sObject {
  const pod = podSpecOf(o);
  if (!pod) return o;
  const swap = (ref?: { name: string }) => {
    if (ref && renamed.has(ref.name)) ref.name = renamed.get(ref.name)!;
  };
  for (const v of pod.volumes ?? []) swap(v.configMap);
  for (const c of pod.containers ?? []) {
    for (const e of c.env ?? []) swap(e.valueFrom?.configMapKeyRef);
    for (const e of c.envFrom ?? []) swap(e.configMapRef);
  }
  return o;
}

interface Op {
  op: 'add' | 'replace' | 'remove';
  path: string;
  value?: unknown;
}

function readYamlOps(text: string): Op[] {
  const doc = parseAllDocuments(text)[0]?.toJS() as unknown;
  if (!Array.isArray(doc)) throw new Error('only JSON6902 patches (a list of operations) are supported');
  return doc as Op[];
}

function applyOp(target: K8sObject, op: Op): void {
  const keys = op.path
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const last = keys.pop();
  if (last === undefined) throw new Error(`patch path ${op.path} is empty`);
  let node: Record<string, unknown> = target;
  for (const key of keys) {
    const next = node[key];
    if (next === undefined || next === null || typeof next !== 'object') {
      throw new Error(
        `patch path ${op.path}: ${key} does not exist in ${target.kind}/${target.metadata.name}`,
      );
    }
    node = next as Record<string, unknown>;
  }
  if (op.op === 'remove') {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
    return;
  }
  if (op.op === 'replace' && !(last in node)) {
    throw new Error(`patch replace ${op.path}: nothing there in ${target.kind}/${target.metadata.name}`);
  }
  if (Array.isArray(node) && op.op === 'add')
    node.splice(last === '-' ? node.length : Number(last), 0, op.value);
  else node[last] = op.value;
}
