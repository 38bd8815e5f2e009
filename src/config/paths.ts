import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from './schema.js';

// Where a relative path in the configuration points, by where it was written:
//   in a config file               -> that file's folder (the file and what it names move together)
//   in an environment variable/flag -> the working directory (as a shell user typed it)
//   a built-in default              -> the package root, which ships configs/ and agent-home/
// So `context` run from any folder reads the shipped prompts and uses the one skills cache instead of
// creating ./agent-home/skills wherever it was started. The one exception is the workspaces root: the
// incidents are the user's, not the package's, so its default (./incidents) is where the command runs.

/** The package root (holds package.json, configs/, agent-home/): two levels above this file in src/ and dist/. */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

type RawConfig = Record<string, unknown>;

/** Keys holding a path (dotted). */
export const PATH_KEYS: readonly string[][] = [
  ['workspaces_root'],
  ['skills', 'cache_dir'],
  ['personas_dir'],
  ['briefs_dir'],
  ['boot_file'],
  ['system_prompt_file'],
  ['user_prompt_file'],
  ['kubeconfig'],
  ['audit', 'key_file'],
];

/** Keys whose built-in default is relative to the working directory, not the package root. */
const CWD_DEFAULTS: readonly string[][] = [['workspaces_root']];

export interface PathBases {
  cwd: string;
  /** The config file's folder, when a file was read. */
  fileDir?: string;
  packageRoot: string;
}

export interface ConfigLayers {
  file: RawConfig;
  env: RawConfig;
  flags: RawConfig;
}

export function getIn(source: unknown, keyPath: readonly (string | number)[]): unknown {
  let node = source;
  for (const part of keyPath) {
    if (!node || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[String(part)];
  }
  return node;
}

/** The folder a value at `keyPath` is relative to: the layer that supplied it decides. */
export function baseFor(keyPath: readonly string[], layers: ConfigLayers, bases: PathBases): string {
  if (getIn(layers.flags, keyPath) !== undefined || getIn(layers.env, keyPath) !== undefined)
    return bases.cwd;
  if (getIn(layers.file, keyPath) !== undefined) return bases.fileDir ?? bases.cwd;
  if (CWD_DEFAULTS.some((k) => k.join('.') === keyPath.join('.'))) return bases.cwd;
  return bases.packageRoot;
}

/** Resolves every relative path in `config` (path keys, local skills sources, secret files). */
export function resolvePaths(config: Config, layers: ConfigLayers, bases: PathBases): Config {
  const out = structuredClone(config);
  const raw = out as unknown as RawConfig;
  for (const keyPath of PATH_KEYS) {
    const value = getIn(raw, keyPath);
    if (typeof value !== 'string') continue;
    setPath(raw, keyPath, path.resolve(baseFor(keyPath, layers, bases), value));
  }
  const sourcesBase = baseFor(['skills', 'sources'], layers, bases);
  for (const source of out.skills.sources) {
    if (source.path) source.path = path.resolve(sourcesBase, source.path);
  }
  for (const [name, entry] of Object.entries(out.clusters ?? {})) {
    if (entry.kubeconfig)
      entry.kubeconfig = path.resolve(baseFor(['clusters', name], layers, bases), entry.kubeconfig);
  }
  for (const [name, source] of Object.entries(out.secrets)) {
    if (source.file) source.file = path.resolve(baseFor(['secrets', name], layers, bases), source.file);
  }
  return out;
}

function setPath(target: RawConfig, keyPath: readonly string[], value: string): void {
  const parent = getIn(target, keyPath.slice(0, -1)) as RawConfig | undefined;
  const last = keyPath[keyPath.length - 1];
  if (parent && last !== undefined) parent[last] = value;
}
