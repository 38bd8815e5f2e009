import { PROVIDER_IDS, type ProviderId } from './types.js';

// The model endpoints a run token opens: its own provider's model calls, token counts and models
// listing, as the real CLIs call them (Claude Code, Codex, Gemini CLI, Goose; the contract tests run
// the first three). Anything else — another provider, another path, a percent-encoded or dot segment,
// a doubled slash, a backslash, a query parameter the endpoint does not take — is refused by the
// gateway itself, never forwarded with the key. A path is matched as the agent sent it, never decoded.

export interface Endpoint {
  method: 'GET' | 'POST';
  /** The path below the provider's base URL; `{model}` is one model-id segment. */
  path: string;
  /** Query parameters passed on (rebuilt from their parsed values); any other is refused. */
  query: readonly string[];
}

/** A model id in a path (`gemini-2.5-pro`): never `.` or `..`, never encoded. */
const MODEL_SEGMENT = '[A-Za-z0-9][A-Za-z0-9._-]{0,127}';
/** Query parameters every endpoint of a provider takes: Gemini's `?key=` (the run token, never passed on). */
const KEY_PARAM: Partial<Record<ProviderId, string>> = { gemini: 'key' };

const post = (path: string, query: readonly string[] = []): Endpoint => ({ method: 'POST', path, query });
const get = (path: string, query: readonly string[] = []): Endpoint => ({ method: 'GET', path, query });
const gemini = (version: string): Endpoint[] => [
  post(`/${version}/models/{model}:generateContent`),
  post(`/${version}/models/{model}:streamGenerateContent`, ['alt']),
  post(`/${version}/models/{model}:countTokens`),
  get(`/${version}/models`, ['pageSize', 'pageToken']),
];

export const ENDPOINTS: Readonly<Record<ProviderId, readonly Endpoint[]>> = {
  // Claude Code (and Goose's anthropic provider): messages, `?beta=true` on them; the daemon's preflight lists models.
  anthropic: [
    post('/v1/messages', ['beta']),
    post('/v1/messages/count_tokens', ['beta']),
    get('/v1/models', ['beta', 'limit', 'after_id', 'before_id']),
  ],
  // Below the `…/v1` base: Codex's Responses (and its remote compaction), Goose's Chat Completions, Codex's models list.
  openai: [
    post('/responses'),
    post('/responses/compact'),
    post('/chat/completions'),
    get('/models', ['client_version']),
  ],
  // Gemini CLI and Goose's google provider (v1beta); v1 is the same API's stable version.
  gemini: [...gemini('v1beta'), ...gemini('v1')],
};

const MATCHERS: Readonly<Record<ProviderId, readonly { endpoint: Endpoint; re: RegExp }[]>> =
  Object.fromEntries(
    PROVIDER_IDS.map((id) => [
      id,
      ENDPOINTS[id].map((endpoint) => ({
        endpoint,
        re: new RegExp(`^${endpoint.path.replace('{model}', MODEL_SEGMENT)}$`),
      })),
    ]),
  ) as Record<ProviderId, { endpoint: Endpoint; re: RegExp }[]>;

/** Where a request goes, once its run's provider and the endpoint are known to be open to it. */
export interface EndpointRoute {
  endpoint: Endpoint;
  /** The path below the provider's base URL, exactly as sent (it matched a plain pattern). */
  path: string;
  /** The query passed on: the endpoint's parameters only, re-encoded; the client's key dropped. */
  search: string;
}

export interface EndpointRefusal {
  reason: 'gateway.provider' | 'gateway.endpoint';
  status: 400 | 403 | 404 | 405;
  message: string;
  /** The path as recorded (the query left out: it may carry a key), cut to a readable length. */
  path: string;
}

const MAX_RECORDED_PATH = 300;

/** Why a raw path is not a plain one, or undefined when it is. */
function unplain(path: string): string | undefined {
  if (path.includes('%')) return 'a percent-encoded character';
  if (path.includes('\\')) return 'a backslash';
  if (path.includes('//')) return 'an empty segment (//)';
  if (path.split('/').some((s) => s === '.' || s === '..')) return 'a dot segment (. or ..)';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0020\u007f-\uffff#;]/.test(path)) return 'a character outside a plain path';
  return undefined;
}

/**
 * Splits `/<provider>/<path>?<query>` (the request line as sent) and checks it against the run's
 * provider and that provider's endpoints: the route to forward, or why not.
 */
export function routeEndpoint(
  provider: ProviderId,
  method: string,
  rawUrl: string,
): EndpointRoute | EndpointRefusal {
  const q = rawUrl.indexOf('?');
  const rawPath = q === -1 ? rawUrl : rawUrl.slice(0, q);
  const rawQuery = q === -1 ? '' : rawUrl.slice(q + 1);
  const recorded = rawPath.slice(0, MAX_RECORDED_PATH);
  const refuse = (
    reason: EndpointRefusal['reason'],
    status: EndpointRefusal['status'],
    message: string,
  ): EndpointRefusal => ({ reason, status, message: `triage-runner: ${message}`, path: recorded });

  const prefix = /^\/([^/?]*)/.exec(rawPath)?.[1] ?? '';
  if (prefix !== provider) {
    const known = (PROVIDER_IDS as readonly string[]).includes(prefix);
    return known
      ? refuse('gateway.provider', 403, `this run's key is for the ${provider} provider only, not ${prefix}`)
      : refuse('gateway.endpoint', 404, `the model gateway serves /${provider} to this run; not ${recorded}`);
  }
  const path = rawPath.slice(provider.length + 1);
  const bad = unplain(path);
  if (bad)
    return refuse(
      'gateway.endpoint',
      400,
      `the model gateway forwards plain paths only: ${recorded} has ${bad}`,
    );
  const matches = MATCHERS[provider].filter((m) => m.re.test(path));
  const match = matches.find((m) => m.endpoint.method === method);
  if (!match) {
    const open = ENDPOINTS[provider].map((e) => `${e.method} ${e.path}`).join(', ');
    return matches.length > 0
      ? refuse('gateway.endpoint', 405, `${method} ${path} is not served; use ${matches[0]?.endpoint.method}`)
      : refuse(
          'gateway.endpoint',
          404,
          `${method} ${path} is not a model endpoint the gateway forwards for ${provider} (${open})`,
        );
  }
  const search = passedQuery(provider, match.endpoint, rawQuery);
  if (typeof search !== 'string') return refuse('gateway.endpoint', 400, search.problem);
  return { endpoint: match.endpoint, path, search };
}

/** The endpoint's own query parameters, re-encoded, each at most once; the key parameter dropped. */
function passedQuery(
  provider: ProviderId,
  endpoint: Endpoint,
  rawQuery: string,
): string | { problem: string } {
  const params = new URLSearchParams(rawQuery);
  const keyParam = KEY_PARAM[provider];
  const out = new URLSearchParams();
  const seen = new Set<string>();
  for (const [name, value] of params) {
    if (seen.has(name)) return { problem: `query parameter ${JSON.stringify(name)} is given twice` };
    seen.add(name);
    if (name === keyParam) continue;
    if (!endpoint.query.includes(name)) {
      const takes = endpoint.query.length ? endpoint.query.join(', ') : 'none';
      return {
        problem: `query parameter ${JSON.stringify(name.slice(0, 60))} is not one ${endpoint.method} ${endpoint.path} takes (${takes})`,
      };
    }
    out.append(name, value);
  }
  const text = out.toString();
  return text ? `?${text}` : '';
}
