// A run token opens its own provider's model endpoints and nothing else, over real HTTP with the three
// provider stand-ins behind the gateway: another provider, another path, or an encoded spelling of
// one is answered by the gateway itself, recorded as refused, and never reaches any provider with a key.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ANTHROPIC_USAGE,
  messageRequests,
  startAnthropic,
  type AnthropicFake,
} from '../../support/providers/anthropic.js';
import { startGemini } from '../../support/providers/gemini.js';
import { startOpenAI } from '../../support/providers/openai.js';
import type { FakeProvider } from '../../support/providers/server.js';
import { KEYS, rawRequest, startGateway, type GatewayHarness } from '../../support/gateway/harness.js';
import { tempDir } from '../../support/runs.js';

let anthropic: AnthropicFake;
let openai: FakeProvider;
let gemini: FakeProvider;
let root: { dir: string; cleanup: () => Promise<void> };
let h: GatewayHarness;

beforeAll(async () => {
  [anthropic, openai, gemini] = await Promise.all([startAnthropic(), startOpenAI(), startGemini()]);
  root = await tempDir('triage-gateway-endpoints-');
});

afterAll(async () => {
  await Promise.all([anthropic?.close(), openai?.close(), gemini?.close()]);
  await root?.cleanup();
});

afterEach(async () => {
  await h?.close();
});

const seenByProviders = () => anthropic.requests.length + openai.requests.length + gemini.requests.length;

/** What a Claude run's agent might try with its token, as it would write the request line. */
const ATTEMPTS: { path: string; method?: string; status: number; refused: string }[] = [
  { path: '/openai/files', status: 403, refused: 'gateway.provider' },
  { path: '/openai/responses', status: 403, refused: 'gateway.provider' },
  { path: '/gemini/v1beta/models/gemini-2.5-pro:generateContent', status: 403, refused: 'gateway.provider' },
  { path: '/anthropic/v1/files', status: 404, refused: 'gateway.endpoint' },
  { path: '/anthropic/v1/messages/batches', status: 404, refused: 'gateway.endpoint' },
  { path: '/anthropic/..%2F..%2Fv1/files', status: 400, refused: 'gateway.endpoint' },
  { path: '/anthropic/v1/messages/..%2F..%2Ffiles', status: 400, refused: 'gateway.endpoint' },
  { path: '/anthropic/%2e%2e/%2e%2e/v1/messages', status: 400, refused: 'gateway.endpoint' },
  { path: '/anthropic/v1/messages/../../../openai/files', status: 400, refused: 'gateway.endpoint' },
  { path: '/anthropic//evil.example/steal', status: 400, refused: 'gateway.endpoint' },
  { path: '/anthropic/v1\\messages', status: 400, refused: 'gateway.endpoint' },
  { path: '/anthropic/@evil.example/x', status: 404, refused: 'gateway.endpoint' },
  {
    path: '/anthropic/v1/messages?beta=true&redirect=http://evil.example/',
    status: 400,
    refused: 'gateway.endpoint',
  },
  { path: '/anthropic/v1/models', method: 'DELETE', status: 405, refused: 'gateway.endpoint' },
  { path: '/nope/v1/messages', status: 404, refused: 'gateway.endpoint' },
];

describe("a run token's reach at the model gateway", () => {
  it("refuses a Claude run's token on every other provider, path and encoded form, records each refusal, and sends none of them anywhere", async () => {
    h = await startGateway(root.dir, {
      anthropic: anthropic.url,
      openai: `${openai.url}/v1`,
      gemini: gemini.url,
    });
    const run = await h.open('anthropic');
    const before = seenByProviders();
    const answers = [];
    for (const a of ATTEMPTS) {
      const answer = await rawRequest(
        { url: h.tcp.address },
        {
          method: a.method ?? 'POST',
          path: a.path,
          headers: { 'x-api-key': run.session.token, 'content-type': 'application/json' },
          body: '{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[]}',
        },
      );
      answers.push({ path: a.path, status: answer.status, body: answer.body });
    }
    expect(answers.map((a) => [a.path, a.status])).toEqual(ATTEMPTS.map((a) => [a.path, a.status]));
    for (const a of answers) expect(a.body).toContain('triage-runner: ');
    // No stand-in saw any of them: no request, so no key.
    expect(seenByProviders()).toBe(before);
    for (const p of [openai, gemini]) {
      expect(JSON.stringify(p.requests)).not.toContain(KEYS.openai);
      expect(JSON.stringify(p.requests)).not.toContain(KEYS.gemini);
    }

    // The run's own model call still goes, and still streams.
    const ok = await rawRequest(
      { url: h.tcp.address },
      {
        path: '/anthropic/v1/messages?beta=true',
        headers: { 'x-api-key': run.session.token },
        body: JSON.stringify({ model: 'claude-sonnet-4-5', stream: true, max_tokens: 10, messages: [] }),
      },
    );
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toContain('text/event-stream');
    expect(messageRequests(anthropic).at(-1)?.headers['x-api-key']).toBe(KEYS.anthropic);

    await run.stop();
    const records = await h.calls(run);
    expect(records.map((r) => [r.refused ?? 'forwarded', r.status])).toEqual([
      ...ATTEMPTS.map((a) => [a.refused, a.status]),
      ['forwarded', 200],
    ]);
    expect(records.at(-1)?.tokens.input).toBe(ANTHROPIC_USAGE.input_tokens);
    expect(run.summary()).toMatchObject({ calls: 1, refused: ATTEMPTS.length });
    expect(JSON.stringify(records)).not.toContain(run.session.token);
  });

  it("opens each provider's own endpoints to its run: Codex's Responses and models listing, Gemini's generate and count calls", async () => {
    h = await startGateway(root.dir, {
      anthropic: anthropic.url,
      openai: `${openai.url}/v1`,
      gemini: gemini.url,
    });
    const codex = await h.open('openai');
    const geminiRun = await h.open('gemini');
    const call = (token: string, method: string, path: string) =>
      rawRequest(
        { url: h.tcp.address },
        {
          method,
          path,
          headers: { authorization: `Bearer ${token}` },
          body: method === 'POST' ? '{}' : undefined,
        },
      );
    expect((await call(codex.session.token, 'POST', '/openai/responses')).status).toBe(200);
    expect((await call(codex.session.token, 'GET', '/openai/models?client_version=0.169.0')).status).toBe(
      200,
    );
    expect(openai.requests.at(-1)?.url).toBe('/v1/models?client_version=0.169.0');
    // Codex's token on Anthropic's endpoint: refused, never sent.
    const before = anthropic.requests.length;
    expect((await call(codex.session.token, 'POST', '/anthropic/v1/messages')).status).toBe(403);
    expect(anthropic.requests.length).toBe(before);
    for (const path of [
      '/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
      '/gemini/v1beta/models/gemini-2.5-pro:generateContent',
      '/gemini/v1beta/models/gemini-2.5-pro:countTokens',
    ])
      expect((await call(geminiRun.session.token, 'POST', path)).status).toBe(200);
    // Gemini's ?key= is how its token may come; it is never passed on.
    const keyed = await rawRequest(
      { url: h.tcp.address },
      {
        path: `/gemini/v1beta/models/gemini-2.5-pro:generateContent?key=${geminiRun.session.token}`,
        body: '{}',
      },
    );
    expect(keyed.status).toBe(200);
    expect(gemini.requests.at(-1)?.url).toBe('/v1beta/models/gemini-2.5-pro:generateContent');
    expect(gemini.requests.at(-1)?.headers['x-goog-api-key']).toBe(KEYS.gemini);
    await Promise.all([codex.stop(), geminiRun.stop()]);
    expect(codex.summary()).toMatchObject({ calls: 2, refused: 1 });
    expect(geminiRun.summary()).toMatchObject({ calls: 4, refused: 0 });
  });
});
