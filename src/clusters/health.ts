import { runProcessGroup, type GroupResult } from '../util/process-group.js';
import { kubectlTarget } from './access.js';
import type { ClusterEntry } from './registry.js';

// Can each registry entry be reached? One `kubectl version` per entry (it asks the API server for its
// version, which every identity may read), remembered for a while so that /readyz, `status` and each
// run's preparation share one answer instead of probing on every request. An unreachable cluster
// degrades the daemon, it never makes it unready: the other clusters' incidents still run.

export interface ClusterState {
  name: string;
  reachable: boolean;
  /** Why it is not reachable (kubectl's last words), or undefined. */
  detail?: string;
  /** When it was probed (ms since the epoch). */
  checkedAt: number;
}

export type ProbeRunner = (input: {
  command: string;
  args: string[];
  env: Record<string, string>;
  timeoutMs: number;
}) => Promise<Pick<GroupResult, 'exitCode' | 'timedOut' | 'stderrTail' | 'error'>>;

export interface ClusterHealthOptions {
  clusters: ClusterEntry[];
  /** The kubectl to probe with (kubectl.command). */
  command: string;
  /** The daemon's environment: PATH and HOME for kubectl. */
  env: Record<string, string | undefined>;
  /** An answer younger than this is reused. */
  maxAgeMs?: number;
  timeoutMs?: number;
  now?: () => number;
  run?: ProbeRunner;
}

const DEFAULT_MAX_AGE_MS = 30_000;
const DEFAULT_TIMEOUT_MS = 3_000;
const DETAIL_CHARS = 300;

const runKubectl: ProbeRunner = (input) =>
  runProcessGroup({ ...input, cwd: '/', killGraceMs: 500, drainMs: 100 });

export class ClusterHealth {
  private readonly states = new Map<string, Promise<ClusterState>>();
  private readonly maxAgeMs: number;
  private readonly timeoutMs: number;
  private readonly now: () => number;
  private readonly run: ProbeRunner;

  constructor(private readonly options: ClusterHealthOptions) {
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_MAX_AGE_MS;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.now = options.now ?? Date.now;
    this.run = options.run ?? runKubectl;
  }

  /** Every entry's state, probing those not probed within maxAgeMs (in parallel). */
  all(): Promise<ClusterState[]> {
    return Promise.all(this.options.clusters.map((entry) => this.of(entry.name)));
  }

  /** One entry's state (a name the registry does not hold is unreachable, saying so). */
  async of(name: string): Promise<ClusterState> {
    const entry = this.options.clusters.find((e) => e.name === name);
    if (!entry)
      return { name, reachable: false, detail: 'not in the cluster registry', checkedAt: this.now() };
    const cached = this.states.get(name);
    if (cached) {
      const state = await cached;
      if (this.now() - state.checkedAt < this.maxAgeMs) return state;
      // Another caller may have started the next probe meanwhile.
      const latest = this.states.get(name);
      if (latest && latest !== cached) return latest;
    }
    const probe = this.probe(entry);
    this.states.set(name, probe);
    return probe;
  }

  private async probe(entry: ClusterEntry): Promise<ClusterState> {
    const target = kubectlTarget(entry);
    const env: Record<string, string> = { PATH: this.options.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
    if (this.options.env.HOME) env.HOME = this.options.env.HOME;
    if (target.kubeconfig) env.KUBECONFIG = target.kubeconfig;
    const timeoutMs = this.timeoutMs;
    const request = ['--request-timeout', `${Math.max(1, Math.floor(timeoutMs / 1000))}s`];
    const result = await this.run({
      command: this.options.command,
      args: [...target.args, ...request, 'version'],
      env,
      timeoutMs,
    }).catch((err: unknown) => ({
      exitCode: null,
      timedOut: false,
      stderrTail: '',
      error: err instanceof Error ? err.message : String(err),
    }));
    const checkedAt = this.now();
    if (result.exitCode === 0) return { name: entry.name, reachable: true, checkedAt };
    const why = result.error
      ? `${this.options.command} could not be started (${result.error})`
      : result.timedOut
        ? `${this.options.command} version did not answer within ${timeoutMs} ms`
        : lastLine(result.stderrTail) || `${this.options.command} version exited with ${result.exitCode}`;
    return { name: entry.name, reachable: false, detail: why.slice(0, DETAIL_CHARS), checkedAt };
  }
}

const lastLine = (text: string): string =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .at(-1) ?? '';
