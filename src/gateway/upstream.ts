import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage } from '../util/errors.js';
import { KEY_HEADERS, type ProviderSpec } from './providers.js';
import type { UsageReader } from './usage.js';

// The provider's side of a forwarded call: where it goes, the headers it carries (the agent's, its key
// swapped for the real one), the request sent (once more on a new connection when a kept-alive one had
// been closed under it; once more after a 429/529's retry-after), and the answer streamed back.

export interface Upstream {
  /** Base URL the path below `/<provider>` is appended to. */
  baseUrl: string;
  /** The real key; undefined when the daemon has none. */
  key: string | undefined;
  /**
   * The base URL was configured (config or the daemon's environment), not the public API: a call
   * without a key goes there keyless (a local model); to the public API it is refused.
   */
  configured?: boolean;
}

export const MAX_RECORDED_BODY = 1024 * 1024;
/** Provider answers retried once, centrally: rate limited (429), overloaded (Anthropic's 529). */
const RETRY_STATUSES = new Set([429, 529]);
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'accept-encoding',
]);

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 256 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 256 }),
};

/** A `retry-after` (seconds or an HTTP date) or `retry-after-ms` in milliseconds; 1 s when absent. */
export function retryDelayMs(headers: http.IncomingHttpHeaders, now: Date): number {
  const ms = Number(headers['retry-after-ms']);
  if (headers['retry-after-ms'] !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers['retry-after'];
  if (raw === undefined) return 1000;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(String(raw));
  return Number.isNaN(date) ? 1000 : Math.max(0, date - now.getTime());
}

export interface UpstreamAnswer {
  res: IncomingMessage;
  ttfbMs: number;
}

/** How a kept-alive connection the provider had already closed fails a request written to it. */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

/**
 * One request to the provider. A kept-alive connection can be closed by the provider just as a
 * request is written to it (its idle timeout racing ours). A request that fails that way, on a
 * reused connection and before any answer, goes once more on a new connection: the provider most
 * likely never read it, and a rare duplicate costs one call where a 502 would cost the run.
 */
export function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Buffer,
  startedAt: number,
  abort: AbortSignal,
  fresh = false,
): Promise<UpstreamAnswer> {
  const secure = url.protocol === 'https:';
  const request = secure ? https.request : http.request;
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(
      url,
      {
        method,
        headers: { ...headers, 'content-length': String(body.length) },
        agent: fresh ? false : secure ? agents.https : agents.http,
        signal: abort,
      },
      (res) => {
        answered = true;
        resolve({ res, ttfbMs: performance.now() - startedAt });
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      const stale = !fresh && !answered && req.reusedSocket && !abort.aborted;
      if (stale && STALE_SOCKET_CODES.has(err.code ?? ''))
        resolve(send(url, method, headers, body, startedAt, abort, true));
      else reject(err);
    });
    req.end(body);
  });
}

/** The agent's headers for the provider: hop-by-hop and the agent's "key" (its run token) dropped, the real key set. */
export function upstreamHeaders(
  req: IncomingMessage,
  provider: ProviderSpec,
  key: string | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || (KEY_HEADERS as readonly string[]).includes(name))
      continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  // Usage is read from the bytes that pass: ask for them uncompressed.
  headers['accept-encoding'] = 'identity';
  if (key) provider.setKey(headers, key);
  return headers;
}

/** Streams the provider's answer back as it comes, reading usage on the way; resolves with why it ended early, if it did. */
export async function streamBack(
  up: IncomingMessage,
  res: ServerResponse,
  reader: UsageReader,
  recorded: Buffer[] | undefined,
): Promise<string | undefined> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(up.headers))
    if (value !== undefined && !HOP_BY_HOP.has(name) && name !== 'content-encoding') out[name] = value;
  res.writeHead(up.statusCode ?? 502, out);
  res.flushHeaders();
  let recordedBytes = 0;
  up.on('data', (chunk: Buffer) => {
    reader.push(chunk);
    if (recorded && recordedBytes < MAX_RECORDED_BODY) {
      recorded.push(chunk);
      recordedBytes += chunk.length;
    }
  });
  up.pipe(res);
  const ended = await new Promise<string | undefined>((resolve) => {
    up.on('end', () => resolve(undefined));
    up.on('error', (err) => resolve(errorMessage(err)));
    up.on('aborted', () => resolve('the provider closed the answer early'));
    res.on('close', () => resolve(res.writableFinished ? undefined : 'the agent closed the connection'));
  });
  if (ended) res.destroy();
  return ended;
}

export interface RetryTiming {
  now: () => Date;
  /** Waits before the retry (tests pass a fake). */
  sleep: (ms: number) => Promise<void>;
  /** Longest retry-after the gateway waits; a longer one is answered to the agent as it came. */
  maxWaitMs: number;
}

/** The call, and once more after the provider's retry-after when it was rate limited or overloaded. */
export async function sendRetrying(
  send1: () => Promise<UpstreamAnswer>,
  onRetry: () => void,
  timing: RetryTiming,
): Promise<UpstreamAnswer> {
  const answer = await send1();
  if (!RETRY_STATUSES.has(answer.res.statusCode ?? 0)) return answer;
  const wait = retryDelayMs(answer.res.headers, timing.now());
  if (wait > timing.maxWaitMs) return answer;
  answer.res.resume();
  onRetry();
  await timing.sleep(wait);
  return send1();
}
