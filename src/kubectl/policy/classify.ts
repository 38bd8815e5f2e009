import { KUBECTL_VERBS, SUBCOMMANDS, parseKubectl, type KubectlCommand } from '../parse.js';
import { READ_VERBS } from '../verbs.js';

// What one kubectl call would do to a cluster: read, change state, enter a workload, hit a raw API
// path, read Secret data, or unknown. The guard's verdicts start here, on top of the shared parser's
// syntax; kept apart from the parser so that a parser change for the frozen-cluster shim cannot
// silently change what the guard allows (the differential test against the real kubectl checks both).

/** What a call does: read, change state, enter a workload, hit a raw API path, read Secret data, or unknown. */
export type KubectlCategory = 'read' | 'mutate' | 'workload-access' | 'raw' | 'secret-read' | 'unknown';

export interface Verdict {
  category: KubectlCategory;
  /** True when the call can neither change the cluster nor reveal Secret data. */
  readOnly: boolean;
  /** Why: `verb delete`, `Secret data via -o yaml`, `raw POST /api/…`. */
  reason: string;
  /**
   * Refused only because it names Secrets, printing no more than names, types and key sizes (`get
   * secrets`, `describe secret x`): what the frozen-cluster shim still answers, having no credentials.
   */
  secretMetadata?: true;
}

/** A parsed call with its verdict. */
export type ClassifiedCommand = KubectlCommand & Verdict;

const ACCESS_VERBS = new Set(['exec', 'attach', 'port-forward', 'cp', 'debug', 'proxy']);
/** Subcommands that only read; every other subcommand of a verb that has them changes something. */
const READ_SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = {
  rollout: ['status', 'history'],
  config: ['current-context', 'get-contexts', 'get-clusters', 'get-users'],
  auth: ['can-i', 'whoami'],
  top: ['pod', 'node'],
  apply: ['view-last-applied'],
  'cluster-info': ['dump'],
  plugin: ['list'],
};
/**
 * Subcommands that print credentials: `config view` prints the daemon's kubeconfig (`--raw` and
 * `--flatten` with tokens and keys); the agent has no use for it at all.
 */
const CREDENTIAL_SUBCOMMANDS: Readonly<Record<string, readonly string[]>> = { config: ['view'] };
/** Verbs whose bare form (no subcommand) only prints help or reads. */
const BARE_READS = new Set(['top', 'cluster-info', 'plugin', 'rollout', 'config', 'auth']);
/** Verbs that only group commands of their own (`kubectl alpha …`): nothing to run by themselves. */
const GROUP_VERBS = new Set(['alpha']);
/**
 * Every other verb of the parser's list changes something: apply, create, delete, scale, drain, … A
 * verb the parser learns is refused until it is listed here as a read or as workload access.
 */
const MUTATE_VERBS: ReadonlySet<string> = new Set(
  [...KUBECTL_VERBS].filter(
    (v) => !READ_VERBS.has(v) && !ACCESS_VERBS.has(v) && !BARE_READS.has(v) && !GROUP_VERBS.has(v),
  ),
);
/** Output formats that print an object's fields, hence a Secret's data. */
const DATA_OUTPUTS =
  /^(json|yaml|kyaml|jsonpath|jsonpath-as-json|jsonpath-file|go-template|go-template-file|template|templatefile|custom-columns|custom-columns-file)(=|$)/;
/** Rounds of percent-decoding a raw path gets before it must be stable. */
const MAX_DECODES = 4;

/**
 * A raw API path as the API server will see it: percent-decoded until stable, dot segments and
 * repeated slashes resolved, lower case. Undefined when it does not decode (or keeps changing).
 */
export function canonicalRawPath(raw: string): string | undefined {
  let text = raw;
  for (let i = 0; ; i++) {
    let next: string;
    try {
      next = decodeURIComponent(text);
    } catch {
      return undefined;
    }
    if (next === text) break;
    if (i >= MAX_DECODES) return undefined;
    text = next;
  }
  const [pathPart = '', ...query] = text.split('?');
  const segments: string[] = [];
  for (const segment of pathPart.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const joined = `/${segments.join('/')}`;
  return (query.length > 0 ? `${joined}?${query.join('?')}` : joined).toLowerCase();
}

/** A path to Secrets (a list, one Secret, or anything under one), anywhere in the canonical text. */
const isSecretsPath = (p: string) => /\/secrets(\/|\?|#|;|$)/.test(p);
/** Through the API server to a workload: proxy, exec, attach, port-forward (the workload answers, not the API). */
const isWorkloadPath = (p: string) =>
  /\/(pods|services|nodes)\/[^/]+\/(proxy|exec|attach|portforward)(\/|\?|#|;|$)/.test(p) ||
  /^\/api\/v1\/proxy(\/|\?|$)/.test(p);

const RAW_READ_METHOD = 'GET';

function rawVerdict(method: string, path: string): Verdict {
  const canonical = canonicalRawPath(path);
  if (canonical === undefined)
    return {
      category: 'unknown',
      readOnly: false,
      reason: `raw path ${path} that does not percent-decode to a stable path`,
    };
  if (isSecretsPath(canonical))
    return { category: 'secret-read', readOnly: false, reason: `raw ${method} of Secrets ${path}` };
  if (isWorkloadPath(canonical))
    return {
      category: 'workload-access',
      readOnly: false,
      reason: `raw ${method} through the API server to a workload ${path}`,
    };
  return { category: 'raw', readOnly: method === RAW_READ_METHOD, reason: `raw ${method} ${path}` };
}

function verbVerdict(cmd: KubectlCommand): Verdict {
  const verb = cmd.verb as string;
  const { subcommand } = cmd;
  if (ACCESS_VERBS.has(verb)) return { category: 'workload-access', readOnly: false, reason: `verb ${verb}` };
  if (SUBCOMMANDS[verb] && subcommand !== undefined) {
    if (CREDENTIAL_SUBCOMMANDS[verb]?.includes(subcommand))
      return {
        category: 'secret-read',
        readOnly: false,
        reason: `${verb} ${subcommand} (it prints the daemon's credentials)`,
      };
    return READ_SUBCOMMANDS[verb]?.includes(subcommand)
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

/** The verdict on a parsed call. */
export function classify(cmd: KubectlCommand): Verdict {
  if (cmd.error) return { category: 'unknown', readOnly: false, reason: cmd.error };
  if (cmd.verb === undefined) return { category: 'read', readOnly: true, reason: 'no command (help)' };
  if (cmd.raw) return rawVerdict(cmd.raw.method, cmd.raw.path);
  if (cmd.plugin)
    return { category: 'unknown', readOnly: false, reason: `not a kubectl command: ${cmd.verb}` };
  const verdict = verbVerdict(cmd);
  if (verdict.category !== 'read') return verdict;
  // `explain` names a type only to print its schema (the OpenAPI document): it fetches no object.
  const fetched = cmd.verb === 'explain' ? [] : cmd.targets;
  const secrets = fetched.some((t) => t.type?.name === 'secrets');
  const output = cmd.output ?? (cmd.flags.template !== undefined ? 'go-template' : undefined);
  if (cmd.verb === 'get' && secrets && output !== undefined && DATA_OUTPUTS.test(output)) {
    const format = output.split('=')[0] ?? output;
    return { category: 'secret-read', readOnly: false, reason: `Secret data via -o ${format}` };
  }
  // Whatever kubectl prints, a call on Secrets fetches them whole to the daemon's side; the broker's
  // identity should not be able to read them at all (see the broker-identity check).
  if (secrets)
    return { category: 'secret-read', readOnly: false, reason: 'a call on Secrets', secretMetadata: true };
  if (cmd.verb === 'describe' && fetched.some((t) => t.type?.name === 'serviceaccounts'))
    return {
      category: 'secret-read',
      readOnly: false,
      reason: "describe serviceaccounts (it lists the namespace's Secrets)",
    };
  return verdict;
}

/** Parses and classifies the arguments of one kubectl call (without the `kubectl` word). Never throws. */
export function classifyKubectl(argv: readonly string[]): ClassifiedCommand {
  const cmd = parseKubectl(argv);
  return { ...cmd, ...classify(cmd) };
}

/** One command kubectl has: its verb, a subcommand when it has them, and how a plain call of it is classified. */
export interface KubectlCatalogEntry {
  verb: string;
  subcommand?: string;
  category: KubectlCategory;
}

/**
 * Every verb and subcommand the parser knows, classified as a call without flags would be. Tool
 * permission rules that CLIs match by command prefix (`kubectl delete`) are derived from it.
 */
export function kubectlCatalog(): KubectlCatalogEntry[] {
  const out: KubectlCatalogEntry[] = [];
  for (const verb of KUBECTL_VERBS) {
    const subs = SUBCOMMANDS[verb];
    if (ACCESS_VERBS.has(verb)) out.push({ verb, category: 'workload-access' });
    else if (MUTATE_VERBS.has(verb)) out.push({ verb, category: 'mutate' });
    else if (READ_VERBS.has(verb) || BARE_READS.has(verb)) out.push({ verb, category: 'read' });
    else if (!subs) out.push({ verb, category: 'unknown' });
    for (const subcommand of subs ?? []) {
      out.push({ verb, subcommand, category: verbVerdict({ ...parseKubectl([verb, subcommand]) }).category });
    }
  }
  return out;
}
