// Each provider's models listing as its API answers it: the daemon's start-up and /readyz check asks
// for it through the model gateway (src/gateway/host.ts `preflight`). Shapes from the providers'
// API references: Anthropic `GET /v1/models` (which, like every Anthropic endpoint, refuses a request
// without `anthropic-version`), OpenAI `GET /v1/models`, Gemini `GET /v1beta/models`.
import type { ProviderReply, RecordedRequest } from './server.js';

export type ListingProvider = 'anthropic' | 'openai' | 'gemini';

const LISTING_PATH: Record<ListingProvider, string> = {
  anthropic: '/v1/models',
  openai: '/v1/models',
  gemini: '/v1beta/models',
};

const CREATED = '2025-09-29T00:00:00Z';

function anthropicListing(req: RecordedRequest): ProviderReply {
  if (req.headers['anthropic-version'] === undefined)
    return {
      kind: 'json',
      status: 400,
      body: {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' },
      },
    };
  const id = 'claude-sonnet-4-5-20250929';
  return {
    kind: 'json',
    body: {
      data: [{ type: 'model', id, display_name: 'Claude Sonnet 4.5', created_at: CREATED }],
      has_more: false,
      first_id: id,
      last_id: id,
    },
  };
}

const LISTINGS: Record<ListingProvider, (req: RecordedRequest) => ProviderReply> = {
  anthropic: anthropicListing,
  openai: () => ({
    kind: 'json',
    body: {
      object: 'list',
      data: [{ id: 'gpt-5-codex', object: 'model', created: Date.parse(CREATED) / 1000, owned_by: 'openai' }],
    },
  }),
  gemini: () => ({
    kind: 'json',
    body: {
      models: [
        {
          name: 'models/gemini-2.5-pro',
          displayName: 'Gemini 2.5 Pro',
          supportedGenerationMethods: ['generateContent', 'countTokens'],
        },
      ],
    },
  }),
};

/** The provider's models listing when `req` asks for it; undefined for any other request. */
export function modelsListing(provider: ListingProvider, req: RecordedRequest): ProviderReply | undefined {
  const pathname = req.url.split('?')[0] ?? '';
  if (req.method !== 'GET' || pathname !== LISTING_PATH[provider]) return undefined;
  return LISTINGS[provider](req);
}
