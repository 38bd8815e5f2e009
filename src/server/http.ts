import type { AddressInfo } from 'node:net';
import type { HttpServer, HttpServerOptions } from './types.js';

// The daemon's HTTP server: /healthz (the process answers), /readyz (engine reachable, skills
// ready, intake started), /metrics, and the route modules the daemon is given (intake, status API).
// fastify is imported on first start only: commands that never serve HTTP never load it.

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
