import type { Config } from '../config/schema.js';
import type { HttpLimits } from './types.js';

/** The server's limits from the `http:` configuration. */
export function httpLimits(config: Config): HttpLimits {
  const h = config.http;
  return {
    bodyBytes: h.body_limit,
    jsonDepth: h.json_depth,
    rateLimitMax: h.rate_limit.max,
    rateLimitWindowMs: h.rate_limit.window,
    requestTimeoutMs: h.request_timeout,
    headersTimeoutMs: Math.min(10_000, h.request_timeout),
    maxConnections: h.max_connections,
  };
}

/** Host names a tokenless server answers besides loopback: http.allowed_hosts and http.public_url's. */
export function allowedHosts(config: Config): string[] {
  const hosts = [...config.http.allowed_hosts];
  if (config.http.public_url)
    hosts.push(new URL(config.http.public_url).hostname.replace(/^\[(.*)\]$/, '$1'));
  return hosts;
}
