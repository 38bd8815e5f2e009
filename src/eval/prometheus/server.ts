import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ENDPOINT_PATHS } from '../../prometheus/upstream.js';
import type { PromEndpoint } from '../../prometheus/types.js';
import { answerRequest, type FrozenAnswer, type FrozenPrometheus } from './frozen.js';

// The eval's stand-in for a case's Prometheus: a loopback HTTP server speaking the read API, answering
// from the case's recordings (frozen.ts). The run's broker asks it as it would ask the real one (the
// same client, URLs and limits), pointed at it by RunOverrides.prometheus; it serves GETs of the read
// paths only.

export interface FrozenPrometheusServer {
  url: string;
  close(): Promise<void>;
}

const LABEL_VALUES = /^\/api\/v1\/label\/([a-zA-Z_][a-zA-Z0-9_]*)\/values$/;
const BY_PATH = new Map<string, PromEndpoint>(
  Object.entries(ENDPOINT_PATHS)
    .filter(([, p]) => !p.includes('{'))
    .map(([endpoint, p]) => [p, endpoint as PromEndpoint]),
);

function route(pathname: string): { endpoint: PromEndpoint; label?: string } | undefined {
  const endpoint = BY_PATH.get(pathname);
  if (endpoint) return { endpoint };
  const label = LABEL_VALUES.exec(pathname)?.[1];
  return label ? { endpoint: 'label_values', label } : undefined;
}

function send(res: http.ServerResponse, answer: FrozenAnswer): void {
  res.writeHead(answer.status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(answer.body));
}

/** Serves `frozen` on 127.0.0.1 (a free port). */
export async function startFrozenPrometheus(frozen: FrozenPrometheus): Promise<FrozenPrometheusServer> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://frozen');
    const found = route(url.pathname);
    if (req.method !== 'GET')
      return send(res, {
        status: 405,
        body: { status: 'error', errorType: 'bad_data', error: 'only GET is served' },
      });
    if (!found)
      return send(res, {
        status: 404,
        body: { status: 'error', errorType: 'not_found', error: `${url.pathname} is not a read endpoint` },
      });
    send(res, answerRequest(frozen, found.endpoint, url.searchParams, found.label));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
