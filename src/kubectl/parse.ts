import { flagTable, type FlagSpec, type FlagTable } from './flags.js';
import { shapePositionals, type KubectlTarget } from './positionals.js';
import { KUBECTL_VERBS, SUBCOMMANDS } from './verbs.js';

export type { KubectlTarget } from './positionals.js';
export { CREATE_TYPES, KUBECTL_VERBS, SUBCOMMANDS, TOP_ALIASES } from './verbs.js';

// A pure kubectl command-line parser: flags anywhere (pflag rules: `-n x`, `-nx`, `-n=x`, `--namespace
// x`, `--namespace=x`, `-ojson`, `-Ao wide`; `--` ends the flags and its words are positionals like
// the others), the verb and what the words after it are for that verb (positionals.ts). Syntax only: what a call would do to a
// cluster (read, mutate, …) is decided in kubectl/policy/classify.ts, so that a change made here for
// the frozen-cluster shim cannot silently change what the guard allows.

export type RawMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

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
  /**
   * The command after `--` of the verbs that run one (exec, debug, run, create job/deployment/cronjob).
   * Every other verb takes the words after `--` as arguments like those before it (pflag ends flags
   * there, nothing more), so they are in `targets` and `args` and this is empty.
   */
  afterDashDash: string[];
  /** A usage error kubectl itself would print (`unknown flag: --foo`). */
  error?: string;
  /** The same text for every spelling of the same command (flag order, short/long forms, `=` or not). */
  normalized: string;
}

interface Scan {
  flags: Record<string, string>;
  /** Every positional, those after `--` included (pflag's Args()). */
  positionals: string[];
  /** How many positionals came before `--`; -1 without one (cobra's ArgsLenAtDash). */
  dashAt: number;
  error?: string;
}

/** The scan so far, stopped at a usage error. */
function failed(out: Scan, error: string): Scan {
  out.error = error;
  return out;
}

/** pflag's parse of argv against a flag table: flags anywhere, `--` ends them, the words after it are positionals. */
function scan(argv: readonly string[], table: FlagTable): Scan {
  const flags: Record<string, string> = {};
  const positionals: string[] = [];
  const out: Scan = { flags, positionals, dashAt: -1 };
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
      out.dashAt = positionals.length;
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('--') && arg.length > 2) {
      const eq = arg.indexOf('=');
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      const spec = table.long.get(name);
      if (!spec) return failed(out, `unknown flag: --${name}`);
      let value = eq === -1 ? undefined : arg.slice(eq + 1);
      if (value === undefined && spec.value) {
        if (spec.noOptDefault !== undefined) value = spec.noOptDefault;
        else if (i + 1 < argv.length) value = argv[++i];
      }
      const error = set(spec, value, `--${name}`);
      if (error) return failed(out, error);
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      // A run of one-letter flags; the first that takes a value consumes the rest (or the next argument).
      for (let j = 1; j < arg.length; j++) {
        const letter = arg[j] as string;
        const spec = table.short.get(letter);
        if (!spec) return failed(out, `unknown shorthand flag: '${letter}' in ${arg}`);
        const rest = arg.slice(j + 1);
        const display = `'${letter}' in ${arg}`;
        if (!spec.value) {
          const value = rest.startsWith('=') ? rest.slice(1) : undefined;
          const error = set(spec, value, `-${letter}`);
          if (error) return failed(out, error);
          if (value !== undefined) break;
          continue;
        }
        let value: string | undefined = rest.startsWith('=') ? rest.slice(1) : rest;
        if (value === '') value = spec.noOptDefault ?? (i + 1 < argv.length ? argv[++i] : undefined);
        const error = set(spec, value, display);
        if (error) return failed(out, error);
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

/**
 * `argsAfterDash`: the args only stay args because `--` came before them (`kubectl -- get secrets`,
 * `kubectl rollout -- status x`); they are shown after a `--` so that they never read as the command.
 */
function normalize(cmd: Omit<KubectlCommand, 'normalized'>, argsAfterDash: boolean): string {
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
  if (!argsAfterDash) parts.push(...cmd.args);
  const flags = Object.entries(cmd.flags)
    .filter(([, value]) => value !== 'false')
    .map(([name, value]) => {
      const shown = name === 'output' ? normalizeOutput(value) : value;
      return value === 'true' && !['output', 'raw'].includes(name) ? `--${name}` : `--${name}=${shown}`;
    })
    .sort();
  parts.push(...flags);
  if (cmd.afterDashDash.length > 0) parts.push('--', ...cmd.afterDashDash);
  else if (argsAfterDash && cmd.args.length > 0) parts.push('--', ...cmd.args);
  return parts.map(shellQuote).join(' ');
}

/**
 * Parses the arguments of one kubectl call (without the `kubectl` word). Never throws: what kubectl
 * would reject comes back as `error`.
 */
export function parseKubectl(argv: readonly string[]): KubectlCommand {
  // First pass: find the verb, skipping the values of flags given before it.
  // cobra looks for the command only before `--`: a first word after it leaves kubectl at its root.
  // A known verb as the first word (most calls) is the first positional whatever follows: no pass needed.
  const lead = argv[0];
  const leadVerb =
    lead !== undefined && !(lead.startsWith('-') && lead.length > 1) && KUBECTL_VERBS.has(lead);
  const first = leadVerb ? undefined : scan(argv, flagTable(undefined));
  const verb = first ? (first.dashAt === 0 ? undefined : first.positionals[0]) : lead;
  const known = verb === undefined || KUBECTL_VERBS.has(verb);
  const second = known || !first ? scan(argv, flagTable(verb)) : first;
  const words = verb === undefined ? second.positionals : second.positionals.slice(1);
  const dash = second.dashAt === -1 || verb === undefined ? second.dashAt : second.dashAt - 1;
  const shaped =
    verb && known ? shapePositionals(verb, words, dash) : { targets: [], args: words, command: [] };
  const flags = second.flags;
  const base: Omit<KubectlCommand, 'normalized'> = {
    argv,
    ...(verb !== undefined ? { verb } : {}),
    ...(shaped.subcommand !== undefined ? { subcommand: shaped.subcommand } : {}),
    targets: shaped.targets,
    args: shaped.args,
    flags,
    allNamespaces: flags['all-namespaces'] === 'true',
    afterDashDash: shaped.command,
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
  // Words after `--` where a command or subcommand would otherwise be read.
  const argsAfterDash =
    dash === 0 &&
    shaped.subcommand === undefined &&
    (verb === undefined || SUBCOMMANDS[verb] !== undefined || verb === 'create');
  return Object.assign(base, { normalized: normalize(base, argsAfterDash) });
}

/**
 * Splits a command line the way a POSIX shell splits words (single and double quotes, backslash escapes),
 * for command lines written in recordings. Undefined for an unterminated quote.
 */
export function splitCommandLine(line: string): string[] | undefined {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  // Runs of plain characters are copied whole (a character at a time, a long line is thousands of strings).
  for (let i = 0; i < line.length;) {
    const c = line[i] as string;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return undefined;
      word += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      for (;;) {
        if (j >= line.length) return undefined;
        const d = line[j] as string;
        if (d === '"') break;
        if (d === '\\' && j + 1 < line.length && '"\\$`'.includes(line[j + 1] as string)) {
          word += line[j + 1];
          j += 2;
          continue;
        }
        // A backslash that escapes nothing is kept.
        const run = d === '\\' ? d : runAt(IN_DOUBLE_QUOTES, line, j);
        word += run;
        j += run.length;
      }
      inWord = true;
      i = j + 1;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[i + 1];
      inWord = true;
      i += 2;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
      i++;
    } else {
      // A backslash ending the line is kept.
      const run = c === '\\' ? c : runAt(PLAIN, line, i);
      word += run;
      inWord = true;
      i += run.length;
    }
  }
  if (inWord) words.push(word);
  return words;
}

/** Characters a shell copies as they are outside quotes, and inside double quotes. */
const PLAIN = /[^'"\\\s]+/y;
const IN_DOUBLE_QUOTES = /[^"\\]+/y;

/** The run of `pattern` starting at `at` (the caller knows it is at least one character). */
function runAt(pattern: RegExp, line: string, at: number): string {
  pattern.lastIndex = at;
  return pattern.exec(line)?.[0] ?? (line[at] as string);
}
