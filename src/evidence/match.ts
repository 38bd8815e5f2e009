import { parseKubectl, type KubectlCommand } from '../kubectl/parse.js';

// Whether a command a report cites is one the run made, through the shared kubectl parser: flag order,
// `-n`/`--namespace`, `po`/`pods`/`pod`, `-p`/`--previous` all read the same. A citation may leave out
// what the call had (`kubectl logs --previous` for `kubectl logs api-1 -n shop --previous`), never add
// to it: every name, namespace and flag it gives must be in the call. `--previous` must match either
// way: the previous container's log is another output than the current one's.

/** Flags that say nothing about what was read. */
const IGNORED_FLAGS = new Set(['request-timeout', 'v', 'context', 'cluster', 'user', 'kubeconfig']);
/** Flags that change what is read, so that a citation must say them as the call had them: `logs x` is not `logs x --previous`. */
const SAME_EITHER_WAY = ['previous'];

/** The parsed command of a cited line (its words, as a shell splits it), undefined when it is not a kubectl command line. */
export function parseCited(words: string[]): KubectlCommand | undefined {
  if (words.length < 2) return undefined;
  const [tool, ...argv] = words;
  if (!tool || !/(?:^|\/)kubectl$/.test(tool)) return undefined;
  return parseKubectl(argv);
}

const typeKey = (t: KubectlCommand['targets'][number]): string => t.type?.name ?? t.text.toLowerCase();

/** True when the recorded call `made` is the call `cited` describes. */
export function covers(made: KubectlCommand, cited: KubectlCommand): boolean {
  if (made.normalized === cited.normalized) return true;
  if (made.verb !== cited.verb || made.subcommand !== cited.subcommand) return false;
  if (cited.namespace !== undefined && !made.allNamespaces && made.namespace !== cited.namespace)
    return false;
  if (cited.allNamespaces && !made.allNamespaces) return false;
  for (const target of cited.targets) {
    const key = typeKey(target);
    const match = made.targets.find(
      (t) => typeKey(t) === key && target.names.every((name) => t.names.includes(name)),
    );
    // `kubectl logs api-1` is recorded as pods/api-1 by both; a bare name matches any type holding it.
    if (!match) return false;
  }
  for (const [flag, value] of Object.entries(cited.flags)) {
    if (flag === 'namespace' || flag === 'all-namespaces' || IGNORED_FLAGS.has(flag)) continue;
    if (made.flags[flag] !== value) return false;
  }
  for (const flag of SAME_EITHER_WAY)
    if ((made.flags[flag] ?? 'false') !== (cited.flags[flag] ?? 'false')) return false;
  return cited.args.every((arg) => made.args.includes(arg));
}
