import { runProcessGroup, type GroupResult } from '../util/process-group.js';
import type { ClusterEntry } from './types.js';

// Runs the daemon's kubectl (`kubectl.command`) against one cluster entry: its kubeconfig and context,
// the daemon's HOME and PATH, stdout collected up to a bound. The access check and the permissions
// probe use it, so a stand-in kubectl stands in for a cluster in tests as it does for the broker.

const MAX_STDOUT_BYTES = 1024 * 1024;

export interface ClusterKubectl {
  command: string;
  env: Record<string, string | undefined>;
  cwd: string;
  timeoutMs: number;
}

export interface KubectlRun {
  result: GroupResult;
  stdout: string;
}

/** Global flags naming the entry's context (the kubeconfig goes in KUBECONFIG, as the broker's calls have it). */
export const entryArgs = (entry: ClusterEntry): string[] =>
  entry.context ? ['--context', entry.context] : [];

export async function runClusterKubectl(
  kubectl: ClusterKubectl,
  entry: ClusterEntry,
  args: string[],
  signal?: AbortSignal,
): Promise<KubectlRun> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'HOME'] as const) {
    const value = kubectl.env[key];
    if (value !== undefined) env[key] = value;
  }
  if (entry.kubeconfig) env.KUBECONFIG = entry.kubeconfig;
  const chunks: Buffer[] = [];
  let kept = 0;
  const result = await runProcessGroup({
    command: kubectl.command,
    args: [...entryArgs(entry), ...args],
    cwd: kubectl.cwd,
    env,
    timeoutMs: kubectl.timeoutMs,
    killGraceMs: 1_000,
    ...(signal ? { signal } : {}),
    onData: (chunk, stream) => {
      if (stream !== 'stdout' || kept >= MAX_STDOUT_BYTES) return;
      chunks.push(chunk);
      kept += chunk.length;
    },
  });
  return { result, stdout: Buffer.concat(chunks).toString('utf8') };
}
