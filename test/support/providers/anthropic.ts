// A fake Anthropic Messages API for the real Claude Code CLI: one final text answer per request,
// streamed (SSE) or not, with fixed usage numbers the contract test checks the adapter reports.
import { startProvider } from './server.js';
import type { FakeProvider, ProviderReply, RecordedRequest } from './server.js';
import { modelsListing } from './models-listing.js';

export const ANTHROPIC_ANSWER = 'Investigation complete: the pod is crash-looping on a missing ConfigMap.';
/** Usage reported for every /v1/messages call. */
export const ANTHROPIC_USAGE = { input_tokens: 1234, output_tokens: 56 };

/** A tool call the fake model makes, e.g. `{ name: 'Bash', input: { command: 'true' } }`. */
export interface ToolCall {
  name: string;
  input: Record<string, unknown>;
}

export interface AnthropicFake extends FakeProvider {
  /** While set, a model call whose last message carries no tool result is answered with this tool call. */
  toolCall: ToolCall | undefined;
  /** Shorthand for a Bash tool call running this command. */
  toolCommand: string | undefined;
}

export interface MessagesBody {
  model?: string;
  stream?: boolean;
  messages?: { role?: string; content?: unknown }[];
}

function hasToolResult(body: MessagesBody): boolean {
  const last = body.messages?.at(-1);
  return (
    Array.isArray(last?.content) && last.content.some((c: { type?: string }) => c.type === 'tool_result')
  );
}

/** Usage as the Messages API reports it (input_tokens excludes the cached input). */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

const FIXED_USAGE: AnthropicUsage = {
  ...ANTHROPIC_USAGE,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
};

/** A streamed assistant turn that calls one tool. */
export function toolUseReply(
  body: MessagesBody,
  call: ToolCall,
  usage: AnthropicUsage = FIXED_USAGE,
): ProviderReply {
  const id = `msg_fake_tool_${Date.now()}`;
  const input = JSON.stringify(call.input);
  return {
    kind: 'sse',
    events: [
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: {
            id,
            type: 'message',
            role: 'assistant',
            model: body.model ?? 'claude-sonnet-4-5',
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { ...usage, output_tokens: 1 },
          },
        },
      },
      {
        event: 'content_block_start',
        data: {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: `toolu_fake_${Date.now()}`, name: call.name, input: {} },
        },
      },
      {
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: input },
        },
      },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      {
        event: 'message_delta',
        data: {
          type: 'message_delta',
          delta: { stop_reason: 'tool_use', stop_sequence: null },
          usage: { output_tokens: usage.output_tokens },
        },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ],
  };
}

function messageReply(req: RecordedRequest, toolCall: ToolCall | undefined): ProviderReply {
  let body: MessagesBody = {};
  try {
    body = JSON.parse(req.body) as typeof body;
  } catch {
    // a body we cannot read still gets an answer; the test inspects the recorded text
  }
  if (toolCall !== undefined && body.stream && !hasToolResult(body)) return toolUseReply(body, toolCall);
  return textReply(body, ANTHROPIC_ANSWER);
}

/** A final assistant answer, streamed or not as the request asked. */
export function textReply(
  body: MessagesBody,
  text: string,
  usage: AnthropicUsage = FIXED_USAGE,
): ProviderReply {
  const model = body.model ?? 'claude-sonnet-4-5';
  const id = `msg_fake_${Date.now()}`;
  if (!body.stream) {
    return {
      kind: 'json',
      body: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage,
      },
    };
  }
  return {
    kind: 'sse',
    events: [
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: {
            id,
            type: 'message',
            role: 'assistant',
            model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { ...usage, output_tokens: 1 },
          },
        },
      },
      {
        event: 'content_block_start',
        data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      },
      {
        event: 'content_block_delta',
        data: {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'text_delta', text },
        },
      },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      {
        event: 'message_delta',
        data: {
          type: 'message_delta',
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: usage.output_tokens },
        },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ],
  };
}

function route(req: RecordedRequest, fake: { toolCall: ToolCall | undefined }): ProviderReply | undefined {
  const path = req.url.split('?')[0] ?? '';
  if (req.method === 'POST' && path === '/v1/messages') return messageReply(req, fake.toolCall);
  if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
    return { kind: 'json', body: { input_tokens: ANTHROPIC_USAGE.input_tokens } };
  }
  if (req.method === 'HEAD' && path === '/api/hello') return { kind: 'json', body: {} };
  // The models listing the daemon's start-up check asks for through its gateway.
  return modelsListing('anthropic', req);
}

function errorBody(status: number): unknown {
  const type = status === 401 ? 'authentication_error' : status === 404 ? 'not_found_error' : 'api_error';
  const message = status === 401 ? 'invalid x-api-key' : `fake provider answered ${status}`;
  return { type: 'error', error: { type, message } };
}

/** Starts the fake Anthropic API; point the CLI at it with ANTHROPIC_BASE_URL = `url`. */
export async function startAnthropic(): Promise<AnthropicFake> {
  const state = { toolCall: undefined as ToolCall | undefined };
  const provider = await startProvider((req) => route(req, state), errorBody);
  return Object.defineProperties(provider, {
    toolCall: {
      get: () => state.toolCall,
      set: (v: ToolCall | undefined) => {
        state.toolCall = v;
      },
      enumerable: true,
    },
    toolCommand: {
      get: () => (state.toolCall?.name === 'Bash' ? state.toolCall.input.command : undefined),
      set: (v: string | undefined) => {
        state.toolCall =
          v === undefined
            ? undefined
            : { name: 'Bash', input: { command: v, description: 'fake tool call' } };
      },
      enumerable: true,
    },
  }) as AnthropicFake;
}

/** The requests that were model calls (the CLI also makes other calls). */
export function messageRequests(p: FakeProvider): RecordedRequest[] {
  return p.requests.filter((r) => r.url.split('?')[0] === '/v1/messages');
}
