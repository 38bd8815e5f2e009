import type { AddressInfo } from 'node:net';
import type { Logger } from '../log/logger.js';
import type { Readiness } from '../shared/types.js';
import type { HttpLimits, RouteModule } from './types.js';

// The daemon's HTTP server: /healthz (the process answers), /readyz (engine reachable, skills
// ready, intake started), /metrics, and the route modules the daemon is given (intake, status API).
// fastify is imported on first start only: commands that never serve HTTP never load it.

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

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const { buildApp } = await import('./app.js');
  const app = await buildApp(options);
  try {
    await app.listen({ port: options.port, host: options.host });
  } catch (err) {
    await app.close().catch(() => undefined);
    const code = (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
    throw new Error(
      `cannot serve /healthz, /readyz and /metrics on ${options.host}:${options.port} (${code}): free the port or set http.port / --http-port (0 turns HTTP off)`,
      { cause: err },
    );
  }
  const port = (app.server.address() as AddressInfo).port;
  return { port, close: () => app.close() };
}
