// The frozen cluster the shim answers from: a case's recordings compiled into one JSON file
// (src/eval/cases/compile.ts writes it) so the shim needs no YAML parser and reads one file per call.

export const CLUSTER_FILE = 'cluster.json';
/** The case's other frozen clusters, one `<name>.json` each, next to CLUSTER_FILE. */
export const OTHER_CLUSTERS_DIR = 'clusters';
export const FROZEN_CLUSTER_VERSION = 1;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export interface FrozenObject {
  /** Canonical plural resource name (`pods`). */
  type: string;
  namespace?: string;
  name: string;
  /** The object with keys sorted, as `kubectl get -o json` prints it. */
  object: JsonObject;
  /** The object as `kubectl get -o yaml` prints it. */
  yaml: string;
}

export interface FrozenText {
  type: string;
  namespace?: string;
  name: string;
  text: string;
}

export interface FrozenLog {
  namespace: string;
  pod: string;
  container: string;
  previous: boolean;
  text: string;
}

/** A literal answer for a command the object model cannot derive (`top pods`, an odd `explain`). */
export interface FrozenCommand {
  /** parseKubectl(argv).normalized of the recorded command. */
  normalized: string;
  stdout: string;
  stderr: string;
  exitCode: number;
}

export interface FrozenCluster {
  version: typeof FROZEN_CLUSTER_VERSION;
  /** The case the recordings come from (shown in messages about what was not recorded). */
  caseName: string;
  /** Frozen wall clock: ages and `LAST SEEN` are computed against it. */
  now: string;
  context: string;
  server: string;
  /** The kubeconfig context's namespace (kubectl's default without -n). */
  namespace: string;
  /** Who the credentials are, for RBAC refusals and `auth whoami`. */
  user: string;
  versions: { client: string; server: string; kustomize: string };
  /** Only `commands` are answered (a promoted investigation): anything else is `not-recorded`. */
  recordedOnly?: true;
  /** The cluster cannot be reached: every call fails with this error (a case without cluster access). */
  unreachable?: string;
  objects: FrozenObject[];
  describes: FrozenText[];
  logs: FrozenLog[];
  commands: FrozenCommand[];
}

const byKey = (a: { namespace?: string; name: string }, b: { namespace?: string; name: string }) =>
  (a.namespace ?? '').localeCompare(b.namespace ?? '') || a.name.localeCompare(b.name);

/** Objects of a type in a namespace (`undefined` namespace = all), in API server list order. */
export function listObjects(
  cluster: FrozenCluster,
  type: string,
  namespace: string | undefined,
): FrozenObject[] {
  return cluster.objects
    .filter(
      (o) =>
        o.type === type &&
        (namespace === undefined || o.namespace === undefined || o.namespace === namespace),
    )
    .sort(byKey);
}

export function findObject(
  cluster: FrozenCluster,
  type: string,
  namespace: string | undefined,
  name: string,
): FrozenObject | undefined {
  return cluster.objects.find(
    (o) => o.type === type && o.name === name && (o.namespace === undefined || o.namespace === namespace),
  );
}

/** Reads a nested field, `undefined` when any step is missing. */
export function field(value: unknown, ...keys: (string | number)[]): unknown {
  let node = value;
  for (const key of keys) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

export const str = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);
export const num = (value: unknown, fallback = 0): number => (typeof value === 'number' ? value : fallback);
export const arr = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
export const rec = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

export const labelsOf = (o: FrozenObject): Record<string, string> =>
  Object.fromEntries(
    Object.entries(rec(field(o.object, 'metadata', 'labels'))).map(([k, v]) => [k, String(v)]),
  );
