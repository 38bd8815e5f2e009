import { promGet } from './client.js';
import { endpointLabel, type EndpointResolution } from './endpoint.js';

// Each cluster's Prometheus endpoint is checked, not assumed: the daemon asks it for its build info
// (`/api/v1/status/buildinfo`, which Prometheus, Thanos and Mimir serve) with the configured credentials
// and says what is wrong when it cannot. Answered in /readyz as `prometheus:<cluster>`; an endpoint
// that cannot be reached degrades the daemon, and runs go on (their `promql` says what failed).

/** How long a check may take. */
export const CHECK_TIMEOUT_MS = 10_000;
/** A check younger than this is answered again without asking. */
export const CHECK_FRESH_MS = 30_000;
const MAX_CHECK_BYTES = 64 * 1024;

export interface PrometheusAccess {
  cluster: string;
  reachable: boolean;
  /** What answered (reachable), or what is wrong and what to do. */
  detail: string;
  checkedAt: string;
}

/** One check of one endpoint. */
export async function checkEndpoint(
  cluster: string,
  resolution: EndpointResolution,
  now: () => Date = () => new Date(),
): Promise<PrometheusAccess> {
  const checkedAt = () => now().toISOString();
  if (!resolution.ok)
    return { cluster, reachable: false, detail: resolution.problem, checkedAt: checkedAt() };
  const { endpoint } = resolution;
  const result = await promGet(
    endpoint,
    { endpoint: 'buildinfo', params: [] },
    { timeoutMs: CHECK_TIMEOUT_MS, maxBytes: MAX_CHECK_BYTES },
  );
  const where = endpointLabel(endpoint.url);
  if (!result.ok) return { cluster, reachable: false, detail: result.message, checkedAt: checkedAt() };
  if (result.envelope.status !== 'success')
    return {
      cluster,
      reachable: false,
      detail: `Prometheus at ${where} answered its build info with an error: ${result.envelope.error ?? 'no detail'}`,
      checkedAt: checkedAt(),
    };
  const version = (result.envelope.data as { version?: unknown } | undefined)?.version;
  return {
    cluster,
    reachable: true,
    detail: `${typeof version === 'string' ? `Prometheus ${version}` : 'Prometheus'} answers at ${where}`,
    checkedAt: checkedAt(),
  };
}

/** The endpoints' last checks; a check is made when the last one is older than CHECK_FRESH_MS. */
export class PrometheusMonitor {
  private readonly last = new Map<string, PrometheusAccess>();
  private readonly pending = new Map<string, Promise<PrometheusAccess>>();

  constructor(
    private readonly endpoints: ReadonlyMap<string, EndpointResolution>,
    private readonly now: () => Date = () => new Date(),
    private readonly onChange?: (access: PrometheusAccess) => void,
  ) {}

  /** Every endpoint's access, fresh within CHECK_FRESH_MS. */
  current(): Promise<PrometheusAccess[]> {
    return Promise.all([...this.endpoints.keys()].map((cluster) => this.check(cluster)));
  }

  private check(cluster: string): Promise<PrometheusAccess> {
    const known = this.last.get(cluster);
    if (known && this.now().getTime() - Date.parse(known.checkedAt) < CHECK_FRESH_MS)
      return Promise.resolve(known);
    let running = this.pending.get(cluster);
    const resolution = this.endpoints.get(cluster);
    if (!running && resolution) {
      running = checkEndpoint(cluster, resolution, this.now).then((access) => {
        if (known?.reachable !== access.reachable) this.onChange?.(access);
        this.last.set(cluster, access);
        return access;
      });
      void running.finally(() => this.pending.delete(cluster));
      this.pending.set(cluster, running);
    }
    return running ?? Promise.reject(new Error(`no Prometheus endpoint for cluster ${cluster}`));
  }
}
