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
  };
}
