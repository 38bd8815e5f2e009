import { runClusterKubectl, type ClusterKubectl } from './kubectl.js';
import type { ClusterEntry } from './types.js';

// Permissions are probed when the producer did not write them: `kubectl auth can-i --list` in the
// incident's namespace and the checks the persona's investigation needs (pods, logs, events,
// deployments), as an `incident_cluster_permissions.json`-shaped document marked as probed by the
// daemon. Cached per cluster and namespace for PERMISSIONS_TTL_MS. A producer's own file always wins.

export const PERMISSIONS_TTL_MS = 5 * 60_000;
const LIST_LINES = 200;

/** The namespace-scoped checks: field name → `kubectl auth can-i` arguments. */
const CHECKS: Record<string, string[]> = {
  can_get_pods: ['get', 'pods'],
  can_get_logs: ['get', 'pods/log'],
  can_get_events: ['list', 'events'],
  can_get_deployments: ['get', 'deployments.apps'],
  can_get_configmaps: ['get', 'configmaps'],
};

export interface ProbedPermissions {
  source: string;
  cluster_name: string;
  namespace: string;
  validated_at: string;
  [check: string]: unknown;
  rules: string[];
  warnings: string[];
}

export async function probePermissions(
  kubectl: ClusterKubectl,
  entry: ClusterEntry,
  namespace: string,
  now: () => Date = () => new Date(),
): Promise<ProbedPermissions> {
  const can = async (args: string[]): Promise<boolean | string> => {
    const { result, stdout } = await runClusterKubectl(kubectl, entry, [
      'auth',
      'can-i',
      ...args,
      '--namespace',
      namespace,
    ]);
    const answer = stdout.trim().split('\n')[0]?.trim();
    if (answer === 'yes') return true;
    if (answer === 'no') return false;
    return result.stderrTail.trim().split('\n').at(-1) || `exit ${String(result.exitCode)}`;
  };
  const [list, ...answers] = await Promise.all([
    runClusterKubectl(kubectl, entry, ['auth', 'can-i', '--list', '--namespace', namespace]),
    ...Object.values(CHECKS).map(can),
  ]);
  const warnings: string[] = [];
  const checks: Record<string, boolean> = {};
  Object.keys(CHECKS).forEach((field, i) => {
    const answer = answers[i];
    if (typeof answer === 'boolean') checks[field] = answer;
    else {
      checks[field] = false;
      warnings.push(`${field}: kubectl auth can-i did not answer (${String(answer)})`);
    }
  });
  const rules = list.result.exitCode === 0 ? list.stdout.trim().split('\n').slice(0, LIST_LINES) : [];
  if (list.result.exitCode !== 0)
    warnings.push(
      `kubectl auth can-i --list failed: ${list.result.stderrTail.trim().split('\n').at(-1) ?? 'no output'}`,
    );
  return {
    source:
      'probed by triage-runner with kubectl auth can-i (the workspace had no incident_cluster_permissions.json)',
    cluster_name: entry.name,
    namespace,
    validated_at: now().toISOString(),
    ...checks,
    rules,
    warnings,
  };
}

/** Probes cached per cluster and namespace. */
export class PermissionsCache {
  private readonly cache = new Map<string, { at: number; value: Promise<ProbedPermissions> }>();

  constructor(
    private readonly kubectl: ClusterKubectl,
    private readonly now: () => Date = () => new Date(),
    private readonly ttlMs: number = PERMISSIONS_TTL_MS,
  ) {}

  get(entry: ClusterEntry, namespace: string): Promise<ProbedPermissions> {
    const key = `${entry.name}\u0000${namespace}`;
    const at = this.now().getTime();
    const hit = this.cache.get(key);
    if (hit && at - hit.at < this.ttlMs) return hit.value;
    const value = probePermissions(this.kubectl, entry, namespace, this.now);
    this.cache.set(key, { at, value });
    value.catch(() => this.cache.delete(key));
    return value;
  }
}
