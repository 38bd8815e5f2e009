import { findResourceType, type ResourceType } from './resources.js';
import { CREATE_TYPES, SUBCOMMANDS, TOP_ALIASES } from './verbs.js';

// What kubectl makes of the words after the verb, per command: a subcommand, the resources named
// (`pods`, `po`, `pod/name`, `deploy,rs`, `deployments.apps`) and plain arguments. `--` only ends the
// flags (pflag): its words are arguments like those before it, except where a command reads
// cobra's ArgsLenAtDash (exec, debug, run and create's NAME), and a subcommand is only found before it
// (cobra's command lookup stops at `--`).

export interface KubectlTarget {
  /** The type as typed (`po`, `deploy.apps`). */
  text: string;
  /** Undefined when kubectl would not know the type (`the server doesn't have a resource type`). */
  type?: ResourceType;
  names: string[];
}

export interface Positionals {
  subcommand?: string;
  targets: KubectlTarget[];
  /** Positionals that are neither subcommand nor resource (label assignments, ports, can-i args). */
  args: string[];
  /** The command after `--` of the verbs that run one (exec, debug, run, create job/deployment/cronjob). */
  command: string[];
}

/** Verbs that take the words after `--` as a command to run, not as arguments (cobra's ArgsLenAtDash). */
const COMMAND_VERBS = new Set(['exec', 'debug', 'run', 'create']);

/** The target (a new one, made by the caller) with the type kubectl knows it by. */
function withType(target: KubectlTarget): KubectlTarget {
  const type = findResourceType(target.text);
  if (type) target.type = type;
  return target;
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

type Shaped = Omit<Positionals, 'command'>;

/** `verb sub …`: the subcommand when the first word before `--` names one, and what follows it. */
function withSubcommand(verb: string, words: string[], dash: number): { sub?: string; rest: string[] } {
  const [what, ...rest] = words;
  if (what === undefined || dash === 0 || !SUBCOMMANDS[verb]?.includes(what)) return { rest: words };
  return { sub: what, rest };
}

function shapeResources(verb: string, words: string[]): Shaped {
  if (verb === 'explain' && words[0]) {
    const [type = ''] = (words[0] as string).split('.');
    return { targets: [withType({ text: type, names: [] })], args: words.slice(1) };
  }
  if (verb === 'label' || verb === 'annotate' || verb === 'taint') {
    const isAssignment = (w: string) =>
      w.includes('=') || w.endsWith('-') || (verb === 'taint' && w.includes(':'));
    const { targets, rest } = resolveTargets(words.filter((w) => !isAssignment(w)));
    return { targets, args: [...rest, ...words.filter(isAssignment)] };
  }
  const { targets, rest } = resolveTargets(words);
  return { targets, args: rest };
}

/** `logs POD [CONTAINER]`, `exec POD`, …: a pod by name, or any `type/name`. */
function shapePod(words: string[]): Shaped {
  const [first, ...rest] = words;
  if (first === undefined) return { targets: [], args: [] };
  if (first.includes('/')) return { targets: resolveTargets([first]).targets, args: rest };
  return { targets: [withType({ text: 'pods', names: [first] })], args: rest };
}

function shapeCreate(words: string[], dash: number): Shaped {
  const [what, ...rest] = words;
  const type = what === undefined || dash === 0 ? undefined : CREATE_TYPES[what];
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

function shapeSubcommand(verb: string, words: string[], dash: number): Shaped {
  const { sub, rest } = withSubcommand(verb, words, dash);
  if (sub === undefined) return { targets: [], args: words };
  if (verb === 'top') {
    return {
      subcommand: sub,
      targets: [withType({ text: sub === 'pod' ? 'pods' : 'nodes', names: rest })],
      args: [],
    };
  }
  if (verb !== 'rollout' && verb !== 'set' && verb !== 'apply')
    return { subcommand: sub, targets: [], args: rest };
  const resourceWords = verb === 'set' ? rest.filter((w) => !w.includes('=')) : rest;
  const { targets, rest: left } = resolveTargets(resourceWords);
  const assignments = verb === 'set' ? rest.filter((w) => w.includes('=')) : [];
  return { subcommand: sub, targets, args: [...left, ...assignments] };
}

function shapeWords(verb: string, words: string[], dash: number): Shaped {
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
    case 'explain':
    case 'label':
    case 'annotate':
    case 'taint':
      return shapeResources(verb, words);
    case 'logs':
    case 'exec':
    case 'attach':
    case 'port-forward':
    case 'debug':
      return shapePod(words);
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
    case 'create':
      return shapeCreate(words, dash);
    default: {
      if (verb === 'top') return shapeSubcommand(verb, toTop(words, dash), dash);
      return SUBCOMMANDS[verb] ? shapeSubcommand(verb, words, dash) : { targets: [], args: words };
    }
  }
}

/** `top po` is `top pod`: the alias as the subcommand it names (only before `--`). */
function toTop(words: string[], dash: number): string[] {
  const [what, ...rest] = words;
  const sub = what === undefined || dash === 0 ? undefined : TOP_ALIASES[what];
  return sub === undefined ? words : [sub, ...rest];
}

/**
 * The words after the verb (those after `--` included, `dash` of them before it; -1 without `--`) as
 * kubectl reads them for that verb.
 */
export function shapePositionals(verb: string, words: string[], dash: number): Positionals {
  if (COMMAND_VERBS.has(verb) && dash !== -1) {
    return Object.assign(shapeWords(verb, words.slice(0, dash), dash), { command: words.slice(dash) });
  }
  // shapeWords makes a new object each time: it is completed, not copied (a parse per recorded call).
  return Object.assign(shapeWords(verb, words, dash), { command: [] });
}
