import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage } from '../util/errors.js';
import { routeEndpoint, type EndpointRoute } from './endpoints.js';
import { dearestPrice, estimateCall } from './estimate.js';
import { costOf, priceOf, type Price } from './prices.js';
import { PROVIDERS, clientKey, pathModel, requestFacts, type ProviderSpec } from './providers.js';
import { RETRY_AFTER_S, type Admission, type Refusal, type RunSession } from './session.js';
import { PROVIDER_IDS, type GatewayLimits, type ModelCallRecord, type ProviderId } from './types.js';
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

// The gateway's HTTP handler: `/<provider>/<path>` with a live run token as the key is forwarded to
// that provider's base URL with the real key, and the answer streams back as it comes (status,
// headers, body chunk by chunk: SSE unchanged). Everything that decides whether a call may go — the
// token, its run's provider and endpoints, the body's declared size, the calls under way and the caps
// — is judged on the headers, before a byte of the body is read; a refused call's body is never read
// (its connection closes after the answer). Every call of a run, forwarded or refused, ends as one record.

export interface ProxyOptions {
  upstreams: Record<ProviderId, Upstream>;
  /** The live run with this token, if any. */
  lookup(token: string): RunSession | undefined;
  /** Resolves once the caps can be judged (the day's spend read back from disk). */
  ready?: () => Promise<void>;
  prices: Readonly<Record<string, Price>>;
  recordBodies: boolean;
  /** A limit left out is not applied. */
  limits?: Partial<GatewayLimits>;
  now?: () => Date;
  /** Waits before a retry (tests pass a fake); default setTimeout. */
  sleep?: (ms: number) => Promise<void>;
  /** Longest retry-after the gateway waits; a longer one is answered to the agent as it came. */
  maxRetryWaitMs?: number;
}

/** Output tokens a call holds against the caps when neither the request nor the config says. */
const NO_OUTPUT_RESERVE = 0;

/**
 * The request body, at most `limit` bytes; `too large` once it is over (the rest is never read). With a
 * declared length the body is copied into one buffer of that size as it comes, so it is held once.
 */
function readBody(
  req: IncomingMessage,
  limit: number,
  declared: number | undefined,
): Promise<Buffer | 'too large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const whole = declared !== undefined ? Buffer.allocUnsafe(declared) : undefined;
    let size = 0;
    // The parser never passes a declared length; the check keeps `whole` from being written past.
    const most = declared !== undefined ? Math.min(limit, declared) : limit;
    const onData = (c: Buffer) => {
      if (size + c.length > most) {
        req.off('data', onData);
        req.pause();
        resolve('too large');
        return;
      }
      if (whole) c.copy(whole, size);
      else chunks.push(c);
      size += c.length;
    };
    req.on('data', onData);
    req.on('end', () => resolve(whole ? whole.subarray(0, size) : Buffer.concat(chunks, size)));
    req.on('error', reject);
    req.on('aborted', () => reject(new Error('the agent closed the connection before its request arrived')));
  });
}

interface ErrorOptions {
  /** The body was not read: close the connection after the answer rather than read it. */
  unread?: boolean;
  /** A refusal for now (429): the agent may try again after this many seconds. */
  retryAfterS?: number;
}

function sendError(
  res: ServerResponse,
  provider: ProviderSpec | undefined,
  status: number,
  message: string,
  options: ErrorOptions = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = provider ? provider.errorBody(status, message) : { error: { message } };
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  // A CLI retries what looks transient; these answers are final, but for a 429 that says when to retry.
  if (options.retryAfterS !== undefined) {
    headers['retry-after'] = String(options.retryAfterS);
    headers['x-should-retry'] = 'true';
  } else headers['x-should-retry'] = 'false';
  if (options.unread) headers.connection = 'close';
  res.writeHead(status, headers);
  res.end(JSON.stringify(body));
}

/** The request's declared body size; undefined when it is sent chunked. */
function declaredLength(req: IncomingMessage): number | undefined {
  const raw = req.headers['content-length'];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** The live run whose token the request carries (on a run's own socket, only that run's), or undefined. */
function sessionOf(
  req: IncomingMessage,
  rawUrl: string,
  lookup: ProxyOptions['lookup'],
  bound: RunSession | undefined,
): RunSession | undefined {
  const q = rawUrl.indexOf('?');
  const token = clientKey(req.headers, new URLSearchParams(q === -1 ? '' : rawUrl.slice(q + 1)));
  const session = token ? lookup(token) : undefined;
  if (!session || !session.live || (bound && session !== bound)) return undefined;
  return session;
}

/** The error shape of the provider the path names, when it names one (for a key the gateway does not know). */
function providerOfPath(rawUrl: string): ProviderSpec | undefined {
  const prefix = /^\/([^/?]*)/.exec(rawUrl)?.[1];
  const id = PROVIDER_IDS.find((p) => p === prefix);
  return id ? PROVIDERS[id] : undefined;
}

/** What every call shares: the options and the limits drawn from them. */
interface ProxyContext {
  options: ProxyOptions;
  timing: RetryTiming;
  maxBody: number;
  reserveOutput: number;
  /** The price a call holds before its model is known. */
  dearest: Price | undefined;
}

/** One call once its run is known. */
interface Call {
  req: IncomingMessage;
  res: ServerResponse;
  session: RunSession;
  /** When its request came. */
  at: Date;
  startedAt: number;
  /** Its record so far, for the path given. */
  record(path: string): ModelCallRecord;
}

/** The request handler; `bound` limits a per-run listener to that run's token. */
export function createProxy(options: ProxyOptions) {
  const now = options.now ?? (() => new Date());
  const ctx: ProxyContext = {
    options,
    timing: {
      now,
      sleep: options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms))),
      maxWaitMs: options.maxRetryWaitMs ?? 60_000,
    },
    maxBody: options.limits?.maxRequestBytes ?? Number.POSITIVE_INFINITY,
    reserveOutput: options.limits?.reserveOutputTokens ?? NO_OUTPUT_RESERVE,
    dearest: dearestPrice(options.prices),
  };
  return (req: IncomingMessage, res: ServerResponse, bound?: RunSession): Promise<void> =>
    handle(ctx, req, res, bound, now());
}

/** Answers a call the gateway does not forward, its body unread, and records it. */
async function refuse(call: Call, refusal: Refusal, path: string, admission?: Admission): Promise<void> {
  sendError(call.res, PROVIDERS[call.session.provider], refusal.status, refusal.message, {
    unread: true,
    ...(refusal.status === 429 ? { retryAfterS: RETRY_AFTER_S } : {}),
  });
  const record = { ...call.record(path), status: refusal.status, refused: refusal.reason };
  await call.session.record(record, call.at, admission);
}

/** Answers a call for a provider the daemon holds no key for (and whose public API it would be sent to). */
async function noKey(call: Call, path: string): Promise<void> {
  const id = call.session.provider;
  const provider = PROVIDERS[id];
  const names = provider.keySecrets.join(' or ');
  sendError(call.res, provider, 401, `triage-runner: the daemon has no ${names} for the ${id} provider`, {
    unread: true,
  });
  await call.session.record({ ...call.record(path), status: 401, error: `no ${names} configured` }, call.at);
}

/** Identifies the run, routes and admits the call on its headers, then reads its body and forwards it. */
async function handle(
  ctx: ProxyContext,
  req: IncomingMessage,
  res: ServerResponse,
  bound: RunSession | undefined,
  at: Date,
): Promise<void> {
  const startedAt = performance.now();
  const rawUrl = req.url ?? '/';
  // A client gone mid-answer ends the call (recorded below); it must never throw out of the daemon.
  res.on('error', () => undefined);
  const session = sessionOf(req, rawUrl, ctx.options.lookup, bound);
  if (!session) {
    // A dead or unknown token says nothing about which runs exist.
    const message = 'the model gateway does not know this key: it is valid only while its run lasts';
    sendError(res, providerOfPath(rawUrl), 401, message, { unread: true });
    return;
  }
  const method = req.method ?? 'GET';
  const call: Call = {
    req,
    res,
    session,
    at,
    startedAt,
    record: (path) => ({
      at: at.toISOString(),
      provider: session.provider,
      method,
      // The run's own token never lands in its record, even where the agent put it in the path.
      path: session.token ? path.replaceAll(session.token, '[run token]') : path,
      status: 0,
      stream: false,
      latencyMs: Math.round((performance.now() - startedAt) * 100) / 100,
      tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      retries: 0,
    }),
  };
  const route = routeEndpoint(session.provider, method, rawUrl);
  if ('reason' in route) return refuse(call, route, route.path);
  const upstream = ctx.options.upstreams[session.provider];
  if (!upstream.key && !upstream.configured) return noKey(call, route.path);
  await ctx.options.ready?.();
  const declared = declaredLength(req);
  const tooLarge: Refusal = {
    reason: 'gateway.max_request_body',
    status: 413,
    message: `triage-runner: the request body is over gateway.max_request_body (${ctx.maxBody} bytes); it was not read`,
  };
  if (declared !== undefined && declared > ctx.maxBody) return refuse(call, tooLarge, route.path);
  const price = priceOf(pathModel(route.path), ctx.options.prices) ?? ctx.dearest;
  const admit = session.admit(
    estimateCall({ bodyBytes: declared ?? 0, reserveOutput: ctx.reserveOutput, price }),
  );
  if ('refused' in admit) return refuse(call, admit.refused, route.path);
  const admission = admit.admitted;
  try {
    let body: Buffer | 'too large';
    try {
      body = await readBody(req, ctx.maxBody, declared);
    } catch {
      // The agent went away (or its body was too slow: Node answered 408): nothing was sent anywhere.
      res.destroy();
      return;
    }
    if (body === 'too large') return await refuse(call, tooLarge, route.path, admission);
    await forward(ctx, call, admission, route, body);
  } finally {
    admission.release();
  }
}

/** Sends an admitted call to the provider with the real key and streams its answer back; records it. */
async function forward(
  ctx: ProxyContext,
  call: Call,
  admission: Admission,
  route: EndpointRoute,
  body: Buffer,
): Promise<void> {
  const { req, res, session } = call;
  const { options } = ctx;
  const id = session.provider;
  const upstream = options.upstreams[id];
  const provider = PROVIDERS[id];
  const { model, maxOutput } = requestFacts(route.path, body);
  const price = priceOf(model, options.prices);
  admission.update(
    estimateCall({
      bodyBytes: body.length,
      ...(maxOutput !== undefined ? { maxOutput } : {}),
      reserveOutput: ctx.reserveOutput,
      price,
    }),
  );
  const finish = (fields: Partial<ModelCallRecord> & Pick<ModelCallRecord, 'status'>) =>
    session.record(
      {
        ...call.record(route.path),
        ...(model ? { model } : {}),
        ...(options.recordBodies ? { request: body.subarray(0, MAX_RECORDED_BODY).toString('utf8') } : {}),
        ...fields,
      },
      call.at,
      admission,
    );
  const headers = upstreamHeaders(req, provider, upstream.key);
  const target = new URL(upstream.baseUrl.replace(/\/+$/, '') + route.path + route.search);
  const abort = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  let answer: UpstreamAnswer;
  let retries = 0;
  try {
    answer = await sendRetrying(
      () => send(target, req.method ?? 'GET', headers, body, call.startedAt, abort.signal),
      () => {
        retries = 1;
        session.retried(id);
      },
      ctx.timing,
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
  const costUsd = costOf(usage, price);
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
}
