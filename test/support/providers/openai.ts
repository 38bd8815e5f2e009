// A fake OpenAI Responses API for the real Codex CLI: `POST /v1/responses` answered as an SSE stream
// with one final text message and fixed usage numbers the contract test checks the adapter reports.
import { startProvider } from './server.js';
import type { FakeProvider, ProviderReply, RecordedRequest } from './server.js';
import { modelsListing } from './models-listing.js';

export const OPENAI_ANSWER = 'Investigation complete: the node ran out of memory.';
/** Usage reported for every /v1/responses call. */
export const OPENAI_USAGE = { input_tokens: 2345, output_tokens: 67 };

/** Usage as the Responses API reports it (input_tokens includes the cached ones). */
export interface ResponsesUsage {
  input_tokens: number;
  cached_tokens: number;
  output_tokens: number;
}

/** A Responses API SSE stream whose one output item is `item` (a message, or a function call). */
export function responseStream(
  req: RecordedRequest,
  item: Record<string, unknown>,
  counted: ResponsesUsage = { ...OPENAI_USAGE, cached_tokens: 0 },
): ProviderReply {
  let body: { model?: string } = {};
  try {
    body = JSON.parse(req.body) as typeof body;
  } catch {
    // answered anyway; the test inspects the recorded text
  }
  const id = `resp_fake_${Date.now()}`;
  const model = body.model ?? 'gpt-5';
  const usage = {
    input_tokens: counted.input_tokens,
    input_tokens_details: { cached_tokens: counted.cached_tokens },
    output_tokens: counted.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: counted.input_tokens + counted.output_tokens,
  };
  const base = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model };
  const text = item.type === 'message' ? messageText(item) : undefined;
  const started = item.type === 'message' ? { ...item, status: 'in_progress', content: [] } : item;
  return {
    kind: 'sse',
    events: [
      {
        event: 'response.created',
        data: { type: 'response.created', response: { ...base, status: 'in_progress', output: [] } },
      },
      {
        event: 'response.output_item.added',
        data: { type: 'response.output_item.added', output_index: 0, item: started },
      },
      ...(text === undefined
        ? []
        : [
            {
              event: 'response.output_text.delta',
              data: {
                type: 'response.output_text.delta',
                item_id: item.id,
                output_index: 0,
                content_index: 0,
                delta: text,
              },
            },
          ]),
      {
        event: 'response.output_item.done',
        data: { type: 'response.output_item.done', output_index: 0, item },
      },
      {
        event: 'response.completed',
        data: {
          type: 'response.completed',
          response: { ...base, status: 'completed', output: [item], usage },
        },
      },
    ],
  };
}

/** The text of a message item (its output_text parts). */
function messageText(item: Record<string, unknown>): string {
  const content = Array.isArray(item.content) ? (item.content as { text?: unknown }[]) : [];
  return content.map((c) => (typeof c.text === 'string' ? c.text : '')).join('');
}

/** A final assistant message item saying `text`. */
export function messageItem(text: string): Record<string, unknown> {
  return {
    type: 'message',
    id: `msg_fake_${Date.now()}`,
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
}

/** The final text answer, OPENAI_ANSWER. */
export const OPENAI_MESSAGE = {
  type: 'message',
  id: 'msg_fake_1',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text: OPENAI_ANSWER, annotations: [] }],
};

function responsesReply(req: RecordedRequest): ProviderReply {
  return responseStream(req, OPENAI_MESSAGE);
}

function route(req: RecordedRequest): ProviderReply | undefined {
  const path = req.url.split('?')[0] ?? '';
  if (req.method === 'POST' && path === '/v1/responses') return responsesReply(req);
  return modelsListing('openai', req);
}

function errorBody(status: number): unknown {
  const message =
    status === 401
      ? 'Incorrect API key provided: sk-fake. You can find your API key at the dashboard.'
      : `fake provider answered ${status}`;
  return {
    error: {
      message,
      type: status === 401 ? 'invalid_request_error' : 'server_error',
      code: status === 401 ? 'invalid_api_key' : null,
    },
  };
}

/** Starts the fake OpenAI API; configure Codex with a provider whose base_url is `${url}/v1`. */
export function startOpenAI(): Promise<FakeProvider> {
  return startProvider(route, errorBody);
}

/** The requests that were model calls. */
export function responsesRequests(p: FakeProvider): RecordedRequest[] {
  return p.requests.filter((r) => r.url.split('?')[0] === '/v1/responses');
}
