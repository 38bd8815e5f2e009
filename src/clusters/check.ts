import { readFile } from 'node:fs/promises';
import { isMap, isSeq, parseDocument } from '../shared/yaml.js';
import type { ClusterEntry } from './registry.js';

// validate-config's look at each registry entry's kubeconfig: readable, YAML, and holding the context
// the entry names (or a current-context). A kubeconfig holds credentials: no message quotes its
// contents, only the file's path, the line of a syntax error and context names.

export interface ClusterFileProblem {
  path: string;
  message: string;
}

/** The names of the contexts a kubeconfig defines, its current-context, and the cluster each context uses. */
interface KubeconfigShape {
  contexts: Map<string, string | undefined>;
  clusters: Set<string>;
  current?: string;
}

const MAX_KUBECONFIG_BYTES = 4 * 1024 * 1024;

export async function clusterFileProblems(entries: ClusterEntry[]): Promise<ClusterFileProblem[]> {
  const problems: ClusterFileProblem[] = [];
  for (const entry of entries) {
    if (!entry.kubeconfig) continue;
    const at = `clusters.${entry.name}`;
    const shape = await readShape(entry.kubeconfig).catch((err: Error) => err);
    if (shape instanceof Error) {
      problems.push({ path: `${at}.kubeconfig`, message: shape.message });
      continue;
    }
    const context = entry.context ?? shape.current;
    if (context === undefined) {
      problems.push({
        path: `${at}.context`,
        message: `${entry.kubeconfig} has no current-context; name the context to use in clusters.${entry.name}.context (it defines: ${[...shape.contexts.keys()].join(', ') || 'none'})`,
      });
      continue;
    }
    if (!shape.contexts.has(context)) {
      problems.push({
        path: entry.context ? `${at}.context` : `${at}.kubeconfig`,
        message: `context ${JSON.stringify(context)} is not defined in ${entry.kubeconfig} (it defines: ${[...shape.contexts.keys()].join(', ') || 'none'})`,
      });
      continue;
    }
    const cluster = shape.contexts.get(context);
    if (cluster === undefined || !shape.clusters.has(cluster))
      problems.push({
        path: `${at}.kubeconfig`,
        message: `context ${JSON.stringify(context)} in ${entry.kubeconfig} names a cluster the file does not define${cluster ? ` (${JSON.stringify(cluster)})` : ''}`,
      });
  }
  return problems;
}

async function readShape(file: string): Promise<KubeconfigShape> {
  let text: string;
  try {
    const data = await readFile(file);
    if (data.length > MAX_KUBECONFIG_BYTES)
      throw new Error(`${file} is larger than ${MAX_KUBECONFIG_BYTES} bytes; is it a kubeconfig?`);
    text = data.toString('utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (!code) throw err;
    throw new Error(`${file} cannot be read (${code}); mount the cluster's kubeconfig there or fix the path`);
  }
  const doc = parseDocument(text);
  const [error] = doc.errors;
  if (error) {
    // The parser's message may quote the file; only the position is shown.
    const line = error.linePos?.[0].line;
    throw new Error(`${file} is not valid YAML${line ? ` (line ${line})` : ''}; it cannot be a kubeconfig`);
  }
  const root = doc.contents;
  if (!isMap(root))
    throw new Error(`${file} is not a kubeconfig (a YAML mapping with contexts and clusters)`);
  const names = (key: string): { name: string; value: unknown }[] => {
    const list = root.get(key);
    if (!isSeq(list)) return [];
    return list.items.flatMap((item) => {
      if (!isMap(item)) return [];
      const name = item.get('name');
      return typeof name === 'string'
        ? [{ name, value: item.get(key === 'contexts' ? 'context' : 'cluster') }]
        : [];
    });
  };
  const contexts = new Map<string, string | undefined>();
  for (const { name, value } of names('contexts')) {
    const cluster = isMap(value) ? value.get('cluster') : undefined;
    contexts.set(name, typeof cluster === 'string' ? cluster : undefined);
  }
  const current = root.get('current-context');
  return {
    contexts,
    clusters: new Set(names('clusters').map((c) => c.name)),
    ...(typeof current === 'string' && current !== '' ? { current } : {}),
  };
}
