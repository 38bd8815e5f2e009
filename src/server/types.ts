import type { FastifyPluginAsync } from 'fastify';

// What route modules and the server share. Type-only: importing it never loads fastify.

/**
 * How a route authenticates its caller; `/v1/*` routes default to `bearer`. `session`: the bearer
 * header, or on GET/HEAD the status page's session cookie (src/server/session.ts).
 */
export type RouteAuth = 'bearer' | 'none' | 'signature' | 'session';

/**
 * A group of routes (the intake endpoints, the status API, the status page) registered on the
 * daemon's server as one fastify plugin. Routes under `/v1/` need the bearer token unless their
 * route config says `auth: 'none'` or `'signature'` (the route checks its own signature).
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
}

export const DEFAULT_LIMITS: HttpLimits = {
  bodyBytes: 1 << 20,
  jsonDepth: 64,
  rateLimitMax: 600,
  rateLimitWindowMs: 60_000,
  requestTimeoutMs: 30_000,
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
