// The model gateway over real HTTP: real local provider stand-ins behind it, a real client in front,
// per-run tokens issued and revoked, the key swapped, answers streamed through, calls recorded.
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { readModelCalls } from '../../../src/gateway/calls.js';
import { ModelGateway, type Listening } from '../../../src/gateway/gateway.js';
import { createGatewayHost } from '../../../src/gateway/host.js';
import { DEFAULT_PRICES } from '../../../src/gateway/prices.js';
import { openRunGateway, resumeRunGateway, type RunGateway } from '../../../src/gateway/run.js';
import type { Caps, ModelCallRecord, ProviderId } from '../../../src/gateway/types.js';
import {
  ANTHROPIC_USAGE,
  messageRequests,
  startAnthropic,
  type AnthropicFake,
} from '../../support/providers/anthropic.js';
import { GEMINI_USAGE, generateRequests, startGemini } from '../../support/providers/gemini.js';
import { OPENAI_USAGE, responsesRequests, startOpenAI } from '../../support/providers/openai.js';
import type { FakeProvider } from '../../support/providers/server.js';
import { startScriptedModel } from '../../support/providers/scripted-anthropic.js';
import { startScriptedGeminiModel } from '../../support/providers/scripted-gemini.js';
import { startScriptedOpenAI } from '../../support/providers/scripted-openai.js';
import { gatewayConfig } from '../../support/gateway/config.js';
import { tempDir } from '../../support/runs.js';

const KEYS = {
  anthropic: 'sk-ant-real-0123456789',
  openai: 'sk-openai-real-0123456789',
  gemini: 'AIza-real-0123456789',
};

let anthropic: AnthropicFake;
let openai: FakeProvider;
let gemini: FakeProvider;
let root: { dir: string; cleanup: () => Promise<void> };

beforeAll(async () => {
  [anthropic, openai, gemini] = await Promise.all([startAnthropic(), startOpenAI(), startGemini()]);
  root = await tempDir('triage-gateway-');
});

afterAll(async () => {
  await Promise.all([anthropic?.close(), openai?.close(), gemini?.close()]);
  await root?.cleanup();
});

interface Harness {
  gateway: ModelGateway;
  tcp: Listening;
  waits: number[];
  close(): Promise<void>;
}

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

async function harness(
  over: { caps?: Caps; recordBodies?: boolean; upstream?: Partial<Record<ProviderId, string>> } = {},
): Promise<Harness> {
  const waits: number[] = [];
  const gateway = new ModelGateway({
    upstreams: {
      anthropic: { baseUrl: over.upstream?.anthropic ?? anthropic.url, key: KEYS.anthropic },
      openai: { baseUrl: over.upstream?.openai ?? `${openai.url}/v1`, key: KEYS.openai },
      gemini: { baseUrl: over.upstream?.gemini ?? gemini.url, key: KEYS.gemini },
    },
    prices: DEFAULT_PRICES,
    recordBodies: over.recordBodies ?? false,
    caps: over.caps ?? {},
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  });
  const tcp = await gateway.listenTcp('127.0.0.1');
  const h = { gateway, tcp, waits, close: () => tcp.close() };
  open.push(h);
  return h;
}

let runN = 0;
async function run(h: Harness, provider: ProviderId = 'anthropic'): Promise<RunGateway> {
  runN++;
  const bundleDir = path.join(root.dir, `run-${runN}`);
  await import('node:fs/promises').then((fs) => fs.mkdir(bundleDir, { recursive: true }));
  const r = openRunGateway({
    gateway: h.gateway,
    runId: `run-${runN}`,
    provider,
    bundleDir,
    route: { kind: 'tcp', url: h.tcp.address },
    redact: (t) => t.replaceAll(KEYS.anthropic, '[REDACTED]'),
  });
  await r.start();
  return r;
}

const calls = (r: RunGateway, dir: string) => readModelCalls(path.join(dir, 'model-calls.jsonl'));
const bundleOf = (r: RunGateway) => path.join(root.dir, r.session.runId);

function messages(stream: boolean, model = 'claude-sonnet-4-5-20250929') {
  return JSON.stringify({ model, stream, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
}

/** POST /v1/messages through the run's gateway with the run token as the Anthropic key (or `key`). */
function postMessages(
  r: RunGateway,
  body: string,
  options: { key?: string; signal?: AbortSignal } = {},
): Promise<Response> {
  return fetch(`${r.providers.anthropicBaseUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': options.key ?? r.session.token },
    body,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

describe('the model gateway', () => {
  it("forwards a run token's streamed Anthropic call with the real key and passes the SSE through byte for byte", async () => {
    const h = await harness();
    const r = await run(h);
    const before = messageRequests(anthropic).length;
    const direct = await fetch(`${anthropic.url}/v1/messages`, { method: 'POST', body: messages(true) });
    const directText = await direct.text();
    const res = await fetch(`${r.providers.anthropicBaseUrl}/v1/messages?beta=true`, {
      method: 'POST',
      headers: {
        'x-api-key': r.session.token,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
      },
      body: messages(true),
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    // Message ids carry a timestamp: the same events otherwise.
    const strip = (t: string) => t.replace(/msg_fake_\d+/g, 'msg');
    expect(strip(text)).toBe(strip(directText));
    const seen = messageRequests(anthropic).slice(before + 1);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers['x-api-key']).toBe(KEYS.anthropic);
    expect(JSON.stringify(seen[0]?.headers)).not.toContain(r.session.token);
    expect(seen[0]?.headers['anthropic-version']).toBe('2023-06-01');
    expect(seen[0]?.url).toBe('/v1/messages?beta=true');
    await r.stop();
    const [call] = await calls(r, bundleOf(r));
    expect(call).toMatchObject({
      provider: 'anthropic',
      method: 'POST',
      path: '/v1/messages',
      model: 'claude-sonnet-4-5-20250929',
      status: 200,
      stream: true,
      retries: 0,
      tokens: {
        input: ANTHROPIC_USAGE.input_tokens,
        output: ANTHROPIC_USAGE.output_tokens,
        cacheRead: 0,
        cacheWrite: 0,
      },
    });
    expect(call?.ttfbMs).toBeGreaterThanOrEqual(0);
    expect(call?.latencyMs).toBeGreaterThanOrEqual(call?.ttfbMs ?? 0);
    // 1234 in and 56 out at $3 / $15 per million.
    expect(call?.costUsd).toBeCloseTo((1234 * 3 + 56 * 15) / 1e6, 8);
    expect(call).not.toHaveProperty('request');
    expect(r.summary()).toMatchObject({ calls: 1, tokens: { input: 1234, output: 56 } });
  });

  it('refuses unknown keys, and a token once its run has ended, without calling the provider', async () => {
    const h = await harness();
    const r = await run(h);
    const before = anthropic.requests.length;
    const unknown = await postMessages(r, messages(false), { key: KEYS.anthropic });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const live = await fetch(`${r.providers.anthropicBaseUrl}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${r.session.token}` },
      body: messages(false),
    });
    expect(live.status).toBe(200);
    await live.text();
    await r.stop();
    const dead = await postMessages(r, messages(false));
    expect(dead.status).toBe(401);
    await dead.text();
    expect(anthropic.requests.length - before).toBe(1);
    expect(h.gateway.liveRuns).toBe(0);
  });

  it("accepts on a run's unix socket only that run's token", async () => {
    const h = await harness();
    const a = await run(h);
    const b = await run(h);
    const socketPath = path.join(bundleOf(a), 'model.sock');
    const listening = await h.gateway.listenUnix(socketPath, a.session, { mode: 0o600 });
    const post = (token: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          { socketPath, path: '/anthropic/v1/messages', method: 'POST', headers: { 'x-api-key': token } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(messages(false));
      });
    expect(await post(a.session.token)).toBe(200);
    expect(await post(b.session.token)).toBe(401);
    await listening.close();
    await Promise.all([a.stop(), b.stop()]);
  });

  it("lets a restarted daemon take a running container's run back: the same token on the same socket, its calls so far counted", async () => {
    const post = (socketPath: string, token: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          // A new connection each time, as the bridge makes for each of the CLI's connections.
          {
            socketPath,
            agent: false,
            path: '/anthropic/v1/messages',
            method: 'POST',
            headers: { 'x-api-key': token },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(messages(false));
      });
    const first = await harness();
    const bundleDir = path.join(root.dir, 'adopted-run');
    await import('node:fs/promises').then((fs) => fs.mkdir(bundleDir, { recursive: true }));
    const route = { kind: 'bridge' as const, port: 4180, agentRunDir: '/workspace/.triage/runs/adopted-run' };
    const launched = openRunGateway({
      gateway: first.gateway,
      runId: 'adopted-run',
      provider: 'anthropic',
      bundleDir,
      route,
      redact: (t) => t,
    });
    await launched.install();
    await launched.start();
    const socketPath = path.join(bundleDir, 'model.sock');
    const token = launched.session.token;
    expect(await post(socketPath, token)).toBe(200);
    const log = path.join(bundleDir, 'model-calls.jsonl');
    await vi.waitFor(async () => expect(await readModelCalls(log)).toHaveLength(1));
    // The first daemon dies: its listener is gone, the socket file stays behind.
    await first.close();
    const second = await harness();
    const adopted = await resumeRunGateway({
      gateway: second.gateway,
      runId: 'adopted-run',
      provider: 'anthropic',
      bundleDir,
      route,
      redact: (t) => t,
    });
    expect(adopted).toBeDefined();
    expect(await post(socketPath, token)).toBe(200);
    expect(await post(socketPath, 'trg-not-this-run')).toBe(401);
    // The call is counted once its answer has ended (right after the agent got it).
    await vi.waitFor(() =>
      expect(adopted?.summary()).toMatchObject({
        calls: 2,
        refused: 0,
        tokens: { input: 2468, output: 112 },
      }),
    );
    await adopted?.stop();
    // The unknown token never reached a run: only the run's two calls are in its log.
    expect((await readModelCalls(log)).map((c) => c.status)).toEqual([200, 200]);
    await launched.stop();
  });

  it('forwards Codex (Responses, bearer) and Gemini (x-goog-api-key and ?key=) calls with the real keys and reads their usage', async () => {
    const h = await harness();
    const c = await run(h, 'openai');
    const r = await run(h, 'gemini');
    const o = await fetch(`${c.providers.openaiBaseUrl}/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${c.session.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5', stream: true, input: 'hi' }),
    });
    expect(o.status).toBe(200);
    await o.text();
    const g1 = await fetch(
      `${r.providers.geminiBaseUrl}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse`,
      {
        method: 'POST',
        headers: { 'x-goog-api-key': r.session.token },
        body: JSON.stringify({ contents: [] }),
      },
    );
    expect(g1.status).toBe(200);
    await g1.text();
    const g2 = await fetch(
      `${r.providers.geminiBaseUrl}/v1beta/models/gemini-2.5-pro:generateContent?key=${r.session.token}`,
      { method: 'POST', body: JSON.stringify({ contents: [] }) },
    );
    expect(g2.status).toBe(200);
    await g2.text();
    expect(responsesRequests(openai).at(-1)?.headers.authorization).toBe(`Bearer ${KEYS.openai}`);
    const [s, j] = generateRequests(gemini).slice(-2);
    expect(s?.headers['x-goog-api-key']).toBe(KEYS.gemini);
    expect(s?.url).toBe('/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse');
    expect(j?.url).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
    expect(j?.headers['x-goog-api-key']).toBe(KEYS.gemini);
    await Promise.all([c.stop(), r.stop()]);
    const recorded = [...(await calls(c, bundleOf(c))), ...(await calls(r, bundleOf(r)))];
    expect(recorded.map((x) => [x.provider, x.model, x.stream, x.tokens.input, x.tokens.output])).toEqual([
      ['openai', 'gpt-5', true, OPENAI_USAGE.input_tokens, OPENAI_USAGE.output_tokens],
      ['gemini', 'gemini-2.5-pro', true, GEMINI_USAGE.promptTokenCount, GEMINI_USAGE.candidatesTokenCount],
      ['gemini', 'gemini-2.5-pro', false, GEMINI_USAGE.promptTokenCount, GEMINI_USAGE.candidatesTokenCount],
    ]);
    expect(JSON.stringify(recorded)).not.toContain(r.session.token);
  });

  it('streams each SSE event to the client as the provider sends it, not at the end', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const slow: Server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":7,"output_tokens":1}}}\n\n',
      );
      void gate.then(() => {
        res.end('event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":9}}\n\n');
      });
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const h = await harness({
      upstream: { anthropic: `http://127.0.0.1:${(slow.address() as AddressInfo).port}` },
    });
    const r = await run(h);
    const res = await postMessages(r, messages(true));
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    // The provider has not sent the rest yet: the first event arrived on its own.
    expect(new TextDecoder().decode(first.value)).toContain('message_start');
    release();
    let rest = '';
    for (let c = await reader.read(); !c.done; c = await reader.read())
      rest += new TextDecoder().decode(c.value);
    expect(rest).toContain('message_delta');
    await r.stop();
    expect((await calls(r, bundleOf(r)))[0]?.tokens).toMatchObject({ input: 7, output: 9 });
    await new Promise<void>((done) => slow.close(() => done()));
  });

  it('records a stream the agent walks away from, and goes on serving', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const slow: Server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        'data: {"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}\n\n',
      );
      void gate.then(() => res.end());
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
    const h = await harness({
      upstream: { anthropic: `http://127.0.0.1:${(slow.address() as AddressInfo).port}` },
    });
    const r = await run(h);
    const abort = new AbortController();
    const res = await postMessages(r, messages(true), { signal: abort.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    abort.abort();
    await vi.waitFor(async () => {
      const [call] = await calls(r, bundleOf(r));
      expect(call).toMatchObject({
        status: 200,
        error: 'the agent closed the connection',
        tokens: { input: 5 },
      });
    });
    release();
    const again = await postMessages(r, messages(true));
    expect(again.status).toBe(200);
    await again.text();
    await r.stop();
    await new Promise<void>((done) => slow.close(() => done()));
  });

  it('retries a 429 once after its retry-after, and counts it', async () => {
    let n = 0;
    const limited: Server = createServer((req, res) => {
      req.resume();
      n++;
      if (n === 1) {
        res.writeHead(429, { 'retry-after': '3', 'content-type': 'application/json' });
        res.end('{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ model: 'claude-sonnet-4-5', usage: { input_tokens: 10, output_tokens: 2 } }));
    });
    await new Promise<void>((r) => limited.listen(0, '127.0.0.1', r));
    const h = await harness({
      upstream: { anthropic: `http://127.0.0.1:${(limited.address() as AddressInfo).port}` },
    });
    const r = await run(h);
    const res = await postMessages(r, messages(false));
    expect(res.status).toBe(200);
    await res.text();
    expect(n).toBe(2);
    expect(h.waits).toEqual([3000]);
    await r.stop();
    expect((await calls(r, bundleOf(r)))[0]).toMatchObject({
      status: 200,
      retries: 1,
      tokens: { input: 10, output: 2 },
    });
    expect(r.summary().retries).toBe(1);
    await new Promise<void>((done) => limited.close(() => done()));
  });

  it('sends a call again on a new connection when the provider had closed the kept-alive one it went out on, and never repeats one on a new connection', async () => {
    // A provider whose idle timeout races the gateway's: every request after a connection's first
    // finds it closed. `resetFirst` resets a connection's first request as well.
    let resetFirst = false;
    const seen = { connections: 0, answered: 0, reset: 0 };
    const perSocket = new WeakMap<object, number>();
    const closing: Server = createServer((req, res) => {
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      if (n > 1 || resetFirst) {
        seen.reset++;
        req.socket.destroy();
        return;
      }
      req.resume();
      seen.answered++;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ model: 'claude-sonnet-4-5', usage: { input_tokens: 10, output_tokens: 2 } }));
    });
    closing.on('connection', () => seen.connections++);
    await new Promise<void>((r) => closing.listen(0, '127.0.0.1', r));
    const h = await harness({
      upstream: { anthropic: `http://127.0.0.1:${(closing.address() as AddressInfo).port}` },
    });
    const r = await run(h);
    for (const _ of [1, 2]) {
      const res = await postMessages(r, messages(false));
      expect(res.status).toBe(200);
      await res.text();
    }
    expect(seen).toEqual({ connections: 2, answered: 2, reset: 1 });

    resetFirst = true;
    const failed = await postMessages(r, messages(false));
    expect(failed.status).toBe(502);
    await failed.text();
    // The retry's connection is not kept, so this call went out on a new one: reset, not sent again.
    expect(seen).toEqual({ connections: 3, answered: 2, reset: 2 });
    await r.stop();
    const records = await calls(r, bundleOf(r));
    expect(records.map((c) => c.status)).toEqual([200, 200, 502]);
    expect(records[1]).not.toHaveProperty('error');
    await new Promise<void>((done) => {
      closing.closeAllConnections();
      closing.close(() => done());
    });
  });

  it('passes a second 529 through to the agent after the one retry', async () => {
    const h = await harness();
    const r = await run(h);
    anthropic.failWith = 529;
    try {
      const before = anthropic.requests.length;
      const res = await postMessages(r, messages(false));
      expect(res.status).toBe(529);
      await res.text();
      expect(anthropic.requests.length - before).toBe(2);
    } finally {
      anthropic.failWith = undefined;
    }
    await r.stop();
    expect((await calls(r, bundleOf(r)))[0]).toMatchObject({ status: 529, retries: 1 });
  });

  it('refuses the call after the one that took the run over budget.max_tokens, in the provider error shape, naming the cap', async () => {
    const h = await harness({ caps: { maxTokens: 1000 } });
    const r = await run(h);
    const call = () => postMessages(r, messages(false));
    const first = await call();
    expect(first.status).toBe(200);
    await first.text();
    const before = anthropic.requests.length;
    const second = await call();
    expect(second.status).toBe(400);
    const body = (await second.json()) as { error: { message: string } };
    expect(body.error.message).toContain('budget.max_tokens (1000) reached');
    expect(anthropic.requests.length).toBe(before);
    expect(r.summary().capReached).toEqual({ cap: 'budget.max_tokens', limit: 1000, used: 1290 });
    await r.stop();
    const recorded = await calls(r, bundleOf(r));
    expect(recorded.map((c: ModelCallRecord) => [c.status, c.refused])).toEqual([
      [200, undefined],
      [400, 'budget.max_tokens'],
    ]);
  });

  it('stops at budget.max_model_calls, and at budget.daily_usd across runs', async () => {
    const h = await harness({ caps: { maxModelCalls: 1 } });
    const r = await run(h);
    const call = (token: string) =>
      postMessages(r, messages(false), { key: token }).then(async (res) => (await res.text(), res.status));
    expect(await call(r.session.token)).toBe(200);
    expect(await call(r.session.token)).toBe(400);
    expect(r.summary().capReached?.cap).toBe('budget.max_model_calls');
    await r.stop();

    const daily = await harness({ caps: { dailyUsd: 0.001 } });
    const a = await run(daily);
    const b = await run(daily);
    // Each call costs $0.004542: the first run's call spends the day's budget.
    const post = (x: RunGateway) =>
      fetch(`${x.providers.anthropicBaseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': x.session.token },
        body: messages(false),
      }).then(async (res) => (await res.text(), res.status));
    expect(await post(a)).toBe(200);
    expect(await post(b)).toBe(400);
    expect(b.summary().capReached?.cap).toBe('budget.daily_usd');
    await Promise.all([a.stop(), b.stop()]);
  });

  it('carries a keyless call to a configured base URL (a local model) and refuses one to the public API', async () => {
    const gateway = new ModelGateway({
      upstreams: {
        anthropic: { baseUrl: anthropic.url, key: undefined, configured: true },
        openai: { baseUrl: 'https://api.openai.com/v1', key: undefined },
        gemini: { baseUrl: gemini.url, key: KEYS.gemini },
      },
      prices: DEFAULT_PRICES,
      recordBodies: false,
      caps: {},
    });
    const tcp = await gateway.listenTcp('127.0.0.1');
    open.push({ gateway, tcp, waits: [], close: () => tcp.close() });
    const session = gateway.openRun('keyless', 'anthropic', { onCall: () => Promise.resolve() });
    const codex = gateway.openRun('keyless-codex', 'openai', { onCall: () => Promise.resolve() });
    const local = await fetch(`${tcp.address}/anthropic/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': session.token },
      body: messages(false),
    });
    expect(local.status).toBe(200);
    await local.text();
    const seen = messageRequests(anthropic).at(-1);
    expect(seen?.headers['x-api-key']).toBeUndefined();
    expect(JSON.stringify(seen?.headers)).not.toContain(session.token);
    const publicApi = await fetch(`${tcp.address}/openai/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${codex.token}` },
      body: '{}',
    });
    expect(publicApi.status).toBe(401);
    expect(((await publicApi.json()) as { error: { message: string } }).error.message).toContain(
      'the daemon has no CODEX_API_KEY or OPENAI_API_KEY for the openai provider',
    );
    gateway.closeRun(session);
    gateway.closeRun(codex);
  });

  it('keeps request and response bodies only with record_bodies, redacted', async () => {
    const h = await harness({ recordBodies: true });
    const r = await run(h);
    const res = await fetch(`${r.providers.anthropicBaseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': r.session.token },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        messages: [{ role: 'user', content: `leak ${KEYS.anthropic}` }],
      }),
    });
    await res.text();
    await r.stop();
    const [call] = await calls(r, bundleOf(r));
    expect(call?.request).toContain('leak [REDACTED]');
    expect(call?.response).toContain('Investigation complete');
    expect(JSON.stringify(call)).not.toContain(KEYS.anthropic);
  });

  it('preflight: the provider answers through the gateway with the configured key; a refused key is named', async () => {
    const host = createGatewayHost({
      config: gatewayConfig({ providers: { openai_base_url: `${openai.url}/v1` } }),
      secrets: { CODEX_API_KEY: KEYS.openai },
      env: {},
    });
    try {
      expect(await host.preflight('openai')).toBeUndefined();
      const models = openai.requests.filter((q) => q.url === '/v1/models').at(-1);
      expect(models?.headers.authorization).toBe(`Bearer ${KEYS.openai}`);
      openai.failWith = 401;
      const refusing = createGatewayHost({
        config: gatewayConfig({ providers: { openai_base_url: `${openai.url}/v1` } }),
        secrets: { CODEX_API_KEY: 'sk-wrong' },
        env: {},
      });
      expect(await refusing.preflight('openai')).toMatch(
        /refused the configured key .*HTTP 401.*CODEX_API_KEY/,
      );
      await refusing.close();
    } finally {
      openai.failWith = undefined;
      await host.close();
    }
  });

  it("preflight: the project's own scripted stand-in of each provider answers its models listing through the gateway", async () => {
    const scripts = new Map();
    const stand = {
      anthropic: await startScriptedModel(scripts),
      openai: await startScriptedOpenAI(scripts),
      gemini: await startScriptedGeminiModel(scripts),
    };
    const host = createGatewayHost({
      config: gatewayConfig({
        providers: {
          anthropic_base_url: stand.anthropic.url,
          openai_base_url: `${stand.openai.url}/v1`,
          gemini_base_url: stand.gemini.url,
        },
      }),
      secrets: { ANTHROPIC_API_KEY: KEYS.anthropic, CODEX_API_KEY: KEYS.openai, GEMINI_API_KEY: KEYS.gemini },
      env: {},
    });
    try {
      for (const provider of ['anthropic', 'openai', 'gemini'] as const)
        expect(await host.preflight(provider), provider).toBeUndefined();
      expect(stand.anthropic.unknown).toEqual([]);
      expect(stand.anthropic.requests.at(-1)?.headers['x-api-key']).toBe(KEYS.anthropic);
    } finally {
      await host.close();
      await Promise.all(Object.values(stand).map((s) => s.close()));
    }
  });
});
