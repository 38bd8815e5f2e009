import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerOptions,
} from 'node:http';

// Limits on what an HTTP listener takes in, with Node's own server settings: how many connections it
// holds, how long a request's headers and its whole body may take to arrive (Node answers 408 and
// closes the connection), and how often it looks. A connection over the cap is closed as it opens. An
// answer is never timed: a model's stream may run for minutes once its request has arrived.

export interface ListenerLimits {
  /** Connections held at once; more are closed as they open. */
  maxConnections?: number;
  /** The request's headers must have arrived within this many milliseconds of its start. */
  headersTimeoutMs?: number;
  /** The whole request (headers and body) must have arrived within this many milliseconds; 0 = no limit. */
  requestTimeoutMs?: number;
}

/** Node checks its timeouts every 30 s by default: a slow connection would be held that much longer. */
const MAX_CHECK_INTERVAL_MS = 1000;

/** An HTTP server with `limits` applied (the rest of `options` as given). */
export function createLimitedServer(
  limits: ListenerLimits,
  listener: RequestListener,
  options: ServerOptions = {},
): Server {
  const request = limits.requestTimeoutMs;
  // Node wants the headers' time within the whole request's.
  const headers =
    request && limits.headersTimeoutMs !== undefined
      ? Math.min(limits.headersTimeoutMs, request)
      : limits.headersTimeoutMs;
  const shortest = Math.min(headers || Infinity, request || Infinity);
  const server = createServer(
    {
      ...options,
      ...(headers !== undefined ? { headersTimeout: headers } : {}),
      ...(request !== undefined ? { requestTimeout: request } : {}),
      ...(Number.isFinite(shortest)
        ? {
            connectionsCheckingInterval: Math.max(
              10,
              Math.min(MAX_CHECK_INTERVAL_MS, Math.floor(shortest / 4)),
            ),
          }
        : {}),
    },
    listener,
  );
  if (limits.maxConnections !== undefined) server.maxConnections = limits.maxConnections;
  return server;
}

/**
 * A request's body, at most `limit` bytes within `timeoutMs`: 'too large' past the limit (what follows
 * is drained, not kept), undefined when it did not arrive whole in time or the request failed.
 */
export function readLimitedBody(
  req: IncomingMessage,
  limit: number,
  timeoutMs: number,
): Promise<Buffer | 'too large' | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      req.destroy();
      resolve(undefined);
    }, timeoutMs);
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        clearTimeout(timer);
        req.removeAllListeners('data');
        req.resume();
        resolve('too large');
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    req.on('error', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
}
