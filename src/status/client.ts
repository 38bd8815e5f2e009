import { isIP } from 'node:net';
import { createParser } from 'eventsource-parser';
import { errorMessage } from '../util/errors.js';
import type { IncidentState } from '../workspace/state.js';
import type { IndexEvent, ListPage, StatusList } from './types.js';

// The daemon's status API as `status` and `retry` use it: find out whether a daemon answers for this
// root, list every incident page by page, follow its events, ask it to retry.

/** How long the CLI waits for a daemon to answer before reading the workspaces itself. */
export const PROBE_TIMEOUT_MS = 5000;
const PAGE_LIMIT = 1000;

export interface DaemonApi {
  base: string;
  token?: string;
}

/** The reply of an accepted retry (202). */
export interface RetryReply {
  incidentId: string;
  workspace: string;
  state: IncidentState;
  previousState: IncidentState;
  attempts: number;
}

/** The list body of `GET /v1/incidents`: the status list, the page cursor, and the root it describes. */
export interface ApiListBody extends ListPage {
  root: string;
}

/** Where a local client reaches the daemon's server: a wildcard listen address is reached on loopback. */
export function daemonBaseUrl(http: { host: string; port: number }): string | undefined {
  if (http.port === 0) return undefined;
  let host = http.host.replace(/^\[(.*)\]$/, '$1');
  if (host === '0.0.0.0' || host === '') host = '127.0.0.1';
  if (host === '::') host = '::1';
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${http.port}`;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

const headers = (api: DaemonApi): Record<string, string> =>
  api.token ? { authorization: `Bearer ${api.token}` } : {};

async function getJson<T>(api: DaemonApi, url: string, timeoutMs: number): Promise<T> {
  const res = await fetch(`${api.base}${url}`, {
    headers: headers(api),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new ApiError(res.status, await problemText(res));
  return (await res.json()) as T;
}

async function problemText(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { message?: unknown };
    if (typeof body.message === 'string') return body.message;
  } catch {
    // not a problem body
  }
  return `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
}

/**
 * The daemon's first page, when a daemon answers at `api.base` within the timeout; undefined when none
 * answers (connection refused, timeout). Throws ApiError when one answers with an error (a wrong token).
 */
export async function probeDaemon(
  api: DaemonApi,
  limit = PAGE_LIMIT,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<ApiListBody | undefined> {
  try {
    return await getJson<ApiListBody>(api, `/v1/incidents?limit=${limit}`, timeoutMs);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    return undefined;
  }
}

/** A cluster registry entry as the daemon's /readyz reports it. */
export interface ClusterStatus {
  name: string;
  reachable: boolean;
  detail?: string;
}

const CLUSTER_CHECK = 'cluster:';

/** Each registry entry's state from the daemon's /readyz (its `cluster:<name>` checks); [] without a registry. */
export async function clusterStates(api: DaemonApi, timeoutMs = PROBE_TIMEOUT_MS): Promise<ClusterStatus[]> {
  // /readyz answers 503 with the same body when the daemon is not ready: the cluster checks are still there.
  const res = await fetch(`${api.base}/readyz`, { signal: AbortSignal.timeout(timeoutMs) });
  const body = (await res.json().catch(() => ({}))) as {
    checks?: { name?: unknown; degraded?: unknown; detail?: unknown }[];
  };
  return (body.checks ?? []).flatMap((c) =>
    typeof c.name === 'string' && c.name.startsWith(CLUSTER_CHECK)
      ? [
          {
            name: c.name.slice(CLUSTER_CHECK.length),
            reachable: c.degraded !== true,
            ...(typeof c.detail === 'string' ? { detail: c.detail } : {}),
          },
        ]
      : [],
  );
}

/** Every incident the daemon lists, following cursors from `first`. */
export async function listAll(api: DaemonApi, first: ApiListBody, timeoutMs = 30_000): Promise<StatusList> {
  const incidents = [...first.incidents];
  let page: ApiListBody = first;
  while (page.nextCursor) {
    page = await getJson<ApiListBody>(
      api,
      `/v1/incidents?limit=${PAGE_LIMIT}&cursor=${encodeURIComponent(page.nextCursor)}`,
      timeoutMs,
    );
    incidents.push(...page.incidents);
  }
  return { incidents, totals: page.totals };
}

/** Follows `GET /v1/events` until `signal` aborts or the stream ends (resolves then; rejects on failure). */
export async function followEvents(
  api: DaemonApi,
  onEvent: (event: IndexEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  const res = await fetch(`${api.base}/v1/events`, {
    headers: { ...headers(api), accept: 'text/event-stream' },
    signal,
  });
  if (!res.ok || !res.body) throw new ApiError(res.status, await problemText(res));
  const parser = createParser({
    onEvent: (message) => {
      try {
        const data = JSON.parse(message.data) as { view?: unknown; folder?: unknown };
        if (message.event === 'incident' && data.view) onEvent({ type: 'upsert', view: data.view as never });
        if (message.event === 'remove' && typeof data.folder === 'string')
          onEvent({ type: 'remove', folder: data.folder });
      } catch {
        // a malformed event is skipped; the next one carries the whole view again
      }
    },
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of res.body) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }));
  } catch (err) {
    if (!signal.aborted) throw new Error(`the event stream broke: ${errorMessage(err)}`, { cause: err });
  }
}

/** `POST /v1/incidents/{folder}/retry`: the 202 reply, or the 409's message (the state cannot be retried). */
export async function requestRetry(
  api: DaemonApi,
  folder: string,
  timeoutMs = 30_000,
): Promise<{ ok: true; reply: RetryReply } | { ok: false; message: string }> {
  const res = await fetch(`${api.base}/v1/incidents/${encodeURIComponent(folder)}/retry`, {
    method: 'POST',
    headers: headers(api),
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (res.status === 202) return { ok: true, reply: (await res.json()) as RetryReply };
  const message = await problemText(res);
  if (res.status === 409) return { ok: false, message };
  throw new ApiError(res.status, message);
}
