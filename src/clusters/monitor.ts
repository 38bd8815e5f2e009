import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { runClusterKubectl, type ClusterKubectl } from './kubectl.js';
import { PermissionsCache, type ProbedPermissions } from './permissions.js';
import type { ClusterAccess, ClusterEntry } from './types.js';

// Cluster access is checked, not assumed: the daemon asks each cluster it serves for its version
// through the same kubectl the broker and the triage script run, with the configured credentials, and
// says what is wrong and what to do when it cannot. Checked at start, periodically, by /readyz (a check
// named `cluster:<name>`) and when a run starts; a run whose cluster cannot be reached still runs, marked.

/** How long a check may take. */
export const ACCESS_TIMEOUT_MS = 10_000;
/** How often the daemon checks again. */
export const ACCESS_INTERVAL_MS = 60_000;
/** A check younger than this is what a starting run uses. */
export const ACCESS_FRESH_MS = 30_000;

const lastLine = (text: string): string =>
  text
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1) ?? '';

/** kubectl's address when it has no kubeconfig at all (compiled into it). */
export const KUBECTL_FALLBACK = 'localhost:8080';

/**
 * kubectl has no kubeconfig for `entry`: none configured, and none at its default place for the daemon's
 * user (`~/.kube/config`). It then asks http://localhost:8080, whatever listens there, so its own
 * message (connection refused, or a NotFound from a server on that port) does not say so.
 */
export function fellBack(entry: ClusterEntry, home: string | undefined): boolean {
  if (entry.kubeconfig) return false;
  return !existsSync(path.join(home ?? homedir(), '.kube', 'config'));
}

/** What to do about a failed check, from the entry and from kubectl's own message. */
function advice(entry: ClusterEntry, message: string, noKubeconfig: boolean): string {
  if (noKubeconfig || (!entry.kubeconfig && /localhost:8080|127\.0\.0\.1:8080/.test(message)))
    return `no kubeconfig is configured, so kubectl fell back to ${KUBECTL_FALLBACK} (kubeconfig: is unset and the daemon's user has no ~/.kube/config): set kubeconfig: (or clusters:) to the cluster's kubeconfig`;
  if (/Unauthorized|credentials|token has expired|x509/i.test(message))
    return `the cluster refused the credentials in ${entry.kubeconfig ?? 'the default kubeconfig'}: renew them`;
  if (/context .* does not exist|no context exists/i.test(message))
    return `the context ${entry.context ?? ''} is not in ${entry.kubeconfig ?? 'the kubeconfig'}: fix the context name`;
  return `check that the API server in ${entry.kubeconfig ?? 'the default kubeconfig'} is reachable from the daemon's host`;
}

/** One check of one cluster: `kubectl version -o json` must report the server's version. */
export async function checkClusterAccess(
  kubectl: ClusterKubectl,
  entry: ClusterEntry,
  now: () => Date = () => new Date(),
): Promise<ClusterAccess> {
  const timeoutS = Math.max(1, Math.ceil(kubectl.timeoutMs / 1000));
  const { result, stdout } = await runClusterKubectl(kubectl, entry, [
    'version',
    '--output=json',
    `--request-timeout=${timeoutS}s`,
  ]);
  const checkedAt = now().toISOString();
  let server = false;
  try {
    server = Boolean((JSON.parse(stdout) as { serverVersion?: unknown }).serverVersion);
  } catch {
    server = false;
  }
  if (result.exitCode === 0 && server) return { name: entry.name, reachable: true, checkedAt };
  const why = result.error
    ? `${kubectl.command} could not be started (${result.error}): set kubectl.command to a kubectl on the daemon's PATH`
    : result.timedOut
      ? `kubectl did not answer within ${kubectl.timeoutMs} ms`
      : lastLine(result.stderrTail) || `kubectl exited ${String(result.exitCode)} without a server version`;
  const detail = result.error ? why : `${why}: ${advice(entry, why, fellBack(entry, kubectl.env.HOME))}`;
  return {
    name: entry.name,
    reachable: false,
    detail: `cluster ${entry.name} cannot be reached: ${detail}`,
    checkedAt,
  };
}

export interface ClusterAccessOptions {
  entries: ClusterEntry[];
  kubectl: ClusterKubectl;
  now?: () => Date;
  intervalMs?: number;
  onChange?: (access: ClusterAccess) => void;
}

/** The daemon's view of its clusters: checked at start and every interval, and on demand for a run. */
export class ClusterAccessMonitor {
  private readonly last = new Map<string, ClusterAccess>();
  private readonly pending = new Map<string, Promise<ClusterAccess>>();
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => Date;

  private readonly probes: PermissionsCache;

  constructor(private readonly options: ClusterAccessOptions) {
    this.now = options.now ?? (() => new Date());
    this.probes = new PermissionsCache(options.kubectl, this.now);
  }

  /** The permissions of the daemon's credentials in `namespace` of the run's cluster (cached with a TTL). */
  permissions(name: string | undefined, namespace: string): Promise<ProbedPermissions> {
    const entry = this.options.entries.find((e) => e.name === name) ?? this.options.entries[0];
    if (!entry) return Promise.reject(new Error('no cluster is configured'));
    return this.probes.get(entry, namespace);
  }

  /** The last checks, starting the periodic check on first use (the daemon's first readiness check). */
  readiness(): Promise<ClusterAccess[]> {
    return this.timer ? this.current() : this.start();
  }

  /** Checks every cluster now and then every interval. */
  start(): Promise<ClusterAccess[]> {
    if (!this.timer) {
      this.timer = setInterval(() => void this.checkAll(), this.options.intervalMs ?? ACCESS_INTERVAL_MS);
      this.timer.unref();
    }
    return this.checkAll();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  checkAll(): Promise<ClusterAccess[]> {
    return Promise.all(this.options.entries.map((entry) => this.check(entry)));
  }

  /** The last check of every cluster, checking those never checked. */
  async current(): Promise<ClusterAccess[]> {
    return Promise.all(this.options.entries.map((e) => this.last.get(e.name) ?? this.check(e)));
  }

  /** The access of the cluster a run investigates (the only one today), checked again when stale. */
  async forRun(name?: string): Promise<ClusterAccess> {
    const entry = this.options.entries.find((e) => e.name === name) ?? this.options.entries[0];
    if (!entry)
      return {
        name: name ?? 'default',
        reachable: false,
        detail: 'no cluster is configured',
        checkedAt: this.now().toISOString(),
      };
    const known = this.last.get(entry.name);
    if (known && this.now().getTime() - Date.parse(known.checkedAt) < ACCESS_FRESH_MS) return known;
    return this.check(entry);
  }

  private check(entry: ClusterEntry): Promise<ClusterAccess> {
    let running = this.pending.get(entry.name);
    if (!running) {
      running = checkClusterAccess(this.options.kubectl, entry, this.now).then((access) => {
        const before = this.last.get(entry.name);
        this.last.set(entry.name, access);
        if (before?.reachable !== access.reachable) this.options.onChange?.(access);
        return access;
      });
      void running.finally(() => this.pending.delete(entry.name));
      this.pending.set(entry.name, running);
    }
    return running;
  }
}
