import http from 'node:http';
import https from 'node:https';
import { endpointLabel, type PrometheusEndpoint } from './endpoint.js';
import { upstreamUrl } from './upstream.js';
import type { PromEnvelope, UpstreamRequest } from './types.js';

// One GET to a Prometheus endpoint's read API, from the daemon: the URL built by upstream.ts, the
// endpoint's credentials added here, redirects not followed, the answer read up to a byte limit within
// a time limit. What comes back is a typed result; nothing here throws for what the server does.

export interface GetOptions {
  timeoutMs: number;
  maxBytes: number;
  signal?: AbortSignal;
}

export type PromResult =
  /** Prometheus answered with its API's JSON (a query error is such an answer: `envelope.status` error). */
  | { ok: true; status: number; body: Buffer; envelope: PromEnvelope }
  | {
      ok: false;
      kind: 'unreachable' | 'timeout' | 'too-large' | 'http' | 'unreadable' | 'aborted';
      status?: number;
      message: string;
    };

const isEnvelope = (value: unknown): value is PromEnvelope =>
  typeof value === 'object' &&
  value !== null &&
  ((value as { status?: unknown }).status === 'success' ||
    (value as { status?: unknown }).status === 'error');

/** What a non-JSON answer says, for the message: its status and, for an error, its first line. */
function httpProblem(where: string, status: number, contentType: string, body: Buffer): string {
  const line = body.toString('utf8', 0, Math.min(body.length, 300)).split('\n')[0]?.trim() ?? '';
  if (status === 401 || status === 403)
    return `${where} answered HTTP ${status} (${line || 'refused'}): the daemon's credentials for it were refused; check the endpoint's bearer_token, basic_auth or client certificate`;
  if (status >= 300 && status < 400)
    return `${where} answered HTTP ${status} (a redirect, which is not followed): point the endpoint's url at the Prometheus API itself`;
  if (status === 200)
    return `${where} answered HTTP 200 with ${contentType || 'a body'} that is not Prometheus's API JSON: is the endpoint's url the API's base URL?`;
  return `${where} answered HTTP ${status}${line ? `: ${line}` : ''}`;
}

/** GETs `request` from `endpoint`. */
export function promGet(
  endpoint: PrometheusEndpoint,
  request: UpstreamRequest,
  options: GetOptions,
): Promise<PromResult> {
  const url = upstreamUrl(endpoint.url, request);
  const where = `Prometheus at ${endpointLabel(endpoint.url)}`;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: PromResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const client = url.protocol === 'https:' ? https : http;
    const req = client.request(url, {
      method: 'GET',
      // A connection of its own: TLS options and credentials are never shared through a pool.
      agent: false,
      headers: {
        accept: 'application/json',
        'user-agent': 'triage-runner',
        ...(endpoint.authorization ? { authorization: endpoint.authorization } : {}),
      },
      ...(endpoint.tls.ca ? { ca: endpoint.tls.ca } : {}),
      ...(endpoint.tls.cert ? { cert: endpoint.tls.cert } : {}),
      ...(endpoint.tls.key ? { key: endpoint.tls.key } : {}),
      ...(endpoint.tls.servername ? { servername: endpoint.tls.servername } : {}),
    });
    const stop = (result: PromResult) => {
      finish(result);
      req.destroy();
    };
    const timer = setTimeout(
      () =>
        stop({
          ok: false,
          kind: 'timeout',
          message: `${where} did not answer within ${options.timeoutMs} ms (promql.timeout)`,
        }),
      options.timeoutMs,
    );
    const onAbort = () =>
      stop({ ok: false, kind: 'aborted', message: 'the call was stopped (the run is ending)' });
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish({
        ok: false,
        kind: 'unreachable',
        message: `${where} cannot be reached (${err.code ?? err.message}): check the endpoint's url and that the daemon can reach it`,
      }),
    );
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const tooLarge = (bytes: number) =>
        stop({
          ok: false,
          kind: 'too-large',
          status,
          message: `the answer is ${bytes} bytes or more, over promql.max_bytes (${options.maxBytes}): narrow the query (fewer series, a shorter range or a longer step)`,
        });
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > options.maxBytes) return tooLarge(declared);
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > options.maxBytes) return tooLarge(size);
        chunks.push(chunk);
      });
      res.on('error', () =>
        finish({ ok: false, kind: 'unreachable', status, message: `${where} broke off its answer` }),
      );
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        let value: unknown;
        try {
          value = JSON.parse(body.toString('utf8'));
        } catch {
          value = undefined;
        }
        if (isEnvelope(value) && status < 300) return finish({ ok: true, status, body, envelope: value });
        // Prometheus's own errors (400 bad expression, 422 cannot execute, 503 timeout) are answers too.
        if (
          isEnvelope(value) &&
          value.status === 'error' &&
          (status === 400 || status === 422 || status === 503)
        )
          return finish({ ok: true, status, body, envelope: value });
        const contentType = String(res.headers['content-type'] ?? '');
        finish({
          ok: false,
          kind: status === 200 ? 'unreadable' : 'http',
          status,
          message: httpProblem(where, status, contentType, body),
        });
      });
    });
    req.end();
  });
}
