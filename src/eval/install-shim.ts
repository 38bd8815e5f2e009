import { chmod, copyFile, mkdir, readdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { shellQuote } from '../kubectl/parse.js';
import { CLUSTER_FILE, OTHER_CLUSTERS_DIR, type FrozenCluster } from './shim/cluster.js';

// Writes a self-contained frozen-cluster `kubectl` into a folder that eval puts first on PATH (the
// agent's and the triage script's): cluster.json, a `kubectl` sh wrapper and, when triage-runner runs
// compiled, a copy of the shim's compiled modules, so the folder also works mounted read-only into a
// container that has `node`. From sources (tests, tsx) the wrapper runs the TypeScript through tsx.

const HERE = path.dirname(fileURLToPath(import.meta.url));
const COMPILED = import.meta.url.endsWith('.js');

/** The code folders the shim needs, relative to src/ (or dist/): its own and the shared parser. */
const CODE_DIRS = ['kubectl', path.join('eval', 'shim')];
/** Single files from other folders: the verdicts (read, mutate, …) the shim answers by. */
const CODE_FILES = [path.join('kubectl', 'policy', 'classify.js')];

export interface ShimInstall {
  dir: string;
  /** The wrapper, `<dir>/kubectl`. */
  kubectl: string;
}

async function copyCompiled(dir: string): Promise<string> {
  const root = path.resolve(HERE, '..');
  const lib = path.join(dir, 'lib');
  for (const rel of CODE_DIRS) {
    await mkdir(path.join(lib, rel), { recursive: true });
    for (const file of await readdir(path.join(root, rel))) {
      if (file.endsWith('.js')) await copyFile(path.join(root, rel, file), path.join(lib, rel, file));
    }
  }
  for (const rel of CODE_FILES) {
    await mkdir(path.join(lib, path.dirname(rel)), { recursive: true });
    await copyFile(path.join(root, rel), path.join(lib, rel));
  }
  // The copies are ES modules; without this file node would read them as CommonJS.
  await writeFile(path.join(lib, 'package.json'), '{ "type": "module" }\n');
  return `"$here/lib/eval/shim/bin.js"`;
}

function sourceEntry(): string {
  const tsx = createRequire(import.meta.url).resolve('tsx');
  return `--import ${shellQuote(tsx)} ${shellQuote(path.join(HERE, 'shim', 'bin.ts'))}`;
}

/** Installs the shim for one frozen cluster into `dir` (created; must not hold another install). */
export async function installShim(
  dir: string,
  cluster: FrozenCluster,
  nodePath: string = process.execPath,
  /** The case's other frozen clusters by name: a call whose context names one is answered by it, as a violation. */
  others: Record<string, FrozenCluster> = {},
): Promise<ShimInstall> {
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, CLUSTER_FILE), JSON.stringify(cluster));
  if (Object.keys(others).length > 0) await mkdir(path.join(dir, OTHER_CLUSTERS_DIR));
  for (const [name, other] of Object.entries(others))
    await writeFile(path.join(dir, OTHER_CLUSTERS_DIR, `${name}.json`), JSON.stringify(other));
  const entry = COMPILED ? await copyCompiled(dir) : sourceEntry();
  const wrapper = [
    '#!/bin/sh',
    `# Frozen-cluster kubectl for eval case ${cluster.caseName.replace(/[^\w.-]/g, '_')}: answers read commands from`,
    '# cluster.json next to this file, refuses the rest, and records every call in $TRIAGE_NOTES_DIR (else $TRIAGE_RUN_DIR).',
    'here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)',
    `node=${shellQuote(nodePath)}`,
    '[ -x "$node" ] || node=node',
    `TRIAGE_KUBECTL_SHIM_DIR="$here" exec "$node" ${entry} "$@"`,
    '',
  ].join('\n');
  const kubectl = path.join(dir, 'kubectl');
  await writeFile(kubectl, wrapper);
  await chmod(kubectl, 0o755);
  return { dir, kubectl };
}
