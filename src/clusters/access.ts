import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileModeFor } from '../util/fs.js';
import type { ClusterEntry } from './registry.js';

// How kubectl is pointed at one registry entry without a flag on every call: KUBECONFIG lists a
// small file holding only `current-context` (no credentials) before the entry's kubeconfig, and
// kubectl takes current-context from the first file that sets it. So the triage script's own kubectl
// calls, which take no --context, reach the entry's context too.

/** The context file a run writes into its bundle when its entry names a context. */
export const CONTEXT_FILE = 'kube-context.yaml';

/** kubectl's default kubeconfig, used when an entry names a context but no kubeconfig. */
const defaultKubeconfig = (home: string | undefined): string => path.join(home ?? '/root', '.kube', 'config');

/** The KUBECONFIG value for `entry` with its context file in `dir`; undefined when kubectl's defaults apply. */
export function kubeconfigValue(
  entry: Pick<ClusterEntry, 'kubeconfig' | 'context'>,
  dir: string,
  home: string | undefined,
): string | undefined {
  if (!entry.context) return entry.kubeconfig;
  return `${path.join(dir, CONTEXT_FILE)}${path.delimiter}${entry.kubeconfig ?? defaultKubeconfig(home)}`;
}

/** Writes the context file kubeconfigValue lists first, when the entry names a context. */
export async function writeContextFile(entry: Pick<ClusterEntry, 'context'>, dir: string): Promise<void> {
  if (!entry.context) return;
  // JSON strings are YAML scalars: any context name is written literally.
  await writeFile(
    path.join(dir, CONTEXT_FILE),
    `apiVersion: v1\nkind: Config\ncurrent-context: ${JSON.stringify(entry.context)}\n`,
    { mode: fileModeFor(path.join(dir, CONTEXT_FILE)) },
  );
}
