import type { IncomingHttpHeaders } from 'node:http';
import { topLevelFields } from './json-fields.js';
import type { ProviderId, Usage } from './types.js';

// What the gateway knows about each provider API: where it lives by default, where a client puts its
// key and where the real one goes, how the answer reports usage, and how an error looks to that CLI.

export interface ProviderSpec {
  id: ProviderId;
  /** The public API, used when neither config nor the daemon's environment names another. */
  defaultBaseUrl: string;
  /** `secrets:` names whose value is this provider's key, first present wins. */
  keySecrets: readonly string[];
  /** Sets the real key on the upstream request (the client's key headers are already removed). */
  setKey(headers: Record<string, string>, key: string): void;
  /** Usage carried by one JSON object of the answer (a whole body or one SSE event); undefined if none. */
  usageOf(value: unknown): Partial<Usage> | undefined;
  /** The JSON object (a whole body or one SSE event) asks the agent to call a tool. */
  asksTool(value: unknown): boolean;
  /** An error body in the provider's shape, which its CLI reports. */
  errorBody(status: number, message: string): unknown;
}

const rec = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const n = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Drops keys whose value is undefined (a partial usage merges over what earlier events said). */
function defined(u: Record<string, number | undefined>): Partial<Usage> | undefined {
  const out = Object.fromEntries(Object.entries(u).filter(([, v]) => v !== undefined));
  return Object.keys(out).length ? (out as Partial<Usage>) : undefined;
}

/** Anthropic Messages: `usage` on the body, on message_start's message, and on message_delta. */
function anthropicUsage(value: unknown): Partial<Usage> | undefined {
  const v = rec(value);
  const usage = rec(v?.usage) ?? rec(rec(v?.message)?.usage);
  if (!usage) return undefined;
  const plain = n(usage.input_tokens);
  const write = n(usage.cache_creation_input_tokens);
  const read = n(usage.cache_read_input_tokens);
  // Anthropic counts cached input apart from input_tokens; `input` here is all of it.
  const input = plain === undefined ? undefined : plain + (write ?? 0) + (read ?? 0);
  return defined({ input, output: n(usage.output_tokens), cacheRead: read, cacheWrite: write });
}

/** OpenAI Responses (`usage` on the body or on response.completed's response) and Chat Completions. */
function openaiUsage(value: unknown): Partial<Usage> | undefined {
  const v = rec(value);
  const usage = rec(v?.usage) ?? rec(rec(v?.response)?.usage);
  if (!usage) return undefined;
  const details = rec(usage.input_tokens_details) ?? rec(usage.prompt_tokens_details);
  return defined({
    input: n(usage.input_tokens) ?? n(usage.prompt_tokens),
    output: n(usage.output_tokens) ?? n(usage.completion_tokens),
    cacheRead: n(details?.cached_tokens),
  });
}

/** Gemini: `usageMetadata` on every streamed chunk (cumulative) or on the body. */
function geminiUsage(value: unknown): Partial<Usage> | undefined {
  const items = Array.isArray(value) ? value : [value];
  const meta = rec(rec(items.at(-1))?.usageMetadata);
  if (!meta) return undefined;
  const thoughts = n(meta.thoughtsTokenCount) ?? 0;
  const candidates = n(meta.candidatesTokenCount);
  return defined({
    input: n(meta.promptTokenCount),
    output: candidates === undefined ? undefined : candidates + thoughts,
    cacheRead: n(meta.cachedContentTokenCount),
  });
}

const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Anthropic: a `tool_use` content block (the body's content, a content_block_start) or stop reason. */
function anthropicAsksTool(value: unknown): boolean {
  const v = rec(value);
  if (rec(v?.content_block)?.type === 'tool_use') return true;
  if (rec(v?.delta)?.stop_reason === 'tool_use' || v?.stop_reason === 'tool_use') return true;
  return arr(v?.content).some((c) => rec(c)?.type === 'tool_use');
}

/** Item types of the Responses API that are the agent's tools to run. */
const OPENAI_TOOL_ITEMS = new Set(['function_call', 'custom_tool_call', 'local_shell_call']);

/** OpenAI Responses (an output item, streamed or in the body) and Chat Completions (tool_calls). */
function openaiAsksTool(value: unknown): boolean {
  const v = rec(value);
  const isTool = (item: unknown) => OPENAI_TOOL_ITEMS.has(String(rec(item)?.type));
  if (isTool(v?.item)) return true;
  if (arr(v?.output).some(isTool) || arr(rec(v?.response)?.output).some(isTool)) return true;
  return arr(v?.choices).some((c) => {
    const choice = rec(c);
    return (
      choice?.finish_reason === 'tool_calls' ||
      arr(rec(choice?.message)?.tool_calls).length > 0 ||
      arr(rec(choice?.delta)?.tool_calls).length > 0
    );
  });
}

/** Gemini: a `functionCall` part in a candidate (a streamed chunk, the body, or a JSON array of chunks). */
function geminiAsksTool(value: unknown): boolean {
  const items = Array.isArray(value) ? value : [value];
  return items.some((item) =>
    arr(rec(item)?.candidates).some((c) =>
      arr(rec(rec(c)?.content)?.parts).some((p) => rec(p)?.functionCall !== undefined),
    ),
  );
}

export const PROVIDERS: Record<ProviderId, ProviderSpec> = {
  anthropic: {
    id: 'anthropic',
    defaultBaseUrl: 'https://api.anthropic.com',
    keySecrets: ['ANTHROPIC_API_KEY'],
    setKey: (h, key) => {
      h['x-api-key'] = key;
    },
    usageOf: anthropicUsage,
    asksTool: anthropicAsksTool,
    errorBody: (status, message) => ({
      type: 'error',
      error: { type: status === 401 ? 'authentication_error' : 'invalid_request_error', message },
    }),
  },
  openai: {
    id: 'openai',
    defaultBaseUrl: 'https://api.openai.com/v1',
    keySecrets: ['CODEX_API_KEY', 'OPENAI_API_KEY'],
    setKey: (h, key) => {
      h.authorization = `Bearer ${key}`;
    },
    usageOf: openaiUsage,
    asksTool: openaiAsksTool,
    errorBody: (status, message) => ({
      error: {
        message,
        type: 'invalid_request_error',
        code: status === 401 ? 'invalid_api_key' : 'budget_exceeded',
      },
    }),
  },
  gemini: {
    id: 'gemini',
    defaultBaseUrl: 'https://generativelanguage.googleapis.com',
    keySecrets: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
    setKey: (h, key) => {
      h['x-goog-api-key'] = key;
    },
    usageOf: geminiUsage,
    asksTool: geminiAsksTool,
    errorBody: (status, message) => ({
      error: {
        code: status,
        message,
        status: status === 401 ? 'UNAUTHENTICATED' : 'FAILED_PRECONDITION',
      },
    }),
  },
};

/** Headers that carry a client's key, in any provider's convention: never forwarded. */
export const KEY_HEADERS = ['x-api-key', 'authorization', 'x-goog-api-key', 'api-key'] as const;

/** The key a client sent, wherever its CLI puts it (header or `?key=`). */
export function clientKey(headers: IncomingHttpHeaders, search: URLSearchParams): string | undefined {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim() || undefined;
  const bearer = one(headers.authorization);
  return (
    one(headers['x-api-key']) ??
    (bearer && /^bearer\s+/i.test(bearer) ? bearer.replace(/^bearer\s+/i, '') : undefined) ??
    one(headers['x-goog-api-key']) ??
    one(headers['api-key']) ??
    (search.get('key') || undefined)
  );
}

/** What the gateway reads from a request before forwarding it: the model, and the output it may ask for. */
export interface RequestFacts {
  model?: string;
  /** The most output tokens the request asks for (max_tokens, max_output_tokens, maxOutputTokens…). */
  maxOutput?: number;
}

const positive = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined;

/** Gemini's model in its `/models/<model>:<method>` path. */
export function pathModel(pathname: string): string | undefined {
  const m = /\/models\/([^/:]+):/.exec(pathname);
  if (!m?.[1]) return undefined;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    // A malformed escape is the agent's to answer for: the provider will say so; the record keeps it raw.
    return m[1];
  }
}

/** The top-level members of a model request the gateway reads. */
const REQUEST_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'max_tokens',
  'max_output_tokens',
  'max_completion_tokens',
  'generationConfig',
]);

/**
 * The model a request names (`model` in its JSON body, else Gemini's path) and its output limit, in
 * each provider's field: Anthropic's and Chat Completions' `max_tokens` / `max_completion_tokens`, the
 * Responses API's `max_output_tokens`, Gemini's `generationConfig.maxOutputTokens`. Only those members
 * are parsed (topLevelFields): the conversation around them is never held a second time.
 */
export function requestFacts(pathname: string, body: Buffer): RequestFacts {
  const fromPath = pathModel(pathname);
  const value = topLevelFields(body, REQUEST_FIELDS);
  const model = fromPath ?? (typeof value?.model === 'string' ? value.model : undefined);
  const maxOutput =
    positive(value?.max_tokens) ??
    positive(value?.max_output_tokens) ??
    positive(value?.max_completion_tokens) ??
    positive(rec(value?.generationConfig)?.maxOutputTokens);
  return { ...(model !== undefined ? { model } : {}), ...(maxOutput !== undefined ? { maxOutput } : {}) };
}
