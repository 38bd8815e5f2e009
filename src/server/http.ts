import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readiness } from '../shared/types.js';

// /healthz (the process answers), /readyz (engine reachable, skills ready, intake started), /metrics.

export interface HttpServerOptions {
  port: number;
  host: string;
  readiness: () => Promise<Readiness>;
  metrics: { render(): Promise<string>; contentType: string };
  /** Ms a readiness check may take before /readyz answers 503. */
  readinessTimeoutMs?: number;
}

export interface HttpServer {
  /** The bound port (useful with port 0 in tests). */
  readonly port: number;
  close(): Promise<void>;
}

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServer> {
  const timeoutMs = options.readinessTimeoutMs ?? 5000;
  const server: Server = createServer((req, res) => {
    const url = (req.url ?? '/').split('?')[0];
    const send = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed\n');
    if (url === '/healthz') return send(200, 'text/plain', 'ok\n');
    if (url === '/readyz') {
      void withTimeout(options.readiness(), timeoutMs).then(
        (r) => send(r.ok ? 200 : 503, 'application/json', `${JSON.stringify(r)}\n`),
        (err: unknown) =>
          send(
            503,
            'application/json',
            `${JSON.stringify({ ok: false, checks: [{ name: 'readiness', ok: false, detail: err instanceof Error ? err.message : String(err) }] })}\n`,
          ),
      );
      return;
    }
    if (url === '/metrics') {
      void options.metrics.render().then(
        (text) => send(200, options.metrics.contentType, text),
        (err: unknown) =>
          send(500, 'text/plain', `metrics failed: ${err instanceof Error ? err.message : String(err)}\n`),
      );
      return;
    }
    send(404, 'text/plain', 'not found: try /healthz, /readyz or /metrics\n');
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`readiness check did not answer within ${ms} ms`)), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
