import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Minimatch } from 'minimatch';
import { parseDocument } from '../../shared/yaml.js';
import { z } from '../../shared/zod.js';
import { AGENT_TOOLS, type AgentTool } from '../../shared/types.js';
import type { ClassifiedCommand } from './classify.js';
import { FileDepsCache } from '../../util/file-deps-cache.js';

// A persona's tool policy: `helpers.yaml` next to its PERSONA.md says which helpers the persona may
// use, as glob patterns over helper names (include/exclude lists, with categories naming groups of
// patterns). Helper names are `tool:<kind>` for a CLI's built-in tools and the words of a command for
// shell commands (`kubectl delete`, `helm install`); a kubectl call also has the names its parse gives
// it (`kubectl get pods`, `kubectl @mutate`, `kubectl --raw POST`), a `promql` call its subcommand and
// `promql @read` (every promql call reads). Exclude wins over include; what no include names is refused.

export const HELPERS_FILE = 'helpers.yaml';
const MAX_YAML_ALIASES = 100;

const patterns = z.array(z.string().trim().min(1, 'a pattern cannot be empty'));

/** helpers.yaml as written. */
export const helpersSchema = z.strictObject({
  categories: z
    .record(
      z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a category name is letters, digits, ".", "_", "-"'),
      z.strictObject({ description: z.string().optional(), patterns: patterns.min(1) }),
    )
    .default({}),
  include: patterns.default([]),
  exclude: patterns.default([]),
});
export type HelpersFile = z.infer<typeof helpersSchema>;

/** A compiled policy: where it came from and its matchers. */
export interface ToolPolicy {
  persona: string;
  /** The helpers.yaml it was read from, or `built-in` when the persona has none. */
  source: string;
  /** The patterns after category names were expanded. */
  include: readonly string[];
  exclude: readonly string[];
  /** One matcher per entry as written (its rule text names the entry: a category or a pattern). */
  matchers: { include: PatternMatcher[]; exclude: PatternMatcher[] };
}

interface PatternMatcher {
  /** As written in helpers.yaml (a category name, or the pattern itself). */
  entry: string;
  match: (name: string) => boolean;
}

export interface PolicyDecision {
  allowed: boolean;
  /** `exclude "kubectl @mutate"`, `include "kubectl @read"`, or `no include pattern`. */
  rule: string;
}

/** The policy of a persona without helpers.yaml: the shipped kubernetes-sre policy (read-only cluster access). */
export const DEFAULT_HELPERS: HelpersFile = {
  categories: {},
  include: ['tool:*', 'kubectl @read', 'kubectl --raw GET', 'promql @read'],
  exclude: [
    'tool:web',
    'tool:subagent',
    'kubectl @mutate',
    'kubectl @workload-access',
    'kubectl @secret-read',
    'kubectl @unknown',
    'kubectl --raw POST',
    'kubectl --raw PUT',
    'kubectl --raw DELETE',
    'helm install',
    'helm upgrade',
    'helm uninstall',
    'helm delete',
    'helm rollback',
    'helm test',
  ],
};

/** helpers.yaml cannot be used; the message names the file, the place and the fix. */
export class ToolPolicyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolPolicyError';
  }
}

const OPTIONS = { nocomment: true, nonegate: true, noext: true, dot: true } as const;

const expand = (entry: string, categories: HelpersFile['categories']): string[] =>
  categories[entry]?.patterns ?? [entry];

function compileEntries(entries: readonly string[], categories: HelpersFile['categories']): PatternMatcher[] {
  return entries.map((entry) => {
    const globs = expand(entry, categories).map((p) => new Minimatch(p, OPTIONS));
    return { entry, match: (name: string) => globs.some((g) => g.match(name)) };
  });
}

/** Problems a parsed file can still have: a `tool:` pattern that names no tool. */
function checkTools(file: HelpersFile): string[] {
  const problems: string[] = [];
  const all = [
    ...file.include,
    ...file.exclude,
    ...Object.values(file.categories).flatMap((c) => c.patterns),
  ];
  for (const p of all) {
    if (!p.startsWith('tool:')) continue;
    const glob = new Minimatch(p, OPTIONS);
    if (!AGENT_TOOLS.some((t) => glob.match(`tool:${t}`))) {
      problems.push(
        `pattern "${p}" names no tool; the tools are ${AGENT_TOOLS.map((t) => `tool:${t}`).join(', ')}`,
      );
    }
  }
  return problems;
}

/** Compiles a parsed helpers.yaml. */
export function compilePolicy(file: HelpersFile, persona: string, source: string): ToolPolicy {
  return {
    persona,
    source,
    include: file.include.flatMap((e) => expand(e, file.categories)),
    exclude: file.exclude.flatMap((e) => expand(e, file.categories)),
    matchers: {
      include: compileEntries(file.include, file.categories),
      exclude: compileEntries(file.exclude, file.categories),
    },
  };
}

/** Parses and validates helpers.yaml text; every problem is listed with its place. */
export function parseHelpers(text: string, file: string): HelpersFile {
  let value: unknown;
  try {
    const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
    const err = doc.errors[0];
    if (err) {
      const pos = err.linePos?.[0];
      const where = pos ? `${file}:${pos.line}:${pos.col}` : file;
      throw new ToolPolicyError(`${where}: ${err.message.split('\n')[0] ?? err.message}; fix the YAML`);
    }
    value = doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }) ?? {};
  } catch (err) {
    if (err instanceof ToolPolicyError) throw err;
    throw new ToolPolicyError(`${file} was rejected: ${(err as Error).message}; fix the YAML`);
  }
  const parsed = helpersSchema.safeParse(value);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ToolPolicyError(
      `${file} is not a valid tool policy: ${lines.join('; ')}. Expected keys: categories, include, exclude (see configs/personas/README.md)`,
    );
  }
  const problems = checkTools(parsed.data);
  if (problems.length > 0) throw new ToolPolicyError(`${file}: ${problems.join('; ')}`);
  return parsed.data;
}

/**
 * The tool policy of `persona`: `<personasDir>/<persona>/helpers.yaml`, or DEFAULT_HELPERS when the
 * persona has no such file. Throws ToolPolicyError for a file that exists but cannot be used.
 */
export function loadToolPolicy(personasDir: string, persona: string): Promise<ToolPolicy> {
  const file = path.join(personasDir, persona, HELPERS_FILE);
  return policyCache.get(`${persona}\0${file}`, async () => ({
    value: await readToolPolicy(file, persona),
    deps: [file],
  }));
}

async function readToolPolicy(file: string, persona: string): Promise<ToolPolicy> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return compilePolicy(DEFAULT_HELPERS, persona, 'built-in');
    throw new ToolPolicyError(
      `${file} cannot be read (${code ?? (err as Error).message}); fix its permissions`,
    );
  }
  return compilePolicy(parseHelpers(text, file), persona, file);
}

/**
 * Compiled tool policies by persona and file, kept while helpers.yaml is unchanged (or still absent):
 * every run's guard loads one, few change it. A broken file is not kept, so each run reports it.
 */
export const policyCache = new FileDepsCache<ToolPolicy>();

/** Decides for a helper known by several names: any excluded name refuses, else any included name allows. */
export function decide(policy: ToolPolicy, names: readonly string[]): PolicyDecision {
  for (const m of policy.matchers.exclude) {
    if (names.some((n) => m.match(n))) return { allowed: false, rule: `exclude "${m.entry}"` };
  }
  for (const m of policy.matchers.include) {
    if (names.some((n) => m.match(n))) return { allowed: true, rule: `include "${m.entry}"` };
  }
  return { allowed: false, rule: 'no include pattern' };
}

export const toolAllowed = (policy: ToolPolicy, tool: AgentTool): boolean =>
  decide(policy, [`tool:${tool}`]).allowed;

/** The helper names of one kubectl call: its words, each resource type it names, its category and raw method. */
export function kubectlNames(cmd: ClassifiedCommand): string[] {
  const names: string[] = [];
  if (cmd.verb === undefined) names.push('kubectl');
  else {
    names.push(`kubectl ${cmd.verb}`);
    if (cmd.subcommand) names.push(`kubectl ${cmd.verb} ${cmd.subcommand}`);
    for (const t of cmd.targets) names.push(`kubectl ${cmd.verb} ${t.type?.name ?? t.text}`);
  }
  names.push(`kubectl @${cmd.category}`);
  if (cmd.raw) names.push(`kubectl --raw ${cmd.raw.method}`);
  return names;
}

/** The sandbox's `promql` subcommands (src/prometheus/command.ts reads them). */
export const PROMQL_SUBCOMMANDS = [
  'query',
  'range',
  'series',
  'labels',
  'alerts',
  'rules',
  'metadata',
] as const;
export type PromqlSubcommand = (typeof PROMQL_SUBCOMMANDS)[number];

/** The helper names of one promql call: `promql`, its subcommand, and `promql @read` (every call reads). */
export const promqlNames = (kind: PromqlSubcommand): string[] => ['promql', `promql ${kind}`, 'promql @read'];
