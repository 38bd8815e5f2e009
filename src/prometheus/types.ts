// The sandbox's `promql` command as the daemon reads it, the Prometheus HTTP API requests it becomes and
// the answers it gets back. Type-only.

/** A time given on the command line: absolute (ms since the epoch) or so long before the call. */
export type TimeSpec = { at: number } | { ago: number };

/** One `promql` call, parsed: the only requests the broker ever makes to Prometheus. */
export type PromqlCommand =
  | { kind: 'query'; expr: string; time?: TimeSpec }
  | { kind: 'range'; expr: string; sinceMs: number; stepMs?: number; end?: TimeSpec }
  | { kind: 'series'; matchers: string[]; sinceMs: number }
  | { kind: 'labels'; name?: string; matchers: string[]; sinceMs: number }
  | { kind: 'alerts' }
  | { kind: 'rules' }
  | { kind: 'metadata'; metric?: string };

export type PromqlKind = PromqlCommand['kind'];
export type OutputFormat = 'table' | 'json';

/** The read endpoints of the HTTP API the broker may call: nothing else is ever built. */
export type PromEndpoint =
  | 'query'
  | 'query_range'
  | 'series'
  | 'labels'
  | 'label_values'
  | 'metadata'
  | 'alerts'
  | 'rules'
  /** The daemon's own readiness check (monitor.ts); no promql command becomes it. */
  | 'buildinfo';

/** What the broker asks Prometheus, before the base URL is joined: an endpoint and its parameters. */
export interface UpstreamRequest {
  endpoint: PromEndpoint;
  /** The label name of `label_values` (checked: a Prometheus label name). */
  label?: string;
  /** Query parameters in order (a series' `match[]` may repeat). */
  params: [string, string][];
}

/** A sample as the API gives it: seconds since the epoch and the value as text. */
export type Sample = [number, string];

export interface VectorSeries {
  metric: Record<string, string>;
  value: Sample;
}

export interface MatrixSeries {
  metric: Record<string, string>;
  values: Sample[];
}

export type QueryData =
  | { resultType: 'vector'; result: VectorSeries[] }
  | { resultType: 'matrix'; result: MatrixSeries[] }
  | { resultType: 'scalar'; result: Sample }
  | { resultType: 'string'; result: Sample };

/** The API's envelope (`{status, data}` or `{status: "error", errorType, error}`). */
export interface PromEnvelope {
  status: 'success' | 'error';
  data?: unknown;
  errorType?: string;
  error?: string;
  warnings?: string[];
}

/** The bounds of one call, from `promql:` in the configuration. */
export interface PromqlLimits {
  timeoutMs: number;
  maxRangeMs: number;
  maxPoints: number;
  maxSeries: number;
  maxBytes: number;
}
