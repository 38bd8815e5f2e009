import { GLOBAL_FLAGS, type FlagSpec } from '../flags.js';
import { CREATE_TYPES, KUBECTL_VERBS, SUBCOMMANDS, TOP_ALIASES } from '../verbs.js';

// Which command kubectl itself would run for an argv, found the way kubectl's command library (cobra)
// finds it: before each command word it skips flags, and a flag it does not know at that level, or one
// that takes a value, swallows the next word as its value (`kubectl -A events delete --all` runs
// `delete`, not `events`). The guard runs a call only when this path is the one its parser decided on
// and nothing but kubectl's own global flags comes before the command words.

/** kubectl's root flags (`kubectl options`) and cobra's --help, as the first command lookup sees them. */
const ROOT_LONG = new Map<string, FlagSpec>();
const ROOT_SHORT = new Map<string, FlagSpec>();
for (const spec of [...GLOBAL_FLAGS]) {
  ROOT_LONG.set(spec.name, spec);
  if (spec.short) ROOT_SHORT.set(spec.short, spec);
}

export interface CommandPath {
  /** The command words kubectl would run: `['delete']`, `['rollout', 'restart']`; empty for kubectl alone. */
  path: string[];
  /** Flags before a command word that are not kubectl's global flags, as written. */
  strays: string[];
}

/** A switch in pflag terms: given alone it takes no value (booleans; cobra checks NoOptDefVal). */
const takesNoValue = (spec: FlagSpec | undefined): boolean =>
  spec !== undefined && (!spec.value || spec.noOptDefault !== undefined);

interface Word {
  text: string;
  index: number;
}

/** cobra's stripFlags: the non-flag words of `args` with their places, and the flags met before each. */
function stripFlags(args: readonly string[]): { words: Word[]; flags: Word[] } {
  const words: Word[] = [];
  const flags: Word[] = [];
  for (let i = 0; i < args.length; i++) {
    const s = args[i] as string;
    if (s === '--') break;
    const long = s.startsWith('--') && !s.includes('=');
    const short = s.startsWith('-') && !s.includes('=') && s.length === 2;
    if (s.startsWith('-')) flags.push({ text: s, index: i });
    if (
      (long && !takesNoValue(ROOT_LONG.get(s.slice(2)))) ||
      (!s.startsWith('--') && short && !takesNoValue(ROOT_SHORT.get(s.slice(1))))
    ) {
      // `--flag value` / `-f value`: the next word is the value; with at most one word left cobra stops.
      if (args.length - (i + 1) <= 1) break;
      i++;
      continue;
    }
    if (s !== '' && !s.startsWith('-')) words.push({ text: s, index: i });
  }
  return { words, flags };
}

/** True when `flag` (as written) is one of kubectl's global flags in a form cobra and pflag read alike. */
function isRootFlag(flag: string): boolean {
  if (flag.startsWith('--')) {
    const eq = flag.indexOf('=');
    return ROOT_LONG.has(eq === -1 ? flag.slice(2) : flag.slice(2, eq));
  }
  const spec = ROOT_SHORT.get(flag.charAt(1));
  if (!spec) return false;
  // `-n x`, `-nx`, `-n=x`; a switch (`-h`) must stand alone.
  return spec.value || flag.length === 2 || flag.charAt(2) === '=';
}

/** The child command `word` names under `path`, as the parser names it; undefined when there is none. */
function childOf(path: readonly string[], word: string): string | undefined {
  if (path.length === 0) return KUBECTL_VERBS.has(word) ? word : undefined;
  if (path.length !== 1) return undefined;
  const verb = path[0] as string;
  if (verb === 'top') return TOP_ALIASES[word];
  if (verb === 'create') return CREATE_TYPES[word] !== undefined ? word : undefined;
  return SUBCOMMANDS[verb]?.includes(word) ? word : undefined;
}

/** The command kubectl would run for `argv` (the arguments after `kubectl`), down to the subcommand. */
export function commandPath(argv: readonly string[]): CommandPath {
  const path: string[] = [];
  const strays: string[] = [];
  let rest = [...argv];
  // Two levels decide what a call does: the verb, and the subcommand of verbs that have them.
  while (path.length < 2) {
    const { words, flags } = stripFlags(rest);
    const next = words[0];
    if (next === undefined) break;
    const child = childOf(path, next.text);
    if (child === undefined) break;
    for (const flag of flags) if (flag.index < next.index && !isRootFlag(flag.text)) strays.push(flag.text);
    path.push(child);
    rest = [...rest.slice(0, next.index), ...rest.slice(next.index + 1)];
  }
  return { path, strays };
}
