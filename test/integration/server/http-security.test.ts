import net from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startHttpServer } from '../../../src/server/http.js';
import { type HttpServer, type HttpServerOptions } from '../../../src/server/types.js';
import type { RouteModule } from '../../../src/server/types.js';
import { statusApiRoutes } from '../../../src/server/routes/status.js';
import { statusPageRoutes } from '../../../src/server/routes/status-page.js';
import { IncidentIndex } from '../../../src/status/incident-index.js';
import { tempRoot } from '../../support/incidents.js';

// The daemon's HTTP server as a hostile web page and a hostile client would talk to it, over raw
// sockets so that request targets reach the server exactly as written (percent-encoded, absolute-form):
// auth follows the matched route, cross-site writes and rebound Host names are refused, the token is
// exchanged only on the page, and connections and event streams are bounded.

const TOKEN = 'sec-token-3b9d01f2';

const echo: RouteModule = {
  name: 'echo',
  plugin: async (app) => {
    app.post('/v1/incidents', async (_request, reply) => reply.code(202).send({ ok: true }));
    app.post('/v1/incidents/:id/retry', async (_request, reply) => reply.code(202).send({ ok: true }));
    app.post('/hooks/undeclared', async (_request, reply) => reply.code(202).send({ ok: true }));
    app.get('/v1/read', async (_request, reply) => reply.send({ ok: true }));
  },
};

let servers: HttpServer[] = [];
let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await Promise.all(cleanups.map((c) => c()));
  servers = [];
  cleanups = [];
});

async function serve(extra: Partial<HttpServerOptions> = {}): Promise<number> {
  const server = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    readiness: async () => ({ ok: true, checks: [] }),
    metrics: { render: async () => '', contentType: 'text/plain' },
    routes: [echo],
    ...extra,
  });
  servers.push(server);
  return server.port;
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends one request exactly as written (target, headers) and reads the answer until the server closes. */
function raw(
  port: number,
  method: string,
  target: string,
  headers: Record<string, string> = {},
  body = '',
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const all: Record<string, string> = {
      host: `127.0.0.1:${port}`,
      connection: 'close',
      ...(body !== '' ? { 'content-type': 'application/json' } : {}),
      'content-length': String(Buffer.byteLength(body)),
      ...headers,
    };
    const head = Object.entries(all)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    socket.end(`${method} ${target} HTTP/1.1\r\n${head}\r\n${body}`);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [headText = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = headText.split('\r\n');
      const parsed: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        parsed[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers: parsed, body: rest.join('\r\n\r\n') });
    });
  });
}

describe('HTTP server against hostile requests', () => {
  it('needs the bearer token on every spelling of a protected path: percent-encoded, absolute-form, undeclared routes', async () => {
    const port = await serve({ token: TOKEN });
    const targets = [
      '/v1/incidents',
      '/%761/incidents',
      '/%76%31/incidents',
      'http://x/v1/incidents',
      `http://127.0.0.1:${port}/%761/incidents`,
      '/v1/incidents/abc/retry',
      '/%761/incidents/abc/retry',
      '/hooks/undeclared',
      '/%68ooks/undeclared',
    ];
    for (const target of targets) {
      const res = await raw(port, 'POST', target, {}, '{}');
      expect(res.status, target).toBe(401);
      expect(res.headers['www-authenticate'], target).toMatch(/^Bearer/);
    }
    const ok = await raw(port, 'POST', '/%761/incidents', { authorization: `Bearer ${TOKEN}` }, '{}');
    expect(ok.status).toBe(202);
    // Health and metrics declare no auth and stay open.
    expect((await raw(port, 'GET', '/healthz')).status).toBe(200);
  });

  it('refuses a state-changing request a web page sends (Origin of another site, Sec-Fetch-Site cross-site), before any route runs', async () => {
    const port = await serve();
    const evil = await raw(port, 'POST', '/v1/incidents/abc/retry', { origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body)).toEqual({
      error: 'cross_site',
      message: expect.stringContaining('Origin "https://evil.example" is refused'),
    });
    const nullOrigin = await raw(port, 'POST', '/v1/incidents', { origin: 'null' }, '{}');
    expect(nullOrigin.status).toBe(403);
    const fetchSite = await raw(port, 'POST', '/%761/incidents', { 'sec-fetch-site': 'cross-site' }, '{}');
    expect(fetchSite.status).toBe(403);
    const sameSite = await raw(port, 'POST', '/v1/incidents', { 'sec-fetch-site': 'same-site' }, '{}');
    expect(sameSite.status).toBe(403);
    // Clients that are not browsers send neither header; the page's own origin is allowed.
    expect((await raw(port, 'POST', '/v1/incidents', {}, '{}')).status).toBe(202);
    const own = await raw(port, 'POST', '/v1/incidents', { origin: `http://127.0.0.1:${port}` }, '{}');
    expect(own.status).toBe(202);
    // Reads stay readable cross-site (the Host check is what keeps rebound names out).
    expect((await raw(port, 'GET', '/v1/read', { origin: 'https://evil.example' })).status).toBe(200);
  });

  it('without a token answers only loopback Host names and configured ones (DNS rebinding)', async () => {
    const port = await serve({ allowedHosts: ['triage.internal'] });
    const rebound = await raw(port, 'GET', '/v1/read', { host: `evil.example:${port}` });
    expect(rebound.status).toBe(421);
    expect(JSON.parse(rebound.body).message).toMatch(/http\.allowed_hosts/);
    expect((await raw(port, 'POST', '/v1/incidents', { host: 'evil.example' }, '{}')).status).toBe(421);
    expect((await raw(port, 'GET', '/metrics', { host: 'evil.example' })).status).toBe(421);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'triage.internal']) {
      expect((await raw(port, 'GET', '/v1/read', { host })).status, host).toBe(200);
    }
    // With a token the bearer check protects the API, so any name the operator uses is answered.
    const tokened = await serve({ token: TOKEN });
    const named = await raw(tokened, 'GET', '/v1/read', {
      host: 'triage.example.com',
      authorization: `Bearer ${TOKEN}`,
    });
    expect(named.status).toBe(200);
  });

  it('exchanges ?token= for the session cookie on the status page only, never on API routes', async () => {
    const { root, cleanup } = await tempRoot('triage-sec-');
    cleanups.push(cleanup);
    const index = new IncidentIndex({ root });
    cleanups.push(async () => index.close());
    await index.load();
    const port = await serve({
      token: TOKEN,
      routes: [statusApiRoutes({ index }), statusPageRoutes({ index })],
    });
    const api = await raw(port, 'GET', `/v1/incidents?token=${TOKEN}`);
    expect(api.status).toBe(401);
    expect(api.headers['set-cookie']).toBeUndefined();
    expect(JSON.parse(api.body).message).toMatch(/only exchanged on the status page/);
    const page = await raw(port, 'GET', `/?token=${TOKEN}`);
    expect(page.status).toBe(303);
    expect(page.headers['set-cookie']).toMatch(/^triage_session=/);
    const cookie = (page.headers['set-cookie'] ?? '').split(';')[0] ?? '';
    expect((await raw(port, 'GET', '/v1/incidents', { cookie })).status).toBe(200);
  });

  it('closes connections beyond http.max_connections at once, and connections that send no request head', async () => {
    const port = await serve({ limits: { maxConnections: 3, headersTimeoutMs: 100 } });
    // Each socket's close is watched from the moment it exists: on a slow machine the head timeout
    // may close the first before the last has connected. Each is read (resume): when Node's own head
    // check wins the race it writes a 408 first, and an unread socket never sees the server's close.
    const idle = [0, 1, 2].map(() => {
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      s.resume();
      return {
        connected: new Promise<void>((resolve) => s.once('connect', () => resolve())),
        closed: new Promise<void>((resolve) => s.once('close', () => resolve())),
      };
    });
    await Promise.all(idle.map((s) => Promise.race([s.connected, s.closed])));
    const closed = idle.map((s) => s.closed);
    const extra = net.connect(port, '127.0.0.1');
    extra.on('error', () => undefined);
    await new Promise<void>((resolve) => extra.on('close', () => resolve()));
    expect(extra.bytesRead).toBe(0);
    // The idle ones are closed by the head timeout (408 or a plain close), not held for a minute.
    await Promise.all(closed);
    expect((await raw(port, 'GET', '/healthz')).status).toBe(200);
  });

  it('bounds event streams per client address and closes the refused connections', async () => {
    const { root, cleanup } = await tempRoot('triage-sec-');
    cleanups.push(cleanup);
    const index = new IncidentIndex({ root });
    cleanups.push(async () => index.close());
    await index.load();
    const port = await serve({
      routes: [statusApiRoutes({ index, maxEventClients: 10, maxEventClientsPerAddress: 2 })],
    });
    const streams: net.Socket[] = [];
    cleanups.push(async () => {
      for (const s of streams) s.destroy();
    });
    for (let i = 0; i < 2; i++) {
      const s = net.connect(port, '127.0.0.1');
      streams.push(s);
      let seen = '';
      s.on('data', (c: Buffer) => (seen += c.toString()));
      s.write(`GET /v1/events HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n\r\n`);
      await vi.waitFor(() => expect(seen).toContain('event: hello'));
    }
    const third = await raw(port, 'GET', '/v1/events', { connection: 'keep-alive' });
    expect(third.status).toBe(429);
    expect(third.headers.connection).toBe('close');
    expect(JSON.parse(third.body).message).toMatch(/2 event streams are open from/);
  });
});
