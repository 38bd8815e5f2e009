import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage } from '../util/errors.js';
import { costOf, priceOf, type Price } from './prices.js';
import { PROVIDERS, clientKey, requestModel, type ProviderSpec } from './providers.js';
import { capMessage, type RunSession } from './session.js';
import { PROVIDER_IDS, type ModelCallRecord, type ProviderId } from './types.js';
import {
  MAX_RECORDED_BODY,
  send,
  sendRetrying,
  streamBack,
  upstreamHeaders,
  type RetryTiming,
  type Upstream,
  type UpstreamAnswer,
} from './upstream.js';
import { UsageReader } from './usage.js';

export type { Upstream } from './upstream.js';

// The gateway's HTTP handler: `/<provider>/<path>` with a live run token as the key is forwarded to
// that provider's base URL with the real key, and the answer streams back as it comes (status,
// headers, body chunk by chunk: SSE unchanged). Every call ends as one record for the run.

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

/** The request handler; `bound` limits a per-run listener to that run's token. */
export function createProxy(options: ProxyOptions) {
  const now = options.now ?? (() => new Date());
  const timing: RetryTiming = {
    now,
    sleep: options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))),
    maxWaitMs: options.maxRetryWaitMs ?? 60_000,
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
        timing,
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
