import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage } from '../util/errors.js';
import { costOf, priceOf, type Price } from './prices.js';
import { KEY_HEADERS, PROVIDERS, clientKey, requestModel, type ProviderSpec } from './providers.js';
import { capMessage, type RunSession } from './session.js';
import { PROVIDER_IDS, type ModelCallRecord, type ProviderId } from './types.js';
import { UsageReader } from './usage.js';

// The gateway's HTTP handler: `/<provider>/<path>` with a live run token as the key is forwarded to
// that provider's base URL with the real key, and the answer streams back as it comes (status,
// headers, body chunk by chunk: SSE unchanged). Every call ends as one record for the run.

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

export interface ProxyOptions {
  upstreams: Record<ProviderId, Upstream>;
  /** The live run with this token, if any. */
  lookup(token: string): RunSession | undefined;
  /** Resolves once the caps can be judged (the day's spend read back from disk). */
  ready?: () => Promise<void>;
  prices: Readonly<Record<string, Price>>;
  recordBodies: boolean;
  now?: () => Date;
  /** Waits before a retry (tests pass a fake); default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Longest retry-after the gateway waits; a longer one is answered to the agent as it came. */
  maxRetryWaitMs?: number;
}

const MAX_REQUEST_BYTES = 64 * 1024 * 1024;
const MAX_RECORDED_BODY = 1024 * 1024;
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

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_REQUEST_BYTES) {
        reject(new Error(`request body over ${MAX_REQUEST_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendError(
  res: ServerResponse,
  provider: ProviderSpec | undefined,
  status: number,
  message: string,
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = provider ? provider.errorBody(status, message) : { error: { message } };
  // A CLI retries what looks transient; these answers are final.
  res.writeHead(status, { 'content-type': 'application/json', 'x-should-retry': 'false' });
  res.end(JSON.stringify(body));
}

interface UpstreamAnswer {
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
function send(
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

/** Where a request goes: its provider and its live run; undefined when it was answered (404, 401). */
function routeOf(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  lookup: ProxyOptions['lookup'],
  bound: RunSession | undefined,
): { id: ProviderId; provider: ProviderSpec; session: RunSession; subPath: string } | undefined {
  const [, prefix = '', ...rest] = url.pathname.split('/');
  const id = PROVIDER_IDS.find((p) => p === prefix);
  const provider = id ? PROVIDERS[id] : undefined;
  if (!id || !provider) {
    sendError(
      res,
      undefined,
      404,
      `the model gateway serves /${PROVIDER_IDS.join(', /')}; not ${url.pathname}`,
    );
    req.resume();
    return undefined;
  }
  const token = clientKey(req.headers, url.searchParams);
  const session = token ? lookup(token) : undefined;
  if (!session || !session.live || (bound && session !== bound)) {
    // A dead or unknown token says nothing about which runs exist.
    sendError(
      res,
      provider,
      401,
      'the model gateway does not know this key: it is valid only while its run lasts',
    );
    req.resume();
    return undefined;
  }
  return { id, provider, session, subPath: `/${rest.join('/')}` };
}

/** The agent's headers for the provider: hop-by-hop and the agent's "key" (its run token) dropped, the real key set. */
function upstreamHeaders(
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
async function streamBack(
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

/** The request handler; `bound` limits a per-run listener to that run's token. */
export function createProxy(options: ProxyOptions) {
  const now = options.now ?? (() => new Date());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const maxWait = options.maxRetryWaitMs ?? 60_000;

  /** The call, and once more after the provider's retry-after when it was rate limited or overloaded. */
  const sendRetrying = async (
    send1: () => Promise<UpstreamAnswer>,
    onRetry: () => void,
  ): Promise<UpstreamAnswer> => {
    const answer = await send1();
    if (!RETRY_STATUSES.has(answer.res.statusCode ?? 0)) return answer;
    const wait = retryDelayMs(answer.res.headers, now());
    if (wait > maxWait) return answer;
    answer.res.resume();
    onRetry();
    await sleep(wait);
    return send1();
  };

  return async (req: IncomingMessage, res: ServerResponse, bound?: RunSession): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const route = routeOf(req, res, url, options.lookup, bound);
    if (!route) return;
    const { id, provider, session, subPath } = route;
    const upstream = options.upstreams[id];
    const startedAt = performance.now();
    const at = now();
    let body: Buffer;
    try {
      body = await readBody(req);
    } catch (err) {
      sendError(res, provider, 413, errorMessage(err));
      return;
    }
    const model = requestModel(subPath, body);
    const finish = (fields: Partial<ModelCallRecord> & Pick<ModelCallRecord, 'status'>) =>
      session.record(
        {
          at: at.toISOString(),
          provider: id,
          method: req.method ?? 'GET',
          path: subPath,
          ...(model ? { model } : {}),
          stream: false,
          ...(options.recordBodies ? { request: body.subarray(0, MAX_RECORDED_BODY).toString('utf8') } : {}),
          latencyMs: Math.round((performance.now() - startedAt) * 100) / 100,
          tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
          retries: 0,
          ...fields,
        },
        at,
      );
    await options.ready?.();
    const cap = session.refusal();
    if (cap) {
      sendError(res, provider, 400, `triage-runner: ${capMessage(cap)}`);
      await finish({ status: 400, refused: cap.cap });
      return;
    }
    if (!upstream.key && !upstream.configured) {
      const names = provider.keySecrets.join(' or ');
      sendError(res, provider, 401, `triage-runner: the daemon has no ${names} for the ${id} provider`);
      await finish({ status: 401, error: `no ${names} configured` });
      return;
    }
    const headers = upstreamHeaders(req, provider, upstream.key);
    url.searchParams.delete('key');
    const target = new URL(upstream.baseUrl.replace(/\/+$/, '') + subPath + url.search);
    const abort = new AbortController();
    // A client gone mid-answer ends the call (recorded below); it must never throw out of the daemon.
    res.on('error', () => undefined);
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    let answer: UpstreamAnswer;
    let retries = 0;
    try {
      answer = await sendRetrying(
        () => send(target, req.method ?? 'GET', headers, body, startedAt, abort.signal),
        () => {
          retries = 1;
          session.retried(id);
        },
      );
    } catch (err) {
      const message = errorMessage(err);
      sendError(res, provider, 502, `triage-runner: the ${id} provider could not be reached (${message})`);
      await finish({ status: 502, retries, error: message });
      return;
    }
    const up = answer.res;
    const reader = new UsageReader(provider, up.headers['content-type']);
    const recorded = options.recordBodies ? [] : undefined;
    const ended = await streamBack(up, res, reader, recorded);
    const { usage, toolUse } = reader.end();
    const costUsd = costOf(usage, priceOf(model, options.prices));
    await finish({
      status: up.statusCode ?? 502,
      stream: (up.headers['content-type'] ?? '').includes('text/event-stream'),
      ttfbMs: Math.round(answer.ttfbMs * 100) / 100,
      tokens: usage,
      ...(costUsd !== undefined ? { costUsd } : {}),
      retries,
      ...(toolUse ? { toolUse: true } : {}),
      ...(ended ? { error: ended } : {}),
      ...(recorded
        ? { response: Buffer.concat(recorded).subarray(0, MAX_RECORDED_BODY).toString('utf8') }
        : {}),
    });
  };
}
