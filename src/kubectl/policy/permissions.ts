import { AGENT_TOOLS, type ToolPermissions } from '../../shared/types.js';
import { kubectlCatalog } from './classify.js';
import { decide, PROMQL_SUBCOMMANDS, promqlNames, toolAllowed, type ToolPolicy } from './policy.js';

// One tool policy, told to every CLI: which built-in tools the agent gets and which shell commands its
// CLI should refuse by word prefix. CLIs match commands by prefix, so this is coarser than the guard:
// a kubectl verb is refused when a plain call of it would be, and what only flags or resources decide
// (`get secrets -o yaml`, `--raw`, `--server`) is left to the guard.

/** Glob characters and category markers: a pattern holding one is not a literal command prefix. */
const NOT_LITERAL = /[*?[\]{}@]|^tool:/;

const key = (words: string[]) => words.join(' ');

/** Command prefixes the policy refuses: every kubectl verb and subcommand it refuses, and literal excludes. */
export function deniedCommands(policy: ToolPolicy): string[][] {
  const out = new Map<string, string[]>();
  const add = (words: string[]) => {
    // A shorter prefix already covers a longer one.
    for (let n = 1; n < words.length; n++) if (out.has(key(words.slice(0, n)))) return;
    out.set(key(words), words);
  };
  for (const entry of kubectlCatalog()) {
    const words = ['kubectl', entry.verb, ...(entry.subcommand ? [entry.subcommand] : [])];
    const names = [key(words), `kubectl @${entry.category}`];
    if (entry.subcommand) names.push(`kubectl ${entry.verb}`);
    if (!decide(policy, names).allowed) add(words);
  }
  // The sandbox's promql: refused by the CLI too where the persona refuses it.
  const promql = PROMQL_SUBCOMMANDS.filter((kind) => !decide(policy, promqlNames(kind)).allowed);
  if (promql.length === PROMQL_SUBCOMMANDS.length) add(['promql']);
  else for (const kind of promql) add(['promql', kind]);
  for (const pattern of policy.exclude) {
    if (NOT_LITERAL.test(pattern)) continue;
    const words = pattern.split(/\s+/).filter(Boolean);
    // `kubectl --raw POST` names a kind of call, not the words it starts with.
    if (words.length > 0 && !words.some((w) => w.startsWith('-'))) add(words);
  }
  // Longer prefixes added before a shorter one that covers them are dropped here.
  return [...out.values()].filter(
    (words) => !words.some((_, n) => n > 0 && n < words.length && out.has(key(words.slice(0, n)))),
  );
}

/** The CLI-neutral form of a policy that adapters turn into their CLI's permission settings. */
export function toolPermissions(policy: ToolPolicy): ToolPermissions {
  let permissions = byPolicy.get(policy);
  if (!permissions) {
    permissions = {
      persona: policy.persona,
      allowedTools: AGENT_TOOLS.filter((t) => toolAllowed(policy, t)),
      deniedTools: AGENT_TOOLS.filter((t) => !toolAllowed(policy, t)),
      deniedCommands: deniedCommands(policy),
      reason: `The ${policy.persona} persona's tool policy does not allow this command; recommend it in the report instead of running it.`,
    };
    byPolicy.set(policy, permissions);
  }
  return permissions;
}

/** A policy's permissions, worked out once per compiled policy (loadToolPolicy keeps one per helpers.yaml). */
const byPolicy = new WeakMap<ToolPolicy, ToolPermissions>();
