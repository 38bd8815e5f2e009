// A fake Gemini API (generativelanguage v1beta) for the real Gemini CLI: `:streamGenerateContent`
// (SSE) and `:generateContent` answered with one final text and fixed usage numbers, `:countTokens`
// answered with a count.
import { startProvider } from './server.js';
import type { FakeProvider, ProviderReply, RecordedRequest } from './server.js';

export const GEMINI_ANSWER = 'Investigation complete: the image tag does not exist.';
/** Usage reported for every generate call. */
export const GEMINI_USAGE = { promptTokenCount: 3456, candidatesTokenCount: 78 };

function generation(): unknown {
  return {
    candidates: [
      { content: { role: 'model', parts: [{ text: GEMINI_ANSWER }] }, finishReason: 'STOP', index: 0 },
    ],
    usageMetadata: {
      ...GEMINI_USAGE,
      totalTokenCount: GEMINI_USAGE.promptTokenCount + GEMINI_USAGE.candidatesTokenCount,
    },
    modelVersion: 'gemini-2.5-pro',
  };
}

function route(req: RecordedRequest): ProviderReply | undefined {
  const path = req.url.split('?')[0] ?? '';
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
