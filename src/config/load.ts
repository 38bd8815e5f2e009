import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { LineCounter, parseDocument, isMap, isSeq, type Document } from '../shared/yaml.js';
import type { z } from '../shared/zod.js';
import { looksSecret } from '../log/redact.js';
import { configKeys, envName, keysAt, type ConfigKey } from './keys.js';
import { getIn, PACKAGE_ROOT, resolvePaths, type ConfigLayers } from './paths.js';
import { configSchema, type Config } from './schema.js';

/** One thing wrong with the configuration, located as precisely as we can. */
export interface ConfigProblem {
  /** Dotted key path, e.g. `scheduling.max_concurrent`. */
  path: string;
  message: string;
  /** Where it came from: a file (with line), an environment variable, or a flag. */
  source?: string;
}

export class ConfigError extends Error {
  constructor(
    readonly problems: ConfigProblem[],
    readonly file?: string,
  ) {
    super(
      `configuration has ${problems.length} problem${problems.length === 1 ? '' : 's'}` +
        (file ? ` (${file})` : '') +
        ':\n' +
        problems.map(formatProblem).join('\n'),
    );
    this.name = 'ConfigError';
  }
}

export function formatProblem(p: ConfigProblem): string {
  return `  - ${p.path || '(root)'}: ${p.message}${p.source ? ` [${p.source}]` : ''}`;
}

export type RawConfig = Record<string, unknown>;
export type Env = Record<string, string | undefined>;

export interface LoadOptions {
  /** Explicit --config path; when absent, configs/triage-runner.yaml under cwd is used if present. */
  file?: string;
  env?: Env;
  /** Command-line overrides as a nested object of YAML keys. */
  flags?: RawConfig;
  cwd?: string;
  /** Package root: built-in default paths resolve against it (default: this package's root). */
  packageRoot?: string;
}

export interface LoadedConfig {
  config: Config;
  /** The file that was read, if any. */
  file?: string;
}

/** Everything known about a configuration, problems included (what validate-config reports). */
export interface ConfigInspection {
  /**
   * The configuration with built-in defaults standing in for every key that has a problem, so the
   * files it names can still be checked: report everything at once.
   */
  config: Config;
  file?: string;
  problems: ConfigProblem[];
  /** Dotted paths of keys whose written value was replaced by the default because it had a problem. */
  replaced: Set<string>;
  /** What each layer set (file, environment, flags), before merging. */
  layers: ConfigLayers;
}

export const DEFAULT_CONFIG_FILE = 'configs/triage-runner.yaml';
const MAX_CONFIG_BYTES = 1024 * 1024;
/**
 * A configuration is parsed once per process: zod's compiled fast path (a generated function per
 * object schema) costs more to build than it saves on one parse, about 30 ms against 7 ms.
 */
const PARSED_ONCE = { jitless: true } as const;

/** Loads defaults < YAML file < environment < flags, validates once, resolves paths. Throws ConfigError. */
export function loadConfig(options: LoadOptions = {}): LoadedConfig {
  const inspection = inspectConfig(options);
  if (inspection.problems.length > 0) throw new ConfigError(inspection.problems, inspection.file);
  return inspection.file
    ? { config: inspection.config, file: inspection.file }
    : { config: inspection.config };
}

/** Like loadConfig, but returns the problems with a best-effort configuration instead of throwing. */
export function inspectConfig(options: LoadOptions = {}): ConfigInspection {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const given =
    options.file ?? (existsSync(path.join(cwd, DEFAULT_CONFIG_FILE)) ? DEFAULT_CONFIG_FILE : undefined);
  const file = given === undefined ? undefined : path.resolve(cwd, given);
  const problems: ConfigProblem[] = [];

  let fileLayer: RawConfig = {};
  let doc: ParsedYaml | undefined;
  if (file) {
    doc = readYamlConfig(file);
    problems.push(...doc.problems);
    fileLayer = doc.value;
  }
  const flags = options.flags ?? {};
  const envLayer = envOverrides(env, problems);
  const merged = dropNulls(deepMerge(deepMerge(fileLayer, envLayer), flags));

  const replaced = new Set<string>();
  let candidate = merged;
  let parsed = configSchema.safeParse(candidate, PARSED_ONCE);
  if (!parsed.success) problems.push(...zodProblems(parsed.error, merged, doc, envLayer, flags));
  // Drop what failed and parse again (defaults fill in), a few rounds: nested problems surface late.
  for (let round = 0; !parsed.success && round < 5; round += 1) {
    candidate = structuredClone(candidate);
    for (const issue of parsed.error.issues) {
      const at = issue.path as (string | number)[];
      const keyPath = issue.code === 'unrecognized_keys' ? issue.keys.map((k) => [...at, k]) : [at];
      for (const p of keyPath) {
        // A problem with an array element replaces the whole array (skills.sources, subjects).
        const cut = p.findIndex((part) => typeof part === 'number');
        const drop = cut >= 0 ? p.slice(0, cut) : p;
        deleteIn(candidate, drop);
        replaced.add(drop.join('.'));
      }
    }
    parsed = configSchema.safeParse(candidate, PARSED_ONCE);
    if (!parsed.success) {
      // A refinement over an object runs only once its fields are valid: report what is new.
      const known = new Set(problems.map((p) => p.path));
      for (const p of zodProblems(parsed.error, merged, doc, envLayer, flags))
        if (!known.has(p.path)) problems.push(p);
    }
  }
  const data = parsed.success ? parsed.data : configSchema.parse({}, PARSED_ONCE);
  const layers: ConfigLayers = { file: fileLayer, env: envLayer, flags };
  const config = resolvePaths(data, layers, {
    cwd,
    ...(file ? { fileDir: path.dirname(file) } : {}),
    packageRoot: options.packageRoot ?? PACKAGE_ROOT,
  });
  return { config, ...(file ? { file } : {}), problems, replaced, layers };
}

function deleteIn(target: RawConfig, keyPath: (string | number)[]): void {
  if (keyPath.length === 0) {
    for (const k of Object.keys(target)) delete target[k];
    return;
  }
  const parent = getIn(target, keyPath.slice(0, -1));
  const last = keyPath[keyPath.length - 1];
  if (parent && typeof parent === 'object' && last !== undefined) delete (parent as RawConfig)[String(last)];
}

interface ParsedYaml {
  value: RawConfig;
  problems: ConfigProblem[];
  doc?: Document;
  lines?: LineCounter;
  file: string;
}

/** Reads a YAML config file; every failure becomes a problem instead of an exception. */
export function readYamlConfig(file: string): ParsedYaml {
  const where = (line?: number) => (line ? `${file}:${line}` : file);
  let text: string;
  try {
    const st = statSync(file);
    if (!st.isFile())
      return { value: {}, file, problems: [{ path: '', message: 'is not a regular file', source: file }] };
    if (st.size > MAX_CONFIG_BYTES)
      return {
        value: {},
        file,
        problems: [
          { path: '', message: `is ${st.size} bytes; the limit is ${MAX_CONFIG_BYTES}`, source: file },
        ],
      };
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message =
      code === 'ENOENT'
        ? 'file not found; pass an existing file with --config'
        : `cannot be read (${code ?? String(err)})`;
    return { value: {}, file, problems: [{ path: '', message, source: file }] };
  }
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      value: {},
      file,
      doc,
      lines,
      problems: doc.errors.map((e) => ({
        path: '',
        message: `YAML syntax error: ${e.message.split('\n')[0]}`,
        source: where(e.linePos?.[0]?.line),
      })),
    };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (err) {
    // An alias bomb ("Excessive alias count") or a nesting too deep to expand.
    const message = `rejected by the YAML parser: ${err instanceof Error ? err.message : String(err)}; fix the file`;
    return { value: {}, file, doc, lines, problems: [{ path: '', message, source: file }] };
  }
  if (value === null || value === undefined) return { value: {}, file, doc, lines, problems: [] };
  if (typeof value !== 'object' || Array.isArray(value)) {
    return {
      value: {},
      file,
      doc,
      lines,
      problems: [{ path: '', message: 'expected a mapping of keys at the top level', source: file }],
    };
  }
  return { value: value as RawConfig, file, doc, lines, problems: [] };
}

function lineOf(doc: ParsedYaml | undefined, keyPath: (string | number)[]): string | undefined {
  if (!doc?.doc || !doc.lines) return undefined;
  // Walk the document to the deepest existing node on the path.
  let node: unknown = doc.doc.contents;
  let offset: number | undefined;
  for (const part of keyPath) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === part);
      if (!pair) break;
      offset = (pair.key as { range?: [number, number, number] }).range?.[0];
      node = pair.value;
    } else if (isSeq(node) && typeof part === 'number') {
      node = node.items[part];
      offset = (node as { range?: [number, number, number] } | undefined)?.range?.[0];
    } else break;
  }
  if (offset === undefined) return doc.file;
  return `${doc.file}:${doc.lines.linePos(offset).line}`;
}

const SKILLS_ENV: Record<string, string[]> = {
  SKILLS_CACHE_DIR: ['skills', 'cache_dir'],
  SKILLS_DISABLE_TRIAGE_PRELOAD: ['skills', 'disable_triage_preload'],
};

/** Reads TRIAGE_RUNNER_* (and the skills cache's own SKILLS_*) variables into a nested override object. */
export function envOverrides(env: Env, problems: ConfigProblem[] = []): RawConfig {
  const out: RawConfig = {};
  const keys = configKeys();
  const apply = (key: ConfigKey, name: string, raw: string) => {
    const value = coerce(key, raw);
    if (value instanceof Error)
      problems.push({ path: key.path.join('.'), message: value.message, source: `env ${name}` });
    else setIn(out, key.path, value);
  };
  for (const [name, keyPath] of Object.entries(SKILLS_ENV)) {
    const raw = env[name];
    const key = keys.find((k) => k.path.join('.') === keyPath.join('.'));
    if (raw !== undefined && raw !== '' && key) apply(key, name, raw);
  }
  for (const key of keys) {
    const name = envName(key.path);
    const raw = env[name];
    if (raw !== undefined && raw !== '') apply(key, name, raw);
  }
  return out;
}

function coerce(key: ConfigKey, raw: string): unknown {
  switch (key.kind) {
    case 'number': {
      const n = Number(raw);
      return raw.trim() !== '' && Number.isFinite(n)
        ? n
        : new Error(`expected a number, got ${JSON.stringify(raw)}`);
    }
    case 'boolean': {
      const v = raw.trim().toLowerCase();
      if (['1', 'true', 'yes', 'on'].includes(v)) return true;
      if (['0', 'false', 'no', 'off'].includes(v)) return false;
      return new Error(`expected true or false, got ${JSON.stringify(raw)}`);
    }
    case 'array':
    case 'record':
      if (raw.trim().startsWith('[') || raw.trim().startsWith('{')) {
        try {
          return JSON.parse(raw) as unknown;
        } catch {
          return new Error('expected JSON (an array or object)');
        }
      }
      return key.kind === 'array'
        ? raw
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : new Error('expected a JSON object');
    default:
      return raw;
  }
}

export function setIn(target: RawConfig, keyPath: string[], value: unknown): void {
  let node = target;
  keyPath.forEach((part, i) => {
    if (i === keyPath.length - 1) node[part] = value;
    else {
      const next = node[part];
      if (!next || typeof next !== 'object' || Array.isArray(next)) node[part] = {};
      node = node[part] as RawConfig;
    }
  });
}

const isPlainObject = (v: unknown): v is RawConfig => !!v && typeof v === 'object' && !Array.isArray(v);

/** A key written with no value (`providers:` with every line below commented out) counts as absent. */
function dropNulls(value: RawConfig): RawConfig {
  const out: RawConfig = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null) continue;
    out[k] = isPlainObject(v) ? dropNulls(v) : v;
  }
  return out;
}

/** Objects merge key by key; arrays and scalars from `over` replace those in `base`. */
export function deepMerge(base: RawConfig, over: RawConfig): RawConfig {
  const out: RawConfig = { ...base };
  for (const [k, v] of Object.entries(over)) {
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k] as RawConfig, v) : v;
  }
  return out;
}

const SECRETISH_PATH = /secret|token|password|api_?key|credential/i;
/** A URL with a user and password in it (`https://user:pass@host`). */
const URL_CREDENTIALS = /\/\/[^/\s@"]*:[^/\s@"]*@/;

/** Shows a value in an error message unless it is (or may be) a secret. */
export function showValue(keyPath: (string | number)[], value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  if (
    keyPath.some((p) => SECRETISH_PATH.test(String(p))) ||
    (typeof text === 'string' && (looksSecret(text) || URL_CREDENTIALS.test(text)))
  )
    return '(value hidden: it may be a secret)';
  if (text === undefined) return String(value);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

function sourceOf(
  keyPath: (string | number)[],
  doc: ParsedYaml | undefined,
  envLayer: RawConfig,
  flags: RawConfig,
): string | undefined {
  if (getIn(flags, keyPath) !== undefined) return 'command-line flag';
  if (getIn(envLayer, keyPath) !== undefined) return `env ${envName(keyPath.map(String))}`;
  return lineOf(doc, keyPath);
}

/** Keys a configuration may still carry from an earlier version, and why they went. */
const REMOVED_KEYS: Readonly<Record<string, string>> = {
  'kubernetes.workspaces_mount_path':
    "nothing ever read it (an agent's Job mounts the claim by subPath at fixed paths; kubernetes.volume_root is where the daemon mounts the claim)",
};

function zodProblems(
  error: z.ZodError,
  merged: RawConfig,
  doc: ParsedYaml | undefined,
  envLayer: RawConfig,
  flags: RawConfig,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const issue of error.issues) {
    const base = issue.path as (string | number)[];
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const keyPath = [...base, key];
        const hint = didYouMean(key, keysAt(base));
        const removed = REMOVED_KEYS[keyPath.join('.')];
        problems.push({
          path: keyPath.join('.'),
          message: removed
            ? `no longer a configuration key: ${removed}; remove it`
            : `unknown key${hint ? `; did you mean "${hint}"?` : ''} (allowed here: ${keysAt(base).join(', ') || 'none'})`,
          source: sourceOf(keyPath, doc, envLayer, flags),
        });
      }
      continue;
    }
    const value = getIn(merged, base);
    problems.push({
      path: base.join('.'),
      message: `${describeIssue(issue)}; got ${showValue(base, value)}`,
      source: sourceOf(base, doc, envLayer, flags),
    });
  }
  return problems;
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${issue.expected}`;
    case 'too_small':
      return `expected ${issue.origin === 'string' || issue.origin === 'array' ? 'length ' : ''}at least ${String(issue.minimum)}`;
    case 'too_big':
      return `expected ${issue.origin === 'string' || issue.origin === 'array' ? 'length ' : ''}at most ${String(issue.maximum)}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_union':
      return 'expected a duration such as 30s, 15m, 1h or milliseconds (or a size such as 64k, 1MiB)';
    default:
      return issue.message;
  }
}

/** Closest candidate within edit distance 2 (or a prefix match), for "did you mean". */
export function didYouMean(input: string, candidates: string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of candidates) {
    const d = editDistance(input.toLowerCase(), name.toLowerCase());
    if (!best || d < best.d) best = { name, d };
  }
  if (!best) return undefined;
  const limit = Math.max(2, Math.floor(input.length / 4));
  return best.d <= limit ? best.name : undefined;
}

function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0] ?? 0;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j] ?? 0;
      prev[j] = Math.min(up + 1, (prev[j - 1] ?? 0) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length] ?? 0;
}
