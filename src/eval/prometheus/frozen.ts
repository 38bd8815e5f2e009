import type { MatrixSeries, PromEndpoint, Sample, VectorSeries } from '../../prometheus/types.js';

// A frozen cluster's Prometheus: answers recorded from a real one (a case's cluster/prometheus.yaml,
// or a promoted investigation's calls), and what it says to a request. An expression's recorded values
// answer any instant or range query of the same expression inside the recorded window, the way
// Prometheus evaluates a step (each series' latest value at or before the step, within the lookback);
// series, labels, metadata, alerts and rules are answered as recorded. Anything else is "not
// recorded", never made up. Pure: the stand-in server (server.ts) calls it.

export const FROZEN_PROMETHEUS_VERSION = 1;
/** Prometheus's default lookback: a step sees a sample at most this old. */
const LOOKBACK_S = 300;

/** One request as Prometheus answered it. */
export interface PromRecording {
  endpoint: Exclude<PromEndpoint, 'buildinfo'>;
  /** query and query_range: the expression. */
  query?: string;
  /** series, labels, label_values: the match[] selectors. */
  match?: string[];
  /** label_values: the label. */
  label?: string;
  /** metadata: the metric asked for. */
  metric?: string;
  /** query: its time; query_range: its window and step (seconds since the epoch, seconds). */
  time?: number;
  start?: number;
  end?: number;
  step?: number;
  /** The API's `data`, as Prometheus answered. */
  data: unknown;
}

export interface FrozenPrometheus {
  version: typeof FROZEN_PROMETHEUS_VERSION;
  caseName: string;
  /** The case's frozen clock: every promql call of an eval asks at this time. */
  now: string;
  recordings: PromRecording[];
}

/** What the stand-in answers: the HTTP status and the API's JSON. */
export interface FrozenAnswer {
  status: number;
  body:
    | { status: 'success'; data: unknown; warnings?: string[] }
    | { status: 'error'; errorType: string; error: string };
}

/** An expression with the spaces that do not separate two words removed: `sum by (pod) (x)` = `sum by(pod)(x)`. */
export function normalizeExpr(expr: string): string {
  return expr
    .trim()
    .replace(/\s+/g, ' ')
    .replace(/ ?([^\w\s.:"'`]) ?/g, '$1');
}

const seriesKey = (metric: Record<string, string>): string =>
  JSON.stringify(
    Object.keys(metric)
      .sort()
      .map((k) => [k, metric[k]]),
  );

interface Recorded {
  metric: Record<string, string>;
  samples: Sample[];
}

/** Every sample of an expression's range recordings, by series, and the window they cover. */
function samplesOf(recordings: PromRecording[]): {
  series: Recorded[];
  from: number;
  to: number;
  step: number;
} {
  const bySeries = new Map<string, Recorded>();
  let from = Infinity;
  let to = -Infinity;
  let step = 0;
  for (const r of recordings) {
    const data = r.data as { resultType?: string; result?: unknown } | undefined;
    if (r.endpoint !== 'query_range' || data?.resultType !== 'matrix') continue;
    for (const s of (data.result as MatrixSeries[] | undefined) ?? []) {
      const key = seriesKey(s.metric);
      const known = bySeries.get(key) ?? { metric: s.metric, samples: [] };
      known.samples.push(...s.values);
      bySeries.set(key, known);
    }
    from = Math.min(from, r.start ?? Infinity);
    to = Math.max(to, r.end ?? -Infinity);
    step = Math.max(step, r.step ?? 0);
  }
  const series = [...bySeries.values()].map((s) => ({
    ...s,
    samples: s.samples.sort((a, b) => a[0] - b[0]),
  }));
  return { series, from, to, step };
}

/**
 * The instant recording that answers a query at `t`: one made at `t`, or, at the frozen clock's own
 * time (what an instant query without --time asks), the latest one (promql asked at its "now").
 */
function instantAt(recordings: PromRecording[], t: number, now: number): VectorSeries[] | undefined {
  const vectors = recordings
    .filter(
      (r) =>
        r.endpoint === 'query' && (r.data as { resultType?: unknown } | undefined)?.resultType === 'vector',
    )
    .sort((a, b) => (a.time ?? 0) - (b.time ?? 0));
  const found = vectors.filter((r) => r.time === t).at(-1) ?? (t === now ? vectors.at(-1) : undefined);
  return found ? ((found.data as { result: VectorSeries[] }).result ?? []) : undefined;
}

/** A series' value at `t`: its latest sample at or before `t`, within the lookback. */
function valueAt(samples: Sample[], t: number, lookback: number): string | undefined {
  let found: string | undefined;
  for (const [ts, v] of samples) {
    if (ts > t) break;
    if (t - ts <= lookback) found = v;
  }
  return found;
}

const notRecorded = (frozen: FrozenPrometheus, what: string): FrozenAnswer => ({
  status: 422,
  body: {
    status: 'error',
    errorType: 'not_recorded',
    error: `${what} was not recorded for eval case ${frozen.caseName} (its Prometheus answers only what was recorded; nothing is made up)`,
  },
});

const iso = (s: number) => new Date(s * 1000).toISOString();

/** An instant (`times` one) or range query of a recorded expression. */
function evaluate(frozen: FrozenPrometheus, expr: string, times: number[], range: boolean): FrozenAnswer {
  const wanted = normalizeExpr(expr);
  const recordings = frozen.recordings.filter(
    (r) =>
      (r.endpoint === 'query' || r.endpoint === 'query_range') &&
      r.query !== undefined &&
      normalizeExpr(r.query) === wanted,
  );
  if (recordings.length === 0) return notRecorded(frozen, `the expression ${JSON.stringify(expr)}`);
  if (!range) {
    const recorded = instantAt(recordings, times[0] ?? 0, Date.parse(frozen.now) / 1000);
    if (recorded) {
      const t = times[0] ?? 0;
      const result = recorded.map((s) => ({ metric: s.metric, value: [t, s.value[1]] as Sample }));
      return { status: 200, body: { status: 'success', data: { resultType: 'vector', result } } };
    }
  }
  const { series, from, to, step } = samplesOf(recordings);
  const inside = times.filter((t) => t >= from && t <= to);
  if (inside.length === 0)
    return notRecorded(
      frozen,
      `${JSON.stringify(expr)} at ${iso(times[0] ?? 0)}${range ? ` to ${iso(times.at(-1) ?? 0)}` : ''}${
        Number.isFinite(from) ? ` (recorded from ${iso(from)} to ${iso(to)})` : ''
      }`,
    );
  const lookback = Math.max(LOOKBACK_S, step);
  const warnings =
    inside.length < times.length
      ? [`recorded only from ${iso(from)} to ${iso(to)}: steps outside it are left out`]
      : [];
  if (!range) {
    const t = inside[0] ?? 0;
    const result = series.flatMap((s) => {
      const v = valueAt(s.samples, t, lookback);
      return v === undefined ? [] : [{ metric: s.metric, value: [t, v] as Sample }];
    });
    return { status: 200, body: { status: 'success', data: { resultType: 'vector', result } } };
  }
  const result = series.flatMap((s) => {
    const values = inside.flatMap((t): Sample[] => {
      const v = valueAt(s.samples, t, lookback);
      return v === undefined ? [] : [[t, v]];
    });
    return values.length === 0 ? [] : [{ metric: s.metric, values }];
  });
  return {
    status: 200,
    body: {
      status: 'success',
      data: { resultType: 'matrix', result },
      ...(warnings.length ? { warnings } : {}),
    },
  };
}

const sameSet = (a: readonly string[] = [], b: readonly string[] = []): boolean => {
  const x = a.map(normalizeExpr).sort();
  const y = b.map(normalizeExpr).sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
};

/** The answer to one read request (endpoint and its query parameters) from the recordings. */
export function answerRequest(
  frozen: FrozenPrometheus,
  endpoint: PromEndpoint,
  params: URLSearchParams,
  label?: string,
): FrozenAnswer {
  const num = (name: string) => Number(params.get(name));
  switch (endpoint) {
    case 'query':
      return evaluate(frozen, params.get('query') ?? '', [num('time')], false);
    case 'query_range': {
      const [start, end, step] = [num('start'), num('end'), num('step')];
      if (!(step > 0) || !(end >= start) || (end - start) / step > 11_000)
        return {
          status: 400,
          body: { status: 'error', errorType: 'bad_data', error: 'invalid start, end or step' },
        };
      const times: number[] = [];
      for (let t = start; t <= end; t += step) times.push(t);
      return evaluate(frozen, params.get('query') ?? '', times, true);
    }
    case 'buildinfo':
      return {
        status: 200,
        body: { status: 'success', data: { version: `frozen (eval case ${frozen.caseName})` } },
      };
    default: {
      const match = params.getAll('match[]');
      const found = frozen.recordings.find(
        (r) =>
          r.endpoint === endpoint &&
          sameSet(r.match, match) &&
          (endpoint !== 'label_values' || r.label === label) &&
          (endpoint !== 'metadata' || (r.metric ?? '') === (params.get('metric') ?? '')),
      );
      if (found) return { status: 200, body: { status: 'success', data: found.data } };
      const what = [endpoint.replace('_', ' '), label, params.get('metric'), ...match]
        .filter(Boolean)
        .join(' ');
      return notRecorded(frozen, `the ${what} request`);
    }
  }
}
