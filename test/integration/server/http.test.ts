import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer } from '../../../src/server/http.js';
import { type HttpServer, type HttpServerOptions } from '../../../src/server/types.js';
import type { RouteModule } from '../../../src/server/types.js';

// The daemon's HTTP server over real sockets: limits, bearer auth, health routes without credentials,
// route modules, and 4xx bodies that say what is wrong.

const TOKEN = 'test-token-5f1c9e0d7a';

const echo: RouteModule = {
  name: 'echo',
  plugin: async (app) => {
    app.post('/v1/echo', async (request, reply) => reply.code(202).send({ got: request.body }));
    app.post('/v1/signed', { config: { auth: 'signature' } }, async (_request, reply) =>
      reply.code(202).send({ ok: true }),
    );
  },
};

let servers: HttpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function serve(extra: Partial<HttpServerOptions> = {}): Promise<string> {
  const server = await startHttpServer({
    port: 0,
    host: '127.0.0.1',
    readiness: async () => ({ ok: true, checks: [{ name: 'test', ok: true }] }),
    metrics: { render: async () => 'triage_runner_up 1\n', contentType: 'text/plain; version=0.0.4' },
    routes: [echo],
    ...extra,
  });
  servers.push(server);
  return `http://127.0.0.1:${server.port}`;
}

const problemOf = async (res: Response) => (await res.json()) as { error: string; message: string };

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

describe('HTTP server', () => {
  it('refuses to listen beyond loopback without HTTP_TOKEN, saying which key and secret to set', async () => {
    await expect(serve({ host: '0.0.0.0' })).rejects.toThrow(
      /http\.host 0\.0\.0\.0 is not a loopback address, so \/v1\/\* needs a bearer token, but the HTTP_TOKEN secret is not set/,
    );
  });

  it('exposed with a token: health, readiness and metrics need no credentials; /v1/* needs the bearer token', async () => {
    const server = await startHttpServer({
      port: 0,
      host: '0.0.0.0',
      token: TOKEN,
      readiness: async () => ({ ok: true, checks: [] }),
      metrics: { render: async () => 'm 1\n', contentType: 'text/plain' },
      routes: [echo],
    });
    servers.push(server);
    const base = `http://127.0.0.1:${server.port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect(await (await fetch(`${base}/metrics`)).text()).toBe('m 1\n');

    const missing = await post(`${base}/v1/echo`, '{}');
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await problemOf(missing)).toEqual({
      error: 'unauthorized',
      message: expect.stringMatching(
        /^missing Authorization header: http\.host 0\.0\.0\.0 is not a loopback address, so \/v1\/\* needs "Authorization: Bearer <token>"/,
      ),
    });
    const basic = await post(`${base}/v1/echo`, '{}', { authorization: `Basic ${TOKEN}` });
    expect((await problemOf(basic)).message).toMatch(/does not use the Bearer scheme/);
    const wrong = await post(`${base}/v1/echo`, '{}', { authorization: 'Bearer nope' });
    const wrongText = await wrong.text();
    expect(wrong.status).toBe(401);
    expect(wrongText).toMatch(/bearer token does not match the HTTP_TOKEN secret/);
    expect(wrongText).not.toContain(TOKEN);
    const right = await post(`${base}/v1/echo`, '{"a":1}', { authorization: `Bearer ${TOKEN}` });
    expect(right.status).toBe(202);
    expect(await problemOf(right)).toEqual({ got: { a: 1 } });
    // A route that checks its own signature is not behind the bearer token.
    expect((await post(`${base}/v1/signed`, '{}')).status).toBe(202);
  });

  it('on loopback without a token, /v1/* is open', async () => {
    const base = await serve();
    expect((await post(`${base}/v1/echo`, '{"a":2}')).status).toBe(202);
  });

  it('refuses an oversized body with 413 naming http.body_limit', async () => {
    const base = await serve({ limits: { bodyBytes: 1024 } });
    const res = await post(`${base}/v1/echo`, JSON.stringify({ pad: 'x'.repeat(2000) }));
    expect(res.status).toBe(413);
    expect(await problemOf(res)).toEqual({
      error: 'body_too_large',
      message: expect.stringMatching(/larger than the 1024-byte limit \(http\.body_limit\)/),
    });
  });

  it('refuses JSON nested deeper than http.json_depth before parsing it', async () => {
    const base = await serve({ limits: { jsonDepth: 8 } });
    const deep = `${'['.repeat(9)}${']'.repeat(9)}`;
    const res = await post(`${base}/v1/echo`, deep);
    expect(res.status).toBe(400);
    expect(await problemOf(res)).toMatchObject({
      error: 'json_too_deep',
      message: expect.stringMatching(/deeper than 8 levels/),
    });
    // Brackets inside strings are not nesting.
    expect((await post(`${base}/v1/echo`, JSON.stringify({ s: '[[[[[[[[[[[[' }))).status).toBe(202);
    // A 100,000-deep body is refused, not a crash.
    const bomb = await post(`${base}/v1/echo`, '['.repeat(100_000));
    expect(bomb.status).toBe(400);
    expect((await problemOf(bomb)).error).toBe('json_too_deep');
  });

  it('says where JSON is broken, refuses other media types, empty bodies and __proto__ keys', async () => {
    const base = await serve();
    const broken = await post(`${base}/v1/echo`, '{\n  "a": 1,\n  "b": }');
    expect(broken.status).toBe(400);
    expect(await problemOf(broken)).toEqual({
      error: 'invalid_json',
      message: expect.stringMatching(/not valid JSON \(line 3, column \d+/),
    });
    const text = await fetch(`${base}/v1/echo`, {
      method: 'POST',
      body: 'hi',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    expect((await problemOf(text)).message).toMatch(
      /Content-Type "text\/plain" is not accepted: send the body as application\/json/,
    );
    expect((await post(`${base}/v1/echo`, '')).status).toBe(400);
    const proto = await post(`${base}/v1/echo`, '{"__proto__": {"polluted": true}}');
    expect(proto.status).toBe(400);
    expect((await problemOf(proto)).message).toMatch(/__proto__/);
    expect(
      (await post(`${base}/v1/echo`, '{"a":1}', { 'content-type': 'application/json; charset=utf-8' }))
        .status,
    ).toBe(202);
  });

  it('rate-limits a client with 429 and Retry-After, but never the health routes', async () => {
    const base = await serve({ limits: { rateLimitMax: 3, rateLimitWindowMs: 60_000 } });
    for (let i = 0; i < 3; i++) expect((await post(`${base}/v1/echo`, '{}')).status).toBe(202);
    const limited = await post(`${base}/v1/echo`, '{}');
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await problemOf(limited)).toEqual({
      error: 'rate_limited',
      message: expect.stringMatching(
        /more than 3 requests in 1 min from this client \(http\.rate_limit\): retry after \d+ s/,
      ),
    });
    for (let i = 0; i < 5; i++) expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('answers unknown paths with 404 listing the routes, and a wrong method with 405 and Allow', async () => {
    const base = await serve();
    const missing = await fetch(`${base}/nope`);
    expect(missing.status).toBe(404);
    expect((await problemOf(missing)).message).toMatch(
      /no route GET \/nope: this server answers .*GET \/healthz.*POST \/v1\/echo/,
    );
    const wrongMethod = await fetch(`${base}/v1/echo`);
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('POST');
    expect((await fetch(`${base}/healthz`, { method: 'HEAD' })).status).toBe(200);
  });

  it('answers /readyz 503 with the failing check when readiness does not answer in time', async () => {
    const base = await serve({ readiness: () => new Promise(() => undefined), readinessTimeoutMs: 100 });
    const res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(503);
    expect(await problemOf(res)).toEqual({
      ok: false,
      checks: [{ name: 'readiness', ok: false, detail: 'readiness check did not answer within 100 ms' }],
    });
  });
});
