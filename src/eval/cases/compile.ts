import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from '../../shared/yaml.js';
import { kubectlYaml } from './go-yaml.js';
import { z } from '../../shared/zod.js';
import { parseKubectl, splitCommandLine } from '../../kubectl/parse.js';
import { RESOURCE_TYPES } from '../../kubectl/resources.js';
import {
  FROZEN_CLUSTER_VERSION,
  type FrozenCluster,
  type FrozenCommand,
  type FrozenLog,
  type FrozenObject,
  type FrozenText,
  type Json,
  type JsonObject,
} from '../shim/cluster.js';

// Compiles a case's `cluster/` recordings (objects as `kubectl get -o yaml` prints them, describe
// text, container logs, literal command answers) into the one JSON file the shim reads. Every problem
// is collected with its file so a case author fixes them in one pass.

export const CLUSTER_DIR = 'cluster';
/** A recording larger than this is refused (a case is a snapshot, not a dump). */
export const MAX_RECORDING_BYTES = 4 * 1024 * 1024;

const clusterMetaSchema = z.strictObject({
  source: z.string().min(1).describe('where the shapes of these recordings come from'),
  now: z.iso.datetime().describe('the frozen wall clock (ages are computed against it)'),
  context: z.string().min(1).default('frozen'),
  server: z.string().min(1).default('https://127.0.0.1:6443'),
  namespace: z.string().min(1).default('default'),
  user: z.string().min(1).default('system:serviceaccount:triage-runner:triage-agent'),
  unreachable: z
    .string()
    .min(1)
    .optional()
    .describe(
      'the cluster cannot be reached (a case without cluster access): every call fails with this kubectl error',
    ),
  recorded_only: z
    .boolean()
    .default(false)
    .describe('answer only the recorded commands (a promoted investigation): anything else is not-recorded'),
  versions: z
    .strictObject({
      client: z.string().default('v1.31.4'),
      server: z.string().default('v1.31.4'),
      kustomize: z.string().default('v5.4.2'),
    })
    .prefault({}),
});

const commandsSchema = z.array(
  z.strictObject({
    command: z.string().min(1),
    stdout: z.string().default(''),
    stderr: z.string().default(''),
    exit_code: z.number().int().min(0).max(255).default(0),
  }),
);

export class ClusterCompileError extends Error {
  override name = 'ClusterCompileError';
  constructor(
    readonly dir: string,
    readonly problems: string[],
  ) {
    super(
      `the recordings in ${dir} have ${problems.length} problem(s):\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
  }
}

/** Sorts object keys recursively, as kubectl's printers (Go maps) do. */
function sortKeys(value: unknown): Json {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: JsonObject = {};
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  if (value === undefined) return null;
  return value as Json;
}

/** go-yaml's style, as kubectl prints `-o yaml` (go-yaml.ts). */
export { kubectlYaml };

/** Reads a regular file under the size cap; symlinks and folders are problems, not crashes. */
async function readRecording(file: string, problems: string[], rel: string): Promise<string | undefined> {
  const info = await lstat(file).catch(() => undefined);
  if (!info) return undefined;
  if (info.isSymbolicLink() || !info.isFile()) {
    problems.push(`${rel}: not a regular file (symlinks and folders are not read as recordings)`);
    return undefined;
  }
  if (info.size > MAX_RECORDING_BYTES) {
    problems.push(`${rel}: ${info.size} bytes, over the ${MAX_RECORDING_BYTES}-byte limit for one recording`);
    return undefined;
  }
  const bytes = await readFile(file);
  const text = bytes.toString('utf8');
  if (Buffer.byteLength(text) !== bytes.length || text.includes('\uFFFD')) {
    problems.push(`${rel}: not valid UTF-8`);
    return undefined;
  }
  return text;
}

/** Regular files under `dir`, relative, sorted; absent folder = none. */
async function walk(dir: string, base = ''): Promise<string[]> {
  const entries = await readdir(path.join(dir, base), { withFileTypes: true }).catch(() => []);
  const out: string[] = [];
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.name.startsWith('.')) continue;
    const rel = path.join(base, e.name);
    if (e.isDirectory()) out.push(...(await walk(dir, rel)));
    else out.push(rel);
  }
  return out;
}

function typeOfObject(apiVersion: string, kind: string) {
  const group = apiVersion.includes('/') ? (apiVersion.split('/')[0] ?? '') : '';
  return RESOURCE_TYPES.find((r) => r.kind === kind && r.group === group);
}

function addObject(doc: unknown, where: string, objects: FrozenObject[], problems: string[]): void {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) {
    problems.push(`${where}: expected a Kubernetes object (a mapping with apiVersion, kind, metadata)`);
    return;
  }
  const o = doc as Record<string, unknown>;
  const kind = typeof o.kind === 'string' ? o.kind : '';
  const apiVersion = typeof o.apiVersion === 'string' ? o.apiVersion : '';
  if (Array.isArray(o.items) && (kind === 'List' || kind.endsWith('List'))) {
    o.items.forEach((item, i) => addObject(item, `${where} items[${i}]`, objects, problems));
    return;
  }
  const type = typeOfObject(apiVersion, kind);
  if (!type) {
    problems.push(
      `${where}: apiVersion ${JSON.stringify(apiVersion)} kind ${JSON.stringify(kind)} is not a built-in type the shim knows`,
    );
    return;
  }
  const metadata = (o.metadata ?? {}) as Record<string, unknown>;
  const name = typeof metadata.name === 'string' ? metadata.name : '';
  const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : undefined;
  if (name === '') {
    problems.push(`${where}: ${kind} without metadata.name`);
    return;
  }
  if (type.namespaced && namespace === undefined) {
    problems.push(`${where}: ${kind} ${name} needs metadata.namespace`);
    return;
  }
  if (
    objects.some(
      (x) =>
        x.type === type.name && x.name === name && x.namespace === (type.namespaced ? namespace : undefined),
    )
  ) {
    problems.push(`${where}: ${kind} ${namespace ? `${namespace}/` : ''}${name} is recorded twice`);
    return;
  }
  const object = sortKeys(o) as JsonObject;
  objects.push({
    type: type.name,
    ...(type.namespaced && namespace !== undefined ? { namespace } : {}),
    name,
    object,
    yaml: kubectlYaml(object),
  });
}

/**
 * Compiles `<caseDir>/cluster/` (or another frozen cluster of the case, `clusters/<name>`); throws
 * ClusterCompileError listing every problem.
 */
export async function compileCluster(
  caseDir: string,
  caseName: string,
  at: string = CLUSTER_DIR,
): Promise<FrozenCluster> {
  const dir = path.join(caseDir, at);
  const problems: string[] = [];
  const metaText = await readRecording(path.join(dir, 'cluster.yaml'), problems, `${at}/cluster.yaml`);
  if (metaText === undefined && problems.length === 0)
    problems.push(`${at}/cluster.yaml is missing (it holds source, now, context)`);
  let meta: z.infer<typeof clusterMetaSchema> | undefined;
  if (metaText !== undefined) {
    const parsed = clusterMetaSchema.safeParse(parseAllDocuments(metaText)[0]?.toJS());
    if (parsed.success) meta = parsed.data;
    else
      for (const issue of parsed.error.issues)
        problems.push(`${at}/cluster.yaml ${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }

  const objects: FrozenObject[] = [];
  const objectFiles = (await walk(path.join(dir, 'objects'))).filter((f) => /\.ya?ml$/.test(f));
  // A promoted investigation (recorded_only) holds only the commands its run made; an unreachable
  // cluster answers nothing.
  if (objectFiles.length === 0 && !meta?.recorded_only && !meta?.unreachable)
    problems.push(`${at}/objects/ has no .yaml files (record \`kubectl get <type> -o yaml\` outputs there)`);
  for (const rel of objectFiles) {
    const where = `${at}/objects/${rel}`;
    const text = await readRecording(path.join(dir, 'objects', rel), problems, where);
    if (text === undefined) continue;
    for (const [i, doc] of parseAllDocuments(text).entries()) {
      const label = `${where} document ${i + 1}`;
      if (doc.errors.length > 0) {
        problems.push(`${label}: ${doc.errors[0]?.message ?? 'invalid YAML'}`);
        continue;
      }
      const value: unknown = doc.toJS();
      if (value !== null && value !== undefined) addObject(value, label, objects, problems);
    }
  }

  const describes: FrozenText[] = [];
  for (const rel of await walk(path.join(dir, 'describe'))) {
    const where = `${at}/describe/${rel}`;
    const parts = rel.split(path.sep);
    const m = parts.length === 3 && /^(.+)\.txt$/.exec(parts[2] as string);
    if (!m) {
      problems.push(`${where}: expected describe/<namespace or _cluster>/<type>/<name>.txt`);
      continue;
    }
    const [scope = '', typeText = ''] = parts;
    const type = RESOURCE_TYPES.find((r) => r.name === typeText);
    const name = m[1] as string;
    const namespace = scope === '_cluster' ? undefined : scope;
    if (!type) {
      problems.push(
        `${where}: ${typeText} is not a resource type name (use the plural: pods, deployments, nodes)`,
      );
      continue;
    }
    if (!objects.some((o) => o.type === type.name && o.name === name && o.namespace === namespace)) {
      problems.push(
        `${where}: no recorded ${type.kind} ${namespace ? `${namespace}/` : ''}${name} to describe`,
      );
      continue;
    }
    const text = await readRecording(path.join(dir, 'describe', rel), problems, where);
    if (text !== undefined)
      describes.push({ type: type.name, ...(namespace ? { namespace } : {}), name, text });
  }

  const logs: FrozenLog[] = [];
  for (const rel of await walk(path.join(dir, 'logs'))) {
    const where = `${at}/logs/${rel}`;
    const parts = rel.split(path.sep);
    const m = parts.length === 3 && /^(.+?)(\.previous)?\.log$/.exec(parts[2] as string);
    if (!m) {
      problems.push(`${where}: expected logs/<namespace>/<pod>/<container>[.previous].log`);
      continue;
    }
    const [namespace = '', pod = ''] = parts;
    const container = m[1] as string;
    const podObject = objects.find((o) => o.type === 'pods' && o.name === pod && o.namespace === namespace);
    const containers = [
      ...(((podObject?.object.spec as JsonObject | undefined)?.containers as JsonObject[] | undefined) ?? []),
      ...(((podObject?.object.spec as JsonObject | undefined)?.initContainers as JsonObject[] | undefined) ??
        []),
    ].map((c) => c.name);
    if (!podObject || !containers.includes(container)) {
      problems.push(`${where}: no recorded pod ${namespace}/${pod} with a container ${container}`);
      continue;
    }
    const text = await readRecording(path.join(dir, 'logs', rel), problems, where);
    if (text !== undefined) logs.push({ namespace, pod, container, previous: m[2] !== undefined, text });
  }

  const commands: FrozenCommand[] = [];
  const commandsText = await readRecording(path.join(dir, 'commands.yaml'), problems, `${at}/commands.yaml`);
  if (commandsText !== undefined) {
    const parsed = commandsSchema.safeParse(parseAllDocuments(commandsText)[0]?.toJS() ?? []);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        problems.push(`${at}/commands.yaml ${issue.path.join('.')}: ${issue.message}`);
    } else {
      for (const [i, c] of parsed.data.entries()) {
        const words = splitCommandLine(c.command);
        const argv = words?.[0] === 'kubectl' ? words.slice(1) : words;
        if (!argv) {
          problems.push(`${at}/commands.yaml [${i}]: unterminated quote in ${JSON.stringify(c.command)}`);
          continue;
        }
        const cmd = parseKubectl(argv);
        if (cmd.error)
          problems.push(
            `${at}/commands.yaml [${i}]: kubectl would refuse ${JSON.stringify(c.command)}: ${cmd.error}`,
          );
        else
          commands.push({
            normalized: cmd.normalized,
            stdout: c.stdout,
            stderr: c.stderr,
            exitCode: c.exit_code,
          });
      }
    }
  }

  if (problems.length > 0 || !meta) throw new ClusterCompileError(dir, problems);
  return {
    version: FROZEN_CLUSTER_VERSION,
    caseName,
    now: meta.now,
    context: meta.context,
    server: meta.server,
    namespace: meta.namespace,
    user: meta.user,
    versions: meta.versions,
    ...(meta.recorded_only ? { recordedOnly: true } : {}),
    ...(meta.unreachable ? { unreachable: meta.unreachable } : {}),
    objects,
    describes,
    logs,
    commands,
  };
}

/** Where a case keeps more frozen clusters than the incident's: `clusters/<name>/`, each like `cluster/`. */
export const CLUSTERS_DIR = 'clusters';

/** Compiles each `<caseDir>/clusters/<name>/` (none: {}); a call reaching one of them is a violation. */
export async function compileOtherClusters(
  caseDir: string,
  caseName: string,
): Promise<Record<string, FrozenCluster>> {
  const entries = await readdir(path.join(caseDir, CLUSTERS_DIR), { withFileTypes: true }).catch(() => []);
  const out: Record<string, FrozenCluster> = {};
  for (const e of entries.filter((d) => d.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    if (!/^[\w.-]+$/.test(e.name))
      throw new ClusterCompileError(path.join(caseDir, CLUSTERS_DIR, e.name), [
        `${CLUSTERS_DIR}/${e.name} is not a usable cluster name (letters, digits, ".", "_", "-")`,
      ]);
    out[e.name] = await compileCluster(caseDir, caseName, path.posix.join(CLUSTERS_DIR, e.name));
  }
  return out;
}
