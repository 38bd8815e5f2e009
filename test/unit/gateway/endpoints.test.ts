import { describe, expect, it } from 'vitest';
import { routeEndpoint } from '../../../src/gateway/endpoints.js';
import { estimateCall, dearestPrice } from '../../../src/gateway/estimate.js';
import { DEFAULT_PRICES } from '../../../src/gateway/prices.js';
import type { ProviderId } from '../../../src/gateway/types.js';

/** What each real CLI (and the daemon's preflight) calls, as the gateway sees the request line. */
const OPEN: [ProviderId, string, string, string][] = [
  ['anthropic', 'POST', '/anthropic/v1/messages?beta=true', '/v1/messages?beta=true'],
  ['anthropic', 'POST', '/anthropic/v1/messages', '/v1/messages'],
  [
    'anthropic',
    'POST',
    '/anthropic/v1/messages/count_tokens?beta=true',
    '/v1/messages/count_tokens?beta=true',
  ],
  ['anthropic', 'GET', '/anthropic/v1/models', '/v1/models'],
  ['openai', 'POST', '/openai/responses', '/responses'],
  ['openai', 'POST', '/openai/chat/completions', '/chat/completions'],
  ['openai', 'GET', '/openai/models?client_version=0.169.0', '/models?client_version=0.169.0'],
  [
    'gemini',
    'POST',
    '/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
    '/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse',
  ],
  [
    'gemini',
    'POST',
    '/gemini/v1beta/models/gemini-2.5-flash:generateContent?key=trg-token',
    '/v1beta/models/gemini-2.5-flash:generateContent',
  ],
  [
    'gemini',
    'POST',
    '/gemini/v1beta/models/gemini-2.5-pro:countTokens',
    '/v1beta/models/gemini-2.5-pro:countTokens',
  ],
  ['gemini', 'GET', '/gemini/v1beta/models', '/v1beta/models'],
];

/** Other providers, other paths, and every encoded or ambiguous spelling of a path. */
const REFUSED: [ProviderId, string, string, string, number][] = [
  ['anthropic', 'POST', '/openai/files', 'gateway.provider', 403],
  ['anthropic', 'POST', '/openai/responses', 'gateway.provider', 403],
  ['anthropic', 'POST', '/gemini/v1beta/models/x:generateContent', 'gateway.provider', 403],
  ['anthropic', 'POST', '/nope/v1/messages', 'gateway.endpoint', 404],
  ['anthropic', 'POST', '//evil.example/anthropic/v1/messages', 'gateway.endpoint', 404],
  ['anthropic', 'POST', 'http://evil.example/anthropic/v1/messages', 'gateway.endpoint', 404],
  ['anthropic', 'POST', '/anthropic/v1/files', 'gateway.endpoint', 404],
  ['anthropic', 'POST', '/anthropic/v1/messages/batches', 'gateway.endpoint', 404],
  ['anthropic', 'POST', '/anthropic/v1/messages/', 'gateway.endpoint', 404],
  ['anthropic', 'POST', '/anthropic/..%2F..%2Fadmin', 'gateway.endpoint', 400],
  ['anthropic', 'POST', '/anthropic/v1/messages/..%2F..%2Ffiles', 'gateway.endpoint', 400],
  ['anthropic', 'POST', '/anthropic/%2e%2e/%2e%2e/v1/messages', 'gateway.endpoint', 400],
  ['anthropic', 'POST', '/anthropic/v1/%6Dessages', 'gateway.endpoint', 400],
  ['anthropic', 'POST', '/anthropic/v1/messages/../../v1/files', 'gateway.endpoint', 400],
  ['anthropic', 'POST', '/anthropic/v1/./messages', 'gateway.endpoint', 400],
  ['anthropic', 'POST', '/anthropic//v1/messages', 'gateway.endpoint', 400],
  ['anthropic', 'POST', '/anthropic//evil.example/steal', 'gateway.endpoint', 400],
  ['anthropic', 'POST', '/anthropic/v1\\messages', 'gateway.endpoint', 400],
  ['anthropic', 'POST', '/anthropic/v1/messages;/../files', 'gateway.endpoint', 400],
  ['anthropic', 'POST', '/anthropic/@evil.example/x', 'gateway.endpoint', 404],
  ['anthropic', 'GET', '/anthropic/v1/messages', 'gateway.endpoint', 405],
  ['anthropic', 'DELETE', '/anthropic/v1/models', 'gateway.endpoint', 405],
  ['anthropic', 'POST', '/anthropic/v1/messages?beta=true&beta=false', 'gateway.endpoint', 400],
  ['anthropic', 'POST', '/anthropic/v1/messages?url=http://evil.example/', 'gateway.endpoint', 400],
  ['anthropic', 'POST', '/anthropic/v1/messages?key=trg-token', 'gateway.endpoint', 400],
  ['openai', 'POST', '/openai/files', 'gateway.endpoint', 404],
  ['openai', 'GET', '/openai/files/file-abc/content', 'gateway.endpoint', 404],
  ['openai', 'POST', '/openai/../v1/files', 'gateway.endpoint', 400],
  ['openai', 'POST', '/anthropic/v1/messages', 'gateway.provider', 403],
  ['gemini', 'POST', '/gemini/v1beta/files', 'gateway.endpoint', 404],
  ['gemini', 'POST', '/gemini/v1beta/models/..:generateContent', 'gateway.endpoint', 404],
  ['gemini', 'POST', '/gemini/v1beta/models/%2e%2e:generateContent', 'gateway.endpoint', 400],
  ['gemini', 'POST', '/gemini/v1beta/models/x/..%2F..%2Fcorpora:generateContent', 'gateway.endpoint', 400],
  ['gemini', 'POST', '/gemini/v1beta/models/x:generateContent/extra', 'gateway.endpoint', 404],
  ['gemini', 'POST', '/gemini/v1beta/tunedModels/x:generateContent', 'gateway.endpoint', 404],
  [
    'gemini',
    'POST',
    '/gemini/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&upload_protocol=raw',
    'gateway.endpoint',
    400,
  ],
];

describe("the model endpoints a run's token opens", () => {
  it.each(OPEN)('%s: %s %s goes to %s', (provider, method, url, forwarded) => {
    const route = routeEndpoint(provider, method, url);
    if ('reason' in route) throw new Error(route.message);
    expect(route.path + route.search).toBe(forwarded);
  });

  it.each(REFUSED)('%s: %s %s is refused (%s, %i)', (provider, method, url, reason, status) => {
    const route = routeEndpoint(provider, method, url);
    expect(route).toMatchObject({ reason, status });
    if (!('reason' in route)) return;
    expect(route.message).toMatch(/^triage-runner: /);
    expect(route.path).not.toContain('?');
  });

  it('says which endpoints a provider has when a path is not one of them', () => {
    const route = routeEndpoint('anthropic', 'POST', '/anthropic/v1/files');
    expect(route).toMatchObject({
      message: expect.stringContaining('POST /v1/messages, POST /v1/messages/count_tokens, GET /v1/models'),
    });
    expect(routeEndpoint('anthropic', 'POST', '/anthropic/v1/%2e%2e/files')).toMatchObject({
      message: expect.stringContaining('has a percent-encoded character'),
    });
  });
});

describe("a call's estimate while it is under way", () => {
  const sonnet = DEFAULT_PRICES['claude-sonnet-4'];

  it("is its body's bytes / 4 in and the request's max_tokens out, at most the configured reserve", () => {
    expect(
      estimateCall({ bodyBytes: 4000, maxOutput: 500, reserveOutput: 16_384, price: undefined }),
    ).toEqual({
      tokens: 1500,
      usd: 0,
    });
    // Claude Code asks for 128,000 on every call: the reserve caps it.
    expect(
      estimateCall({ bodyBytes: 4000, maxOutput: 128_000, reserveOutput: 16_384, price: sonnet }),
    ).toEqual({
      tokens: 1000 + 16_384,
      usd: (1000 * 3 + 16_384 * 15) / 1e6,
    });
    expect(estimateCall({ bodyBytes: 1, reserveOutput: 100, price: undefined }).tokens).toBe(101);
  });

  it("prices a model not yet known at the table's dearest rates", () => {
    expect(dearestPrice(DEFAULT_PRICES)).toEqual({ input: 15, output: 75 });
    expect(dearestPrice({})).toBeUndefined();
  });
});
