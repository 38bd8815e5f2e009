import { flagTable, type FlagSpec, type FlagTable } from './flags.js';
import { findResourceType, type ResourceType } from './resources.js';

// A pure kubectl command-line parser: flags anywhere (pflag rules: `-n x`, `-nx`, `-n=x`, `--namespace
// x`, `--namespace=x`, `-ojson`, `-Ao wide`, `--`), the verb and its subcommand, the resources named
// (`pods`, `po`, `pod/name`, `deploy,rs`, `deployments.apps`), and what the call would do to a cluster.
// The kubectl guard and the frozen-cluster shim share it, so both judge a command the same way.

/** What a call does: read, change state, enter a workload, hit a raw API path, read Secret data, or unknown. */
export type KubectlCategory = 'read' | 'mutate' | 'workload-access' | 'raw' | 'secret-read' | 'unknown';

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
  category: KubectlCategory;
  /** True when the call can neither change the cluster nor reveal Secret data. */
  readOnly: boolean;
  /** Why: `verb delete`, `Secret data via -o yaml`, `raw POST /api/…`. */
  reason: string;
  /** A usage error kubectl itself would print (`unknown flag: --foo`); the category is then `unknown`. */
  error?: string;
  /** The same text for every spelling of the same command (flag order, short/long forms, `=` or not). */
  normalized: string;
}

const READ_VERBS = new Set([
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
]);
const MUTATE_VERBS = new Set([
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
]);
const ACCESS_VERBS = new Set(['exec', 'attach', 'port-forward', 'cp', 'debug', 'proxy']);
/** Verbs with subcommands, and which subcommands only read. */
const SUBCOMMANDS: Record<string, { all: string[]; read: string[] }> = {
  rollout: { all: ['status', 'history', 'undo', 'restart', 'pause', 'resume'], read: ['status', 'history'] },
  config: {
    all: [
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
    read: ['view', 'current-context', 'get-contexts', 'get-clusters', 'get-users'],
  },
  auth: { all: ['can-i', 'whoami', 'reconcile'], read: ['can-i', 'whoami'] },
  top: { all: ['pod', 'node'], read: ['pod', 'node'] },
  apply: { all: ['view-last-applied', 'set-last-applied', 'edit-last-applied'], read: ['view-last-applied'] },
  'cluster-info': { all: ['dump'], read: ['dump'] },
  plugin: { all: ['list'], read: ['list'] },
  certificate: { all: ['approve', 'deny'], read: [] },
  set: {
    all: ['image', 'env', 'resources', 'selector', 'serviceaccount', 'subject'],
    read: [],
  },
};
/** `kubectl create <what>`: the type each subcommand creates. */
const CREATE_TYPES: Record<string, string> = {
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
const TOP_ALIASES: Record<string, string> = {
  pod: 'pod',
  pods: 'pod',
  po: 'pod',
  node: 'node',
  nodes: 'node',
  no: 'node',
};
/** Output formats that print an object's fields, hence a Secret's data. */
const DATA_OUTPUTS =
  /^(json|yaml|kyaml|jsonpath|jsonpath-as-json|jsonpath-file|go-template|go-template-file|template|templatefile|custom-columns|custom-columns-file)(=|$)/;
const KNOWN_VERBS = new Set([
  ...READ_VERBS,
  ...MUTATE_VERBS,
  ...ACCESS_VERBS,
  'rollout',
  'config',
  'auth',
  'alpha',
]);

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
      if (what === undefined || !sub?.all.includes(what)) return { targets: [], args: words };
      return { subcommand: what, targets: [], args: rest };
    }
    case 'rollout':
    case 'set':
    case 'apply': {
      const [what, ...rest] = words;
      if (what === undefined || !sub?.all.includes(what)) return { targets: [], args: words };
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

const isSecretsPath = (p: string) => /\/secrets(\/|\?|$)/.test(p.split('?')[0] ?? '') || /\/secrets$/.test(p);
/** A path through the API server's proxy to a pod, service or node: a request the workload answers, not the API. */
const isProxyPath = (p: string) => {
  const bare = p.split('?')[0] ?? '';
  return /\/(pods|services|nodes)\/[^/]+\/proxy(\/|$)/.test(bare) || /^\/api\/v1\/proxy(\/|$)/.test(bare);
};

interface Verdict {
  category: KubectlCategory;
  readOnly: boolean;
  reason: string;
}

/** Verbs whose bare form (no subcommand) only prints help or reads. */
const BARE_READS = new Set(['top', 'cluster-info', 'plugin', 'rollout', 'config', 'auth']);

function verbVerdict(cmd: Omit<KubectlCommand, 'category' | 'readOnly' | 'reason' | 'normalized'>): Verdict {
  const verb = cmd.verb as string;
  const { subcommand } = cmd;
  if (ACCESS_VERBS.has(verb)) return { category: 'workload-access', readOnly: false, reason: `verb ${verb}` };
  const sub = SUBCOMMANDS[verb];
  if (sub && subcommand !== undefined) {
    return sub.read.includes(subcommand)
      ? { category: 'read', readOnly: true, reason: `verb ${verb} ${subcommand}` }
      : { category: 'mutate', readOnly: false, reason: `verb ${verb} ${subcommand}` };
  }
  if (BARE_READS.has(verb)) {
    // `kubectl rollout` prints help; `kubectl rollout frobnicate` is an error kubectl prints.
    return cmd.args.length > 0 && verb !== 'cluster-info'
      ? { category: 'unknown', readOnly: false, reason: `unknown ${verb} subcommand ${cmd.args[0] ?? ''}` }
      : { category: 'read', readOnly: true, reason: `verb ${verb}` };
  }
  if (MUTATE_VERBS.has(verb)) return { category: 'mutate', readOnly: false, reason: `verb ${verb}` };
  if (READ_VERBS.has(verb)) return { category: 'read', readOnly: true, reason: `verb ${verb}` };
  return { category: 'unknown', readOnly: false, reason: `unknown verb ${verb}` };
}

function categorize(cmd: Omit<KubectlCommand, 'category' | 'readOnly' | 'reason' | 'normalized'>): Verdict {
  if (cmd.error) return { category: 'unknown', readOnly: false, reason: cmd.error };
  if (cmd.verb === undefined) return { category: 'read', readOnly: true, reason: 'no command (help)' };
  if (cmd.raw) {
    const { method, path } = cmd.raw;
    if (method === 'GET' && isSecretsPath(path))
      return { category: 'secret-read', readOnly: false, reason: `raw GET of Secrets ${path}` };
    if (isProxyPath(path))
      return {
        category: 'workload-access',
        readOnly: false,
        reason: `raw ${method} through the API server proxy ${path}`,
      };
    return { category: 'raw', readOnly: method === 'GET', reason: `raw ${method} ${path}` };
  }
  if (cmd.plugin)
    return { category: 'unknown', readOnly: false, reason: `not a kubectl command: ${cmd.verb}` };
  const verdict = verbVerdict(cmd);
  if (verdict.category !== 'read') return verdict;
  if (cmd.verb === 'config' && cmd.subcommand === 'view' && cmd.flags.raw === 'true')
    return { category: 'secret-read', readOnly: false, reason: 'config view --raw prints credentials' };
  const secrets = cmd.targets.some((t) => t.type?.name === 'secrets');
  const output = cmd.output ?? (cmd.flags.template !== undefined ? 'go-template' : undefined);
  if (cmd.verb === 'get' && secrets && output !== undefined && DATA_OUTPUTS.test(output)) {
    const format = output.split('=')[0] ?? output;
    return { category: 'secret-read', readOnly: false, reason: `Secret data via -o ${format}` };
  }
  return verdict;
}

/** Quotes a word for display when a shell would need it. */
export function shellQuote(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

function normalize(cmd: Omit<KubectlCommand, 'normalized' | 'category' | 'readOnly' | 'reason'>): string {
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
 * Parses the arguments of one kubectl call (without the `kubectl` word) and classifies it. Never throws:
 * what kubectl would reject comes back as `error` with category `unknown`.
 */
export function parseKubectl(argv: readonly string[]): KubectlCommand {
  // First pass: find the verb, skipping the values of flags given before it.
  const first = scan(argv, flagTable(undefined));
  const verb = first.positionals[0];
  const known = verb === undefined || KNOWN_VERBS.has(verb);
  const second = known ? scan(argv, flagTable(verb)) : first;
  const words = second.positionals.slice(1);
  const shaped = verb && known ? shape(verb, words) : { targets: [], args: words };
  const flags = second.flags;
  const base: Omit<KubectlCommand, 'category' | 'readOnly' | 'reason' | 'normalized'> = {
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
  const verdict = categorize(base);
  return { ...base, ...verdict, normalized: normalize(base) };
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

/** One command kubectl has: its verb, a subcommand when it has them, and how a plain call of it is classified. */
export interface KubectlCatalogEntry {
  verb: string;
  subcommand?: string;
  category: KubectlCategory;
}

/**
 * Every verb and subcommand this parser knows, classified as a call without flags would be. Tool
 * permission rules that CLIs match by command prefix (`kubectl delete`) are derived from it.
 */
export function kubectlCatalog(): KubectlCatalogEntry[] {
  const out: KubectlCatalogEntry[] = [];
  for (const verb of KNOWN_VERBS) {
    const sub = SUBCOMMANDS[verb];
    if (ACCESS_VERBS.has(verb)) out.push({ verb, category: 'workload-access' });
    else if (MUTATE_VERBS.has(verb)) out.push({ verb, category: 'mutate' });
    else if (READ_VERBS.has(verb) || BARE_READS.has(verb)) out.push({ verb, category: 'read' });
    else if (!sub) out.push({ verb, category: 'unknown' });
    for (const subcommand of sub?.all ?? []) {
      out.push({ verb, subcommand, category: sub?.read.includes(subcommand) ? 'read' : 'mutate' });
    }
  }
  return out;
}
