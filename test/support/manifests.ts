// deploy/kubernetes rendered by the real `kubectl kustomize` (installed by .ci/install-test-tools.sh),
// the objects it prints validated against the Kubernetes OpenAPI schemas compiled into the
// kubernetes-models packages (offline), and the daemon's configuration as it loads inside the pod.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { loadConfig } from '../../src/config/index.js';
import type { Config } from '../../src/config/schema.js';
import { buildJob } from '../../src/engines/kubernetes/index.js';
import type { RunSpec } from '../../src/engines/types.js';
import { requireBinary } from './alertmanager.js';
import { REPO_ROOT } from './runs.js';

export type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
  [k: string]: unknown;
};
/** A rendered object, read freely in assertions. */
export type Obj = K8sObject & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export const KUSTOMIZE_ROOT = path.join(REPO_ROOT, 'deploy/kubernetes');
/** The oldest kustomize the manifests are written for (kubectl 1.27 and later bundle v5). */
const MIN_KUSTOMIZE_MAJOR = 5;

/** The kubectl to render with: TRIAGE_TEST_KUBECTL, else the one on PATH; undefined (skip) outside CI. */
export const KUBECTL: string | undefined = process.env.TRIAGE_TEST_KUBECTL ?? requireBinary(['kubectl']);

let checkedVersion: string | undefined;

/** The kustomize version the kubectl bundles; throws when it is too old to render these manifests. */
export function kustomizeVersion(kubectl: string = needKubectl()): string {
  if (checkedVersion !== undefined) return checkedVersion;
  const out = JSON.parse(
    execFileSync(kubectl, ['version', '--client', '-o', 'json'], { encoding: 'utf8' }),
  ) as {
    kustomizeVersion?: string;
  };
  const version = out.kustomizeVersion ?? 'unknown';
  const major = Number(/^v?(\d+)\./.exec(version)?.[1] ?? 0);
  if (major < MIN_KUSTOMIZE_MAJOR)
    throw new Error(
      `${kubectl} bundles kustomize ${version}; deploy/kubernetes needs kustomize v${MIN_KUSTOMIZE_MAJOR} or later (kubectl 1.27+): install a current kubectl (bash .ci/install-test-tools.sh) or point TRIAGE_TEST_KUBECTL at one`,
    );
  checkedVersion = version;
  return version;
}

function needKubectl(): string {
  if (!KUBECTL) throw new Error('kubectl not found on PATH: run bash .ci/install-test-tools.sh');
  return KUBECTL;
}

/** Parses every YAML document of a text into objects (skipping empty documents). */
export function parseManifests(text: string, what: string): Obj[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${what}: ${doc.errors.map((e) => e.message).join('; ')}`);
      return doc.toJS() as Obj | null;
    })
    .filter((o): o is Obj => o !== null);
}

/** The objects of a YAML file under deploy/kubernetes (or an absolute path). */
export function readManifests(file: string): Obj[] {
  const full = path.resolve(KUSTOMIZE_ROOT, file);
  return parseManifests(readFileSync(full, 'utf8'), full);
}

const renderedCache = new Map<string, Obj[]>();

/** `kubectl kustomize <dir>` (a folder under deploy/kubernetes, or absolute), parsed; cached per folder. */
export function render(dir: string): Obj[] {
  const full = path.resolve(KUSTOMIZE_ROOT, dir);
  const cached = renderedCache.get(full);
  if (cached) return structuredClone(cached);
  const kubectl = needKubectl();
  kustomizeVersion(kubectl);
  let out: string;
  try {
    out = execFileSync(kubectl, ['kustomize', full], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`kubectl kustomize ${path.relative(REPO_ROOT, full)} failed: ${stderr.trim()}`, {
      cause: err,
    });
  }
  const objects = parseManifests(out, `kubectl kustomize ${full}`);
  renderedCache.set(full, objects);
  return structuredClone(objects);
}

/**
 * Renders an overlay of an operator's own, written to a temp folder outside the repository (as theirs
 * would be): `resources` and `components` are folders under deploy/kubernetes, `extra` more fields.
 */
export function renderOverlay(options: {
  resources: string[];
  components?: string[];
  extra?: Record<string, unknown>;
}): Obj[] {
  const dir = mkdtempSync(path.join(tmpdir(), 'overlay-'));
  try {
    // kustomize accepts only relative paths to other kustomizations.
    const rel = (p: string) => path.relative(dir, path.resolve(KUSTOMIZE_ROOT, p));
    const kustomization = {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: options.resources.map(rel),
      ...(options.components ? { components: options.components.map(rel) } : {}),
      ...options.extra,
    };
    writeFileSync(path.join(dir, 'kustomization.yaml'), stringify(kustomization));
    return render(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

type ModelClass = new (data: unknown) => { validate(): void };

/** The kubernetes-models class for an object's apiVersion + kind; an unknown kind throws. */
async function modelFor(o: K8sObject): Promise<ModelClass> {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  const specifier =
    group === 'monitoring.coreos.com'
      ? `@kubernetes-models/prometheus-operator/${group}/${version}/${o.kind}`
      : `kubernetes-models/${group ? `${group}/` : ''}${version}/${o.kind}`;
  const mod = (await import(specifier)) as Record<string, ModelClass>;
  const model = mod[o.kind];
  if (!model) throw new Error(`no schema model for ${o.apiVersion} ${o.kind} (${specifier})`);
  return model;
}

/** Every schema problem of the objects, as `Kind/name: message`; empty when all are valid. */
export async function schemaProblems(objects: readonly K8sObject[]): Promise<string[]> {
  const problems: string[] = [];
  for (const o of objects) {
    const Model = await modelFor(o);
    try {
      new Model(o).validate();
    } catch (err) {
      problems.push(`${o.kind}/${o.metadata.name}: ${(err as Error).message}`);
    }
  }
  return problems;
}

/** The one object of a kind (and name) in a rendering; throws naming what is missing. */
export function find(objects: readonly Obj[], kind: string, name?: string): Obj {
  const o = objects.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  if (!o) throw new Error(`no ${kind}${name ? `/${name}` : ''} in the rendering`);
  return o;
}

/** The daemon's Deployment, pod spec and container in a rendering. */
export function daemonOf(objects: readonly Obj[]): { deployment: Obj; pod: Obj; container: Obj } {
  const deployment = find(objects, 'Deployment', 'triage-runner');
  const pod = deployment.spec.template.spec as Obj;
  const container = (pod.containers as Obj[]).find((c) => c.name === 'daemon');
  if (!container) throw new Error('the Deployment has no container named daemon');
  return { deployment, pod, container };
}

/**
 * The daemon container's environment as the kubelet would give it: literal values, the namespace from
 * the downward API, and for a Secret key a stand-in value naming it (secrets are not configuration).
 */
export function podEnv(objects: readonly Obj[]): Record<string, string> {
  const { deployment, container } = daemonOf(objects);
  const env: Record<string, string> = {};
  for (const e of container.env as Obj[]) {
    if (typeof e.value === 'string') env[e.name] = e.value;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace')
      env[e.name] = deployment.metadata.namespace!;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = 'triage-runner-pod';
    else if (e.valueFrom?.secretKeyRef) env[e.name] = `<secret ${e.valueFrom.secretKeyRef.key}>`;
  }
  return env;
}

/** The daemon's configuration as it loads in the pod: the ConfigMap's config.yaml, then the environment. */
export function podConfig(objects: readonly Obj[]): Config {
  const configMap = find(objects, 'ConfigMap');
  const dir = mkdtempSync(path.join(tmpdir(), 'pod-config-'));
  try {
    const file = path.join(dir, 'config.yaml');
    writeFileSync(file, configMap.data['config.yaml'] as string);
    return loadConfig({ file, env: podEnv(objects), cwd: '/' }).config;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The Job the kubernetes engine builds for a run under `config`, with kind and apiVersion set. */
export function agentJob(config: Config, spec: Partial<RunSpec> = {}): Obj {
  const run = {
    runId: 'r1',
    incidentId: 'i1',
    labels: {},
    image: config.agent.image,
    command: 'claude',
    args: [],
    env: {},
    secretEnv: {},
    mounts: [],
    tmpfs: [],
    stdin: '',
    workdir: '/workspace',
    ...spec,
  } as unknown as RunSpec;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    ...buildJob(config, run, {
      jobName: 'triage-r1',
      bootstrap: '/* the pod programs */',
      daemonUrl: config.kubernetes.broker.url ?? 'http://triage-runner:8081',
    }),
  } as Obj;
}
