import type { FastifyPluginAsync } from 'fastify';
import type { Logger } from '../log/logger.js';
import type { Readiness } from '../shared/types.js';

// What route modules and the server share. Type-only: importing it never loads fastify.

/**
 * How a route authenticates its caller; a route that declares nothing needs `bearer`. `session`: the
 * bearer header, or on GET/HEAD the status page's session cookie (src/server/session.ts); `page`: the
 * same, and a `?token=` in the address is exchanged for the cookie (the status page's own addresses);
 * `session-write`: the bearer header, or the session cookie on a request a browser says came from this
 * server's own pages (Sec-Fetch-Site: same-origin, or an Origin equal to the Host; absent: refused).
 */
export type RouteAuth = 'bearer' | 'none' | 'signature' | 'session' | 'page' | 'session-write';

/**
 * A group of routes (the intake endpoints, the status API, the status page) registered on the
 * daemon's server as one fastify plugin. Every route needs the bearer token unless its route config
 * says otherwise (`auth: 'none'`, `'signature'` when the route checks its own signature, `'session'`).
 */
export interface RouteModule {
  /** Shown in start-up logs and errors. */
  name: string;
  plugin: FastifyPluginAsync;
}

export interface HttpLimits {
  /** Largest request body accepted, in bytes (413 above). */
  bodyBytes: number;
  /** Deepest JSON nesting accepted (400 above). */
  jsonDepth: number;
  /** Requests per client address per window; 0 turns the limit off. */
  rateLimitMax: number;
  rateLimitWindowMs: number;
  /** A request (headers and body) must arrive within this many ms. */
  requestTimeoutMs: number;
  /** A request's head must arrive within this many ms (connections that send nothing are closed). */
  headersTimeoutMs: number;
  /** Open connections at once, server-wide; more are closed on arrival. */
  maxConnections: number;
}

export const DEFAULT_LIMITS: HttpLimits = {
  bodyBytes: 1 << 20,
  jsonDepth: 64,
  rateLimitMax: 600,
  rateLimitWindowMs: 60_000,
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  maxConnections: 512,
};

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
  interface FastifyRequest {
    /** The exact request body bytes (JSON requests), for signature checks. */
    rawBody?: Buffer;
  }
}

export interface HttpServerOptions extends HttpServerExtras {
  port: number;
  host: string;
  readiness: () => Promise<Readiness>;
  metrics: { render(): Promise<string>; contentType: string };
  /** Ms a readiness check may take before /readyz answers 503. */
  readinessTimeoutMs?: number;
}

/** What a caller adds beyond health and metrics (passed through the daemon unchanged). */
export interface HttpServerExtras {
  /** The HTTP_TOKEN secret; required when `host` is not loopback, checked on /v1/* whenever set. */
  token?: string;
  limits?: Partial<HttpLimits>;
  /** Host names a tokenless server answers besides loopback ones (http.allowed_hosts, http.public_url). */
  allowedHosts?: readonly string[];
  routes?: readonly RouteModule[];
  /** Where failures of the server itself (5xx) are logged. */
  log?: Logger;
}

export interface HttpServer {
  /** The bound port (useful with port 0 in tests). */
  readonly port: number;
  close(): Promise<void>;
}
