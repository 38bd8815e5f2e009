import { request as httpRequest } from 'node:http';

// The engine's API over its socket without dockerode: the few GETs an idle daemon makes.

/**
 * A GET on the engine's API without dockerode, for what an idle daemon asks (ping, image present, the
 * start-up sweep's listing): unix sockets and plain http. Undefined for other endpoints (ssh, TLS), which
 * go through dockerode. Rejects with the socket error, or an AbortError after `timeout` (ms, or a signal).
 */
export async function lightGet(
  endpoint: string,
  pathname: string,
  timeout: number | AbortSignal,
  tls: boolean,
): Promise<{ status: number; body: string } | undefined> {
  let target: { socketPath: string } | { host: string; port: number } | undefined;
  if (endpoint.startsWith('unix://')) target = { socketPath: endpoint.slice('unix://'.length) };
  else if (endpoint.startsWith('/')) target = { socketPath: endpoint };
  else if (!tls && /^(tcp|http):\/\//.test(endpoint)) {
    const url = new URL(endpoint.replace(/^tcp:/, 'http:'));
    target = { host: url.hostname, port: Number(url.port || 2375) };
  }
  if (!target) return undefined;
  const where = target;
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        ...where,
        path: pathname,
        method: 'GET',
        signal: typeof timeout === 'number' ? AbortSignal.timeout(timeout) : timeout,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** An error carrying the HTTP status, as dockerode's are. */
export const httpError = (status: number, body: string): Error =>
  Object.assign(new Error(`HTTP ${status}: ${body.slice(0, 200)}`), { statusCode: status });
