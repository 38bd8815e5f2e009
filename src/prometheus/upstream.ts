import { resolveTime } from './duration.js';
import { defaultStep, windowOf } from './limits.js';
import type { PromEndpoint, PromqlCommand, UpstreamRequest } from './types.js';

// The only URLs the daemon sends to Prometheus: a fixed path per read endpoint of the HTTP API, joined
// to the configured base URL, with parameters encoded by URLSearchParams. Nothing the sandbox wrote is
// ever a path: its words become a parsed command (command.ts) and the command becomes one of these.
// Admin (/api/v1/admin/…), write (/api/v1/write), remote read (/api/v1/read), federation (/federate)
// and everything else cannot be reached, however the caller spells a path.

/** Each read endpoint's path under the base URL; `{label}` is the label name of label_values. */
export const ENDPOINT_PATHS: Readonly<Record<PromEndpoint, string>> = {
  query: '/api/v1/query',
  query_range: '/api/v1/query_range',
  series: '/api/v1/series',
  labels: '/api/v1/labels',
  label_values: '/api/v1/label/{label}/values',
  metadata: '/api/v1/metadata',
  alerts: '/api/v1/alerts',
  rules: '/api/v1/rules',
  buildinfo: '/api/v1/status/buildinfo',
};

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const seconds = (ms: number): string => (ms / 1000).toFixed(3).replace(/\.?0+$/, '');

/** The request a command becomes at `now` (ms); `timeoutMs` is passed on as Prometheus's own query timeout. */
export function upstreamRequest(command: PromqlCommand, now: number, timeoutMs: number): UpstreamRequest {
  const timeout: [string, string] = ['timeout', `${Math.max(1, Math.floor(timeoutMs / 1000))}s`];
  const window = windowOf(command, now);
  const span = (): [string, string][] =>
    window
      ? [
          ['start', seconds(window.start)],
          ['end', seconds(window.end)],
        ]
      : [];
  switch (command.kind) {
    case 'query':
      return {
        endpoint: 'query',
        params: [['query', command.expr], ['time', seconds(resolveTime(command.time, now))], timeout],
      };
    case 'range':
      return {
        endpoint: 'query_range',
        params: [
          ['query', command.expr],
          ...span(),
          ['step', seconds(command.stepMs ?? defaultStep(command.sinceMs))],
          timeout,
        ],
      };
    case 'series':
      return {
        endpoint: 'series',
        params: [...command.matchers.map((m): [string, string] => ['match[]', m]), ...span()],
      };
    case 'labels': {
      const params: [string, string][] = [
        ...command.matchers.map((m): [string, string] => ['match[]', m]),
        ...span(),
      ];
      return command.name === undefined
        ? { endpoint: 'labels', params }
        : { endpoint: 'label_values', label: command.name, params };
    }
    case 'metadata':
      return {
        endpoint: 'metadata',
        params: command.metric === undefined ? [] : [['metric', command.metric]],
      };
    case 'alerts':
      return { endpoint: 'alerts', params: [] };
    case 'rules':
      return { endpoint: 'rules', params: [] };
  }
}

/** The path of a request under the API root; throws for a label name that is not one (never built). */
export function endpointPath(request: UpstreamRequest): string {
  const template = ENDPOINT_PATHS[request.endpoint];
  if (request.endpoint !== 'label_values') return template;
  if (request.label === undefined || !LABEL_NAME.test(request.label))
    throw new Error(`label_values needs a label name, got ${JSON.stringify(request.label)}`);
  return template.replace('{label}', request.label);
}

/** The full URL of a request against the endpoint's base URL (which may carry a path prefix). */
export function upstreamUrl(base: URL, request: UpstreamRequest): URL {
  const url = new URL(base.href);
  url.pathname = `${base.pathname.replace(/\/+$/, '')}${endpointPath(request)}`;
  url.search = new URLSearchParams(request.params).toString();
  url.hash = '';
  return url;
}
