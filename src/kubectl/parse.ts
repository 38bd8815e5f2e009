import { flagTable, type FlagSpec, type FlagTable } from './flags.js';
import { findResourceType, type ResourceType } from './resources.js';

// A pure kubectl command-line parser: flags anywhere (pflag rules: `-n x`, `-nx`, `-n=x`, `--namespace
// x`, `--namespace=x`, `-ojson`, `-Ao wide`, `--`), the verb and its subcommand, the resources named
// (`pods`, `po`, `pod/name`, `deploy,rs`, `deployments.apps`). Syntax only: what a call would do to a
// cluster (read, mutate, …) is decided in kubectl/policy/classify.ts, so that a change made here for
// the frozen-cluster shim cannot silently change what the guard allows.

export type RawMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface KubectlTarget {
  /** The type as typed (`po`, `deploy.apps`). */
  text: string;
  /** Undefined when kubectl would not know the type (`the server doesn't have a resource type`). */
  type?: ResourceType;
  names: string[];
}

export interface KubectlCommand {
  argv: readonly string[];
  verb?: string;
  /** `rollout status`, `auth can-i`, `config view`, `top pod`, `create secret`, `set image`, `cluster-info dump`. */
  subcommand?: string;
  targets: KubectlTarget[];
  /** Positionals that are neither verb, subcommand nor resource (label assignments, ports, can-i args). */
  args: string[];
  /** Every flag by long name; switches as 'true'/'false'; a repeated flag keeps its last value. */
  flags: Record<string, string>;
  namespace?: string;
  allNamespaces: boolean;
  /** `-o` normalised: `json`, `yaml`, `wide`, `name`, `jsonpath=…`, `custom-columns=…`, `go-template=…`. */
  output?: string;
  selector?: string;
  raw?: { method: RawMethod; path: string };
  /** A command kubectl does not have: the plugin executable it would look for (`kubectl-foo`). */
  plugin?: string;
  /** Arguments after `--` (the command of exec, debug). */
  afterDashDash: string[];
  /** A usage error kubectl itself would print (`unknown flag: --foo`). */
  error?: string;
  /** The same text for every spelling of the same command (flag order, short/long forms, `=` or not). */
  normalized: string;
}

/** Every command kubectl has (its root's subcommands); anything else is a plugin name. */
export const KUBECTL_VERBS: ReadonlySet<string> = new Set([
  'get',
  'describe',
  'logs',
  'top',
  'events',
  'explain',
  'api-resources',
  'api-versions',
  'cluster-info',
  'version',
  'diff',
  'wait',
  'kustomize',
  'completion',
  'help',
  'options',
  'plugin',
  'apply',
  'create',
  'delete',
  'edit',
  'patch',
  'replace',
  'scale',
  'autoscale',
  'label',
  'annotate',
  'set',
  'expose',
  'run',
  'cordon',
  'uncordon',
  'drain',
  'taint',
  'certificate',
  'exec',
  'attach',
  'port-forward',
  'cp',
  'debug',
  'proxy',
  'rollout',
  'config',
  'auth',
  'alpha',
]);
/** Verbs with subcommands: the subcommands kubectl has. */
export const SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  rollout: ['status', 'history', 'undo', 'restart', 'pause', 'resume'],
  config: [
    'view',
    'current-context',
    'get-contexts',
    'get-clusters',
    'get-users',
    'use-context',
    'use',
    'set-context',
    'set-cluster',
    'set-credentials',
    'set',
    'unset',
    'delete-context',
    'delete-cluster',
    'delete-user',
    'rename-context',
  ],
  auth: ['can-i', 'whoami', 'reconcile'],
  top: ['pod', 'node'],
  apply: ['view-last-applied', 'set-last-applied', 'edit-last-applied'],
  'cluster-info': ['dump'],
  plugin: ['list'],
  certificate: ['approve', 'deny'],
  set: ['image', 'env', 'resources', 'selector', 'serviceaccount', 'subject'],
};
/** `kubectl create <what>`: the type each subcommand creates. */
export const CREATE_TYPES: Record<string, string> = {
  clusterrole: 'clusterroles',
  clusterrolebinding: 'clusterrolebindings',
  configmap: 'configmaps',
  cm: 'configmaps',
  cronjob: 'cronjobs',
  cj: 'cronjobs',
  deployment: 'deployments',
  deploy: 'deployments',
  ingress: 'ingresses',
  ing: 'ingresses',
  job: 'jobs',
  namespace: 'namespaces',
  ns: 'namespaces',
  poddisruptionbudget: 'poddisruptionbudgets',
  pdb: 'poddisruptionbudgets',
  priorityclass: 'priorityclasses',
  pc: 'priorityclasses',
  quota: 'resourcequotas',
  resourcequota: 'resourcequotas',
  role: 'roles',
  rolebinding: 'rolebindings',
  secret: 'secrets',
  service: 'services',
  svc: 'services',
  serviceaccount: 'serviceaccounts',
  sa: 'serviceaccounts',
  token: 'serviceaccounts',
};
export const TOP_ALIASES: Readonly<Record<string, string>> = {
  pod: 'pod',
  pods: 'pod',
  po: 'pod',
  node: 'node',
  nodes: 'node',
  no: 'node',
};
interface Scan {
  flags: Record<string, string>;
  positionals: string[];
  afterDashDash: string[];
  error?: string;
}

/** pflag's parse of argv against a flag table: flags anywhere, `--` ends them. */
function scan(argv: readonly string[], table: FlagTable): Scan {
  const flags: Record<string, string> = {};
  const positionals: string[] = [];
  const out: Scan = { flags, positionals, afterDashDash: [] };
  const set = (spec: FlagSpec, value: string | undefined, display: string): string | undefined => {
    if (!spec.value) {
      const text = value ?? 'true';
      if (!/^(true|false|1|0|t|f|TRUE|FALSE|True|False)$/.test(text)) {
        return `invalid argument "${text}" for "${display}" flag: strconv.ParseBool: parsing "${text}": invalid syntax`;
      }
      flags[spec.name] = /^(true|1|t|TRUE|True)$/.test(text) ? 'true' : 'false';
      return undefined;
    }
    if (value === undefined) return `flag needs an argument: ${display}`;
    flags[spec.name] = value;
    return undefined;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      out.afterDashDash = argv.slice(i + 1);
      break;
    }
    if (arg.startsWith('--') && arg.length > 2) {
      const eq = arg.indexOf('=');
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      const spec = table.long.get(name);
      if (!spec) return { ...out, error: `unknown flag: --${name}` };
      let value = eq === -1 ? undefined : arg.slice(eq + 1);
      if (value === undefined && spec.value) {
        if (spec.noOptDefault !== undefined) value = spec.noOptDefault;
        else if (i + 1 < argv.length) value = argv[++i];
      }
      const error = set(spec, value, `--${name}`);
      if (error) return { ...out, error };
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      // A run of one-letter flags; the first that takes a value consumes the rest (or the next argument).
      for (let j = 1; j < arg.length; j++) {
        const letter = arg[j] as string;
        const spec = table.short.get(letter);
        if (!spec) return { ...out, error: `unknown shorthand flag: '${letter}' in ${arg}` };
        const rest = arg.slice(j + 1);
        const display = `'${letter}' in ${arg}`;
        if (!spec.value) {
          const value = rest.startsWith('=') ? rest.slice(1) : undefined;
          const error = set(spec, value, `-${letter}`);
          if (error) return { ...out, error };
          if (value !== undefined) break;
          continue;
        }
        let value: string | undefined = rest.startsWith('=') ? rest.slice(1) : rest;
        if (value === '') value = spec.noOptDefault ?? (i + 1 < argv.length ? argv[++i] : undefined);
        const error = set(spec, value, display);
        if (error) return { ...out, error };
        break;
      }
      continue;
    }
    positionals.push(arg);
  }
  return out;
}

/** `-o json`, `-ojson`, `-o=json`, `--output json` all become `json`; `jsonpath='{…}'` keeps its template. */
export function normalizeOutput(text: string): string {
  const eq = text.indexOf('=');
  if (eq === -1) return text.toLowerCase();
  return `${text.slice(0, eq).toLowerCase()}=${text.slice(eq + 1)}`;
}

function resolveTargets(words: string[]): { targets: KubectlTarget[]; rest: string[] } {
  if (words.length === 0) return { targets: [], rest: [] };
  const first = words[0] as string;
  if (first.includes('/')) {
    // `type/name` form: every argument is one.
    const targets: KubectlTarget[] = [];
    const rest: string[] = [];
    for (const word of words) {
      const slash = word.indexOf('/');
      if (slash <= 0) {
        rest.push(word);
        continue;
      }
      const text = word.slice(0, slash);
      const name = word.slice(slash + 1);
      const existing = targets.find((t) => t.text === text);
      if (existing) existing.names.push(name);
      else targets.push(withType({ text, names: [name] }));
    }
    return { targets, rest };
  }
  const targets = first
    .split(',')
    .filter((s) => s !== '')
    .map((text) => withType({ text, names: words.slice(1) }));
  return { targets, rest: [] };
}

function withType(target: KubectlTarget): KubectlTarget {
  const type = findResourceType(target.text);
  return type ? { ...target, type } : target;
}

/** Splits positionals after the verb into subcommand, targets and plain args, per command shape. */
function shape(
  verb: string,
  words: string[],
): { subcommand?: string; targets: KubectlTarget[]; args: string[] } {
  const sub = SUBCOMMANDS[verb];
  switch (verb) {
    case 'get':
    case 'describe':
    case 'delete':
    case 'edit':
    case 'patch':
    case 'scale':
    case 'autoscale':
    case 'expose':
    case 'wait':
    case 'explain': {
      if (verb === 'explain' && words[0]) {
        const [type = ''] = (words[0] as string).split('.');
        return { targets: [withType({ text: type, names: [] })], args: words.slice(1) };
      }
      const { targets, rest } = resolveTargets(words);
      return { targets, args: rest };
    }
    case 'label':
    case 'annotate':
    case 'taint': {
      const isAssignment = (w: string) =>
        w.includes('=') || w.endsWith('-') || (verb === 'taint' && w.includes(':'));
      const { targets, rest } = resolveTargets(words.filter((w) => !isAssignment(w)));
      return { targets, args: [...rest, ...words.filter(isAssignment)] };
    }
    case 'logs':
    case 'exec':
    case 'attach':
    case 'port-forward':
    case 'debug': {
      const [first, ...rest] = words;
      if (first === undefined) return { targets: [], args: [] };
      if (first.includes('/')) {
        const { targets } = resolveTargets([first]);
        return { targets, args: rest };
      }
      return { targets: [withType({ text: 'pods', names: [first] })], args: rest };
    }
    case 'cp': {
      const remote = words.find((w) => /^[^/:]*(\/[^/:]+)?:/.test(w) && !w.startsWith('/'));
      if (!remote) return { targets: [], args: words };
      const podPart = remote.slice(0, remote.indexOf(':'));
      const pod = podPart.includes('/') ? podPart.slice(podPart.indexOf('/') + 1) : podPart;
      return { targets: [withType({ text: 'pods', names: [pod] })], args: words };
    }
    case 'cordon':
    case 'uncordon':
    case 'drain':
      return { targets: [withType({ text: 'nodes', names: words })], args: [] };
    case 'run':
      return {
        targets: words[0] ? [withType({ text: 'pods', names: [words[0]] })] : [],
        args: words.slice(1),
      };
    case 'create': {
      const [what, ...rest] = words;
      const type = what === undefined ? undefined : CREATE_TYPES[what];
      if (what === undefined || type === undefined) return { targets: [], args: words };
      // `create secret generic NAME`, `create service clusterip NAME`
      const named = what === 'secret' || what === 'service' || what === 'svc' ? rest.slice(1) : rest;
      const [name, ...more] = named;
      return {
        subcommand: what,
        targets: [withType({ text: type, names: name === undefined ? [] : [name] })],
        args: more,
      };
    }
    case 'top': {
      const [what, ...rest] = words;
      const sub = what === undefined ? undefined : TOP_ALIASES[what];
      if (!sub) return { targets: [], args: words };
      return {
        subcommand: sub,
        targets: [withType({ text: sub === 'pod' ? 'pods' : 'nodes', names: rest })],
        args: [],
      };
    }
    case 'auth':
    case 'config':
    case 'cluster-info':
    case 'plugin':
    case 'certificate': {
      const [what, ...rest] = words;
      if (what === undefined || !sub?.includes(what)) return { targets: [], args: words };
      return { subcommand: what, targets: [], args: rest };
    }
    case 'rollout':
    case 'set':
    case 'apply': {
      const [what, ...rest] = words;
      if (what === undefined || !sub?.includes(what)) return { targets: [], args: words };
      const resourceWords = verb === 'set' ? rest.filter((w) => !w.includes('=')) : rest;
      const { targets, rest: left } = resolveTargets(resourceWords);
      const assignments = verb === 'set' ? rest.filter((w) => w.includes('=')) : [];
      return { subcommand: what, targets, args: [...left, ...assignments] };
    }
    default:
      return { targets: [], args: words };
  }
}

const RAW_METHODS: Record<string, RawMethod> = {
  get: 'GET',
  create: 'POST',
  replace: 'PUT',
  delete: 'DELETE',
};

/** Quotes a word for display when a shell would need it. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

function normalize(cmd: Omit<KubectlCommand, 'normalized'>): string {
  const parts: string[] = [];
  if (cmd.verb) parts.push(cmd.verb);
  if (cmd.subcommand) parts.push(cmd.subcommand);
  const named = cmd.targets.some((t) => t.names.length > 0);
  const typeName = (t: KubectlTarget) => t.type?.name ?? t.text;
  if (cmd.verb === 'create' || cmd.verb === 'top') {
    for (const t of cmd.targets) parts.push(...t.names);
  } else if (!named) {
    if (cmd.targets.length > 0) parts.push(cmd.targets.map(typeName).join(','));
  } else {
    for (const t of cmd.targets) for (const n of t.names) parts.push(`${typeName(t)}/${n}`);
  }
  parts.push(...cmd.args);
  const flags = Object.entries(cmd.flags)
    .filter(([, value]) => value !== 'false')
    .map(([name, value]) => {
      const shown = name === 'output' ? normalizeOutput(value) : value;
      return value === 'true' && !['output', 'raw'].includes(name) ? `--${name}` : `--${name}=${shown}`;
    })
    .sort();
  parts.push(...flags);
  if (cmd.afterDashDash.length > 0) parts.push('--', ...cmd.afterDashDash);
  return parts.map(shellQuote).join(' ');
}

/**
 * Parses the arguments of one kubectl call (without the `kubectl` word). Never throws: what kubectl
 * would reject comes back as `error`.
 */
export function parseKubectl(argv: readonly string[]): KubectlCommand {
  // First pass: find the verb, skipping the values of flags given before it.
  const first = scan(argv, flagTable(undefined));
  const verb = first.positionals[0];
  const known = verb === undefined || KUBECTL_VERBS.has(verb);
  const second = known ? scan(argv, flagTable(verb)) : first;
  const words = second.positionals.slice(1);
  const shaped = verb && known ? shape(verb, words) : { targets: [], args: words };
  const flags = second.flags;
  const base: Omit<KubectlCommand, 'normalized'> = {
    argv,
    ...(verb !== undefined ? { verb } : {}),
    ...(shaped.subcommand !== undefined ? { subcommand: shaped.subcommand } : {}),
    targets: shaped.targets,
    args: shaped.args,
    flags,
    allNamespaces: flags['all-namespaces'] === 'true',
    afterDashDash: second.afterDashDash,
  };
  if (flags.namespace !== undefined) base.namespace = flags.namespace;
  if (flags.output !== undefined) base.output = normalizeOutput(flags.output);
  if (flags.selector !== undefined) base.selector = flags.selector;
  if (second.error) base.error = second.error;
  if (verb !== undefined && !known) {
    // kubectl looks for `kubectl-<verb>` (and longer `kubectl-<verb>-<arg>` names) on PATH.
    base.plugin = `kubectl-${verb}`;
  }
  const rawPath = flags.raw;
  if (verb && rawPath !== undefined && verb !== 'config') {
    const method = RAW_METHODS[verb];
    if (method) base.raw = { method, path: rawPath };
    else base.error ??= `--raw is not supported by kubectl ${verb}`;
  }
  return { ...base, normalized: normalize(base) };
}

/**
 * Splits a command line the way a POSIX shell splits words (single and double quotes, backslash escapes),
 * for command lines written in recordings. Undefined for an unterminated quote.
 */
export function splitCommandLine(line: string): string[] | undefined {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1] as string))
        word += line[++i];
      else word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) return undefined;
  if (inWord) words.push(word);
  return words;
}
