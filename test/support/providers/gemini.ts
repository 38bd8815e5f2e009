// A fake Gemini API (generativelanguage v1beta) for the real Gemini CLI: `:streamGenerateContent`
// (SSE) and `:generateContent` answered with one final text and fixed usage numbers, `:countTokens`
// answered with a count. The scripted variant asks for shell commands first, one per model call.
import { startProvider } from './server.js';
import type { FakeProvider, ProviderReply, RecordedRequest } from './server.js';
import { modelsListing } from './models-listing.js';

export const GEMINI_ANSWER = 'Investigation complete: the image tag does not exist.';
/** Usage reported for every generate call. */
export const GEMINI_USAGE = { promptTokenCount: 3456, candidatesTokenCount: 78 };

function generation(): unknown {
  return generationOf([{ text: GEMINI_ANSWER }]);
}

function route(req: RecordedRequest): ProviderReply | undefined {
  const path = req.url.split('?')[0] ?? '';
  const listing = modelsListing('gemini', req);
  if (listing) return listing;
  if (req.method !== 'POST') return undefined;
  if (path.endsWith(':streamGenerateContent')) return { kind: 'sse', events: [{ data: generation() }] };
  if (path.endsWith(':generateContent')) return { kind: 'json', body: generation() };
  if (path.endsWith(':countTokens'))
    return { kind: 'json', body: { totalTokens: GEMINI_USAGE.promptTokenCount } };
  return undefined;
}

function errorBody(status: number): unknown {
  const invalidKey = status === 401 || status === 403;
  return {
    error: {
      code: status,
      message: invalidKey
        ? 'API key not valid. Please pass a valid API key.'
        : `fake provider answered ${status}`,
      status: invalidKey ? 'UNAUTHENTICATED' : 'INTERNAL',
    },
  };
}

/** Starts the fake Gemini API; point the CLI at it with GOOGLE_GEMINI_BASE_URL = `url`. */
export function startGemini(): Promise<FakeProvider> {
  return startProvider(route, errorBody);
}

/** The requests that were model calls. */
export function generateRequests(p: FakeProvider): RecordedRequest[] {
  return p.requests.filter((r) => /:(stream)?[gG]enerateContent$/.test(r.url.split('?')[0] ?? ''));
}

/** Usage as the Gemini API reports it (promptTokenCount includes the cached ones). */
export interface GeminiUsage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  cachedContentTokenCount?: number;
}

/** One generation whose candidate says `parts` (text, or function calls). */
export function generationOf(parts: unknown[], usage: GeminiUsage = GEMINI_USAGE): unknown {
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: {
      ...usage,
      totalTokenCount: usage.promptTokenCount + usage.candidatesTokenCount,
    },
    modelVersion: 'gemini-2.5-pro',
  };
}

/**
 * A fake Gemini API whose model asks its shell tool (`run_shell_command`) for `commands`, one per
 * model call (counted from the function responses the request carries), then answers GEMINI_ANSWER.
 */
export function startScriptedGemini(commands: readonly string[]): Promise<FakeProvider> {
  const turn = (req: RecordedRequest) => {
    const done = (req.body.match(/"functionResponse"/g) ?? []).length;
    const command = commands[done];
    return command === undefined
      ? generationOf([{ text: GEMINI_ANSWER }])
      : generationOf([
          { functionCall: { name: 'run_shell_command', args: { command, description: 'step' } } },
        ]);
  };
  return startProvider((req) => {
    const path = req.url.split('?')[0] ?? '';
    const listing = modelsListing('gemini', req);
    if (listing) return listing;
    if (req.method !== 'POST') return undefined;
    if (path.endsWith(':streamGenerateContent')) return { kind: 'sse', events: [{ data: turn(req) }] };
    if (path.endsWith(':generateContent')) return { kind: 'json', body: turn(req) };
    if (path.endsWith(':countTokens')) return { kind: 'json', body: { totalTokens: 10 } };
    return undefined;
  }, errorBody);
}
