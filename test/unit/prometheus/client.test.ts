import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { promGet } from '../../../src/prometheus/client.js';
import type { PrometheusEndpoint } from '../../../src/prometheus/endpoint.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;
const servers: http.Server[] = [];
afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
});

async function serve(
  handler: Handler,
): Promise<{ endpoint: PrometheusEndpoint; seen: http.IncomingMessage[] }> {
  const seen: http.IncomingMessage[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req);
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: {
      cluster: 'c',
      url: new URL(`http://127.0.0.1:${port}/prefix/`),
      authorization: 'Bearer tok-0123456789',
      tls: {},
    },
    seen,
  };
}

const QUERY = { endpoint: 'query' as const, params: [['query', 'up']] as [string, string][] };
const options = { timeoutMs: 5_000, maxBytes: 1024 };

describe("the daemon's Prometheus client", () => {
  it('GETs the read path under the base URL with the credential, and reads the API JSON', async () => {
    const { endpoint, seen } = await serve((_, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"success","data":{"resultType":"vector","result":[]}}');
    });
    const result = await promGet(endpoint, QUERY, options);
    expect(result).toMatchObject({ ok: true, status: 200, envelope: { status: 'success' } });
    expect(seen[0]?.method).toBe('GET');
    expect(seen[0]?.url).toBe('/prefix/api/v1/query?query=up');
    expect(seen[0]?.headers.authorization).toBe('Bearer tok-0123456789');
  });

  it("keeps Prometheus's own errors as answers and says what else went wrong, never following a redirect", async () => {
    const answers: [number, string, string][] = [
      [
        422,
        'application/json',
        '{"status":"error","errorType":"execution","error":"many-to-many matching not allowed"}',
      ],
      [302, 'text/plain', 'see /api/v1/admin/tsdb/snapshot'],
      [401, 'text/plain', 'Unauthorized'],
      [200, 'text/html', '<html>login</html>'],
      [500, 'text/plain', 'boom'],
    ];
    let i = 0;
    const { endpoint, seen } = await serve((_, res) => {
      const [status, type, body] = answers[i++] ?? [500, 'text/plain', ''];
      res.writeHead(status, {
        'content-type': type,
        ...(status === 302 ? { location: '/api/v1/admin/tsdb/snapshot' } : {}),
      });
      res.end(body);
    });
    expect(await promGet(endpoint, QUERY, options)).toMatchObject({
      ok: true,
      status: 422,
      envelope: { status: 'error', error: 'many-to-many matching not allowed' },
    });
    expect(await promGet(endpoint, QUERY, options)).toMatchObject({
      ok: false,
      kind: 'http',
      message: expect.stringContaining('answered HTTP 302 (a redirect, which is not followed)'),
    });
    expect(await promGet(endpoint, QUERY, options)).toMatchObject({
      ok: false,
      message: expect.stringContaining(
        "answered HTTP 401 (Unauthorized): the daemon's credentials for it were refused",
      ),
    });
    expect(await promGet(endpoint, QUERY, options)).toMatchObject({
      ok: false,
      kind: 'unreadable',
      message: expect.stringContaining("HTTP 200 with text/html that is not Prometheus's API JSON"),
    });
    expect(await promGet(endpoint, QUERY, options)).toMatchObject({
      ok: false,
      message: expect.stringContaining('HTTP 500: boom'),
    });
    // The redirect was not followed: five requests, all to the query path.
    expect(seen.map((r) => r.url)).toEqual(Array(5).fill('/prefix/api/v1/query?query=up'));
  });

  it('stops reading an answer past max_bytes, declared or streamed', async () => {
    let declared = true;
    const { endpoint } = await serve((_, res) => {
      if (declared) {
        res.writeHead(200, { 'content-length': '5000' });
        res.end('x'.repeat(5000));
      } else {
        res.writeHead(200);
        for (let i = 0; i < 10; i++) res.write('y'.repeat(300));
        res.end();
      }
    });
    expect(await promGet(endpoint, QUERY, options)).toMatchObject({
      ok: false,
      kind: 'too-large',
      message: expect.stringMatching(/^the answer is 5000 bytes or more, over promql\.max_bytes \(1024\)/),
    });
    declared = false;
    expect(await promGet(endpoint, QUERY, options)).toMatchObject({ ok: false, kind: 'too-large' });
  });

  it('gives up after promql.timeout, and when the call is aborted', async () => {
    let arrived!: () => void;
    const request = new Promise<void>((resolve) => (arrived = resolve));
    const { endpoint } = await serve(() => arrived());
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const pending = promGet(endpoint, QUERY, { ...options, timeoutMs: 30_000 });
    await request;
    vi.advanceTimersByTime(30_000);
    expect(await pending).toMatchObject({
      ok: false,
      kind: 'timeout',
      message: expect.stringMatching(/did not answer within 30000 ms \(promql\.timeout\)$/),
    });
    const abort = new AbortController();
    const stopped = promGet(endpoint, QUERY, { ...options, signal: abort.signal });
    abort.abort();
    expect(await stopped).toMatchObject({ ok: false, kind: 'aborted' });
  });

  it('says where an endpoint that cannot be reached is, without its credential', async () => {
    const result = await promGet(
      {
        cluster: 'c',
        url: new URL('http://127.0.0.1:9/'),
        authorization: 'Bearer secret-token-0123',
        tls: {},
      },
      QUERY,
      options,
    );
    expect(result).toMatchObject({ ok: false, kind: 'unreachable' });
    expect(JSON.stringify(result)).not.toContain('secret-token');
    expect(JSON.stringify(result)).toContain(
      'Prometheus at http://127.0.0.1:9 cannot be reached (ECONNREFUSED)',
    );
  });
});
