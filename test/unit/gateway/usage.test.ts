import { describe, expect, it } from 'vitest';
import { costOf, DEFAULT_PRICES, priceOf } from '../../../src/gateway/prices.js';
import { clientKey, PROVIDERS, requestFacts } from '../../../src/gateway/providers.js';
import { retryDelayMs } from '../../../src/gateway/upstream.js';
import { UsageReader } from '../../../src/gateway/usage.js';

/** Feeds `text` to a reader in chunks of `size` bytes (cutting events, lines and UTF-8 characters). */
function read(provider: keyof typeof PROVIDERS, contentType: string, text: string, size: number) {
  const reader = new UsageReader(PROVIDERS[provider], contentType);
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) reader.push(bytes.subarray(i, i + size));
  return reader.end();
}

const anthropicStream = [
  'event: message_start',
  'data: {"type":"message_start","message":{"model":"claude-sonnet-4-5","usage":{"input_tokens":10,"cache_creation_input_tokens":200,"cache_read_input_tokens":3000,"output_tokens":1}}}',
  '',
  'event: content_block_delta',
  'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ünïcödé ✓"}}',
  '',
  'event: message_delta',
  'data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":42}}',
  '',
  '',
].join('\r\n');

describe('usage read from answers as they stream', () => {
  it.each([1, 3, 7, 64, 100_000])(
    'Anthropic SSE cut every %i bytes: cached input counted, last output wins',
    (size) => {
      expect(read('anthropic', 'text/event-stream; charset=utf-8', anthropicStream, size)).toEqual({
        usage: { input: 3210, output: 42, cacheRead: 3000, cacheWrite: 200 },
        reported: true,
        toolUse: false,
      });
    },
  );

  it('OpenAI Responses SSE: usage from response.completed; a [DONE] line is ignored', () => {
    const text = [
      'data: {"type":"response.created","response":{"id":"r"}}',
      '',
      'data: {"type":"response.completed","response":{"usage":{"input_tokens":900,"input_tokens_details":{"cached_tokens":800},"output_tokens":12}}}',
      '',
      'data: [DONE]',
      '',
    ].join('\n');
    expect(read('openai', 'text/event-stream', text, 5).usage).toEqual({
      input: 900,
      output: 12,
      cacheRead: 800,
      cacheWrite: 0,
    });
  });

  it('OpenAI Chat Completions JSON (Goose): prompt and completion tokens', () => {
    const body = JSON.stringify({ usage: { prompt_tokens: 50, completion_tokens: 7 } });
    expect(read('openai', 'application/json', body, 4).usage).toMatchObject({ input: 50, output: 7 });
  });

  it('Gemini: the last chunk of an SSE stream, and the last element of a JSON array; thoughts count as output', () => {
    const chunk = (p: number, c: number) =>
      `data: ${JSON.stringify({ usageMetadata: { promptTokenCount: p, candidatesTokenCount: c, thoughtsTokenCount: 5 } })}\n\n`;
    expect(read('gemini', 'text/event-stream', chunk(100, 1) + chunk(100, 30), 9).usage).toMatchObject({
      input: 100,
      output: 35,
    });
    const array = JSON.stringify([
      { usageMetadata: { promptTokenCount: 1 } },
      { usageMetadata: { promptTokenCount: 77, candidatesTokenCount: 3 } },
    ]);
    expect(read('gemini', 'application/json', array, 11).usage).toMatchObject({ input: 77, output: 3 });
  });

  const anthropicTool = [
    'event: message_start',
    'data: {"type":"message_start","message":{"usage":{"input_tokens":10,"output_tokens":1}}}',
    '',
    'event: content_block_delta',
    'data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I will not call tool_use: \\"type\\":\\"tool_use\\""}}',
    '',
    'event: content_block_start',
    'data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{}}}',
    '',
    'event: message_delta',
    'data: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}',
    '',
    '',
  ].join('\n');

  it.each([1, 5, 64, 100_000])(
    'Anthropic SSE cut every %i bytes: a tool_use block is a tool call',
    (size) => {
      expect(read('anthropic', 'text/event-stream', anthropicTool, size)).toEqual({
        usage: { input: 10, output: 9, cacheRead: 0, cacheWrite: 0 },
        reported: true,
        toolUse: true,
      });
    },
  );

  it('a text delta that only mentions a tool is not a tool call, whatever it quotes', () => {
    const text = anthropicTool.split('event: content_block_start')[0]!;
    expect(read('anthropic', 'text/event-stream', text, 3).toolUse).toBe(false);
  });

  it('reads a tool call in every provider shape: Responses items, Chat tool_calls, Gemini functionCall, JSON bodies', () => {
    const sse = (...events: unknown[]) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');
    expect(
      read(
        'openai',
        'text/event-stream',
        sse(
          { type: 'response.output_item.added', item: { type: 'function_call', name: 'shell' } },
          { type: 'response.completed', response: { usage: { input_tokens: 5, output_tokens: 2 } } },
        ),
        7,
      ).toolUse,
    ).toBe(true);
    expect(
      read(
        'openai',
        'text/event-stream',
        sse({ choices: [{ delta: { tool_calls: [{ index: 0, function: { name: 'x' } }] } }] }),
        4,
      ).toolUse,
    ).toBe(true);
    expect(
      read('openai', 'application/json', JSON.stringify({ output: [{ type: 'message', content: [] }] }), 9)
        .toolUse,
    ).toBe(false);
    const gemini = { candidates: [{ content: { parts: [{ functionCall: { name: 'run', args: {} } }] } }] };
    expect(read('gemini', 'text/event-stream', sse(gemini), 6).toolUse).toBe(true);
    expect(
      read('gemini', 'application/json', JSON.stringify([{ candidates: [] }, gemini], null, 2), 50).toolUse,
    ).toBe(true);
    expect(
      read(
        'anthropic',
        'application/json',
        JSON.stringify({ content: [{ type: 'tool_use', name: 'Bash' }] }),
        8,
      ).toolUse,
    ).toBe(true);
  });

  // Long streams: only the first and last 64 KiB are read; both ends carry what is recorded.
  const delta = (text: string) =>
    `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })}\n\n`;
  const longAnthropic = [
    'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":7000,"cache_read_input_tokens":5000,"output_tokens":1}}}\n\n',
    delta('x'.repeat(3000)).repeat(400),
    'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t","name":"Bash","input":{}}}\n\n',
    delta('y'.repeat(100)).repeat(2000),
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":4321}}\n\n',
    'event: message_stop\ndata: {"type":"message_stop"}\n\n',
  ].join('');

  it.each([7, 1000, 65_536, 1_000_000])(
    'a long Anthropic stream cut every %i bytes: usage from its first and last events, the tool call from its stop reason',
    (size) => {
      expect(read('anthropic', 'text/event-stream', longAnthropic, size)).toEqual({
        usage: { input: 12_000, output: 4321, cacheRead: 5000, cacheWrite: 0 },
        reported: true,
        toolUse: true,
      });
    },
  );

  it('a last event longer than the ends read (OpenAI response.completed with the whole answer) is read whole', () => {
    const text = [
      'data: {"type":"response.created","response":{"id":"r"}}\n\n',
      `data: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'z'.repeat(100) })}\n\n`.repeat(
        3000,
      ),
      `data: ${JSON.stringify({
        type: 'response.completed',
        response: {
          output: [
            { type: 'message', content: [{ type: 'output_text', text: 'z'.repeat(300_000) }] },
            { type: 'function_call', name: 'shell', arguments: '{}' },
          ],
          usage: { input_tokens: 900, output_tokens: 75_000 },
        },
      })}\n\n`,
      'data: [DONE]\n\n',
    ].join('');
    for (const size of [13, 4096, 65_536])
      expect(read('openai', 'text/event-stream', text, size), `cut every ${size}`).toEqual({
        usage: { input: 900, output: 75_000, cacheRead: 0, cacheWrite: 0 },
        reported: true,
        toolUse: true,
      });
  });

  it('an answer without usage, or not JSON, reports none', () => {
    expect(read('anthropic', 'application/json', '<html>bad gateway</html>', 4)).toEqual({
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      reported: false,
      toolUse: false,
    });
    expect(read('anthropic', 'text/event-stream', 'data: {not json\n\n', 4).reported).toBe(false);
  });
});

describe('prices', () => {
  it('matches the longest prefix of the model id and prices cached input apart', () => {
    expect(priceOf('claude-opus-4-5-20251101', DEFAULT_PRICES)).toBe(DEFAULT_PRICES['claude-opus-4-5']);
    expect(priceOf('claude-opus-4-1-20250805', DEFAULT_PRICES)).toBe(DEFAULT_PRICES['claude-opus-4']);
    expect(priceOf('models/gemini-2.5-flash', DEFAULT_PRICES)).toBe(DEFAULT_PRICES['gemini-2.5-flash']);
    expect(priceOf('my-local-model', DEFAULT_PRICES)).toBeUndefined();
    const usage = { input: 1_000_000, output: 1_000_000, cacheRead: 500_000, cacheWrite: 0 };
    // 0.5M plain at $3, 0.5M cached at $0.30, 1M out at $15.
    expect(costOf(usage, DEFAULT_PRICES['claude-sonnet-4'])).toBeCloseTo(1.5 + 0.15 + 15, 8);
    expect(costOf(usage, undefined)).toBeUndefined();
  });
});

describe('retry-after', () => {
  const now = new Date('2026-11-26T10:00:00Z');
  it('reads seconds, milliseconds and an HTTP date; defaults to one second', () => {
    expect(retryDelayMs({ 'retry-after': '2' }, now)).toBe(2000);
    expect(retryDelayMs({ 'retry-after-ms': '250', 'retry-after': '9' }, now)).toBe(250);
    expect(retryDelayMs({ 'retry-after': 'Thu, 26 Nov 2026 10:00:05 GMT' }, now)).toBe(5000);
    expect(retryDelayMs({}, now)).toBe(1000);
    expect(retryDelayMs({ 'retry-after': 'soon' }, now)).toBe(1000);
  });
});

describe('where a CLI puts its key', () => {
  const q = (s = '') => new URLSearchParams(s);
  it('finds x-api-key, a bearer, x-goog-api-key and ?key=', () => {
    expect(clientKey({ 'x-api-key': 'a' }, q())).toBe('a');
    expect(clientKey({ authorization: 'Bearer  b ' }, q())).toBe('b');
    expect(clientKey({ authorization: 'Basic zzz' }, q())).toBeUndefined();
    expect(clientKey({ 'x-goog-api-key': 'c' }, q())).toBe('c');
    expect(clientKey({}, q('alt=sse&key=d'))).toBe('d');
    expect(clientKey({}, q())).toBeUndefined();
  });

  it('names the model from the body or from a Gemini path', () => {
    const requestModel = (pathname: string, body: Buffer) => requestFacts(pathname, body).model;
    expect(requestModel('/v1/messages', Buffer.from('{"model":"claude-x","stream":true}'))).toBe('claude-x');
    expect(requestModel('/v1beta/models/gemini-2.5-pro:streamGenerateContent', Buffer.from('{}'))).toBe(
      'gemini-2.5-pro',
    );
    expect(requestModel('/v1/messages', Buffer.from('not json'))).toBeUndefined();
    expect(requestModel('/v1beta/models/gem%E0%A4%A:generateContent', Buffer.from('{}'))).toBe('gem%E0%A4%A');
  });
});
