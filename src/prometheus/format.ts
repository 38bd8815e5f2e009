import type { MatrixSeries, PromqlCommand, QueryData, Sample, VectorSeries } from './types.js';

// What `promql` prints for a person (and a model): a table per answer with timestamps and labels, the
// values exactly as Prometheus wrote them, bounded in series and rows. `-o json` prints Prometheus's
// own answer instead (tool.ts).

/** Series (or rows of a list) printed at most; the count says how many there were. */
export const MAX_SERIES_SHOWN = 50;
/** Points printed per series of a range answer; a longer series shows evenly spaced ones and its last. */
export const MAX_POINTS_SHOWN = 30;

/** `2025-03-14T10:00:00Z` (milliseconds only when there are some). */
export const isoOf = (seconds: number): string =>
  new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/** `name{a="1", b="2"}` as Prometheus prints a series. */
export function seriesName(metric: Record<string, string>): string {
  const name = metric.__name__ ?? '';
  const labels = Object.keys(metric)
    .filter((k) => k !== '__name__')
    .sort()
    .map((k) => `${k}=${JSON.stringify(metric[k])}`);
  return labels.length === 0 && name ? name : `${name}{${labels.join(', ')}}`;
}

/** Rows with their columns padded to the widest cell; the last column is not padded. */
export function alignRows(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** `1 point`, `2 points`; `series` is its own plural. */
const plural = (n: number, what: string) => `${n} ${what}${n === 1 || what.endsWith('s') ? '' : 's'}`;

function more(total: number, shown: number, what: string): string[] {
  return total > shown ? [`… and ${plural(total - shown, what)} more (-o json for all)`] : [];
}

function vectorLines(result: VectorSeries[]): string[] {
  const shown = result.slice(0, MAX_SERIES_SHOWN);
  return [
    ...alignRows([['VALUE', 'SERIES'], ...shown.map((s) => [s.value[1], seriesName(s.metric)])]),
    ...more(result.length, shown.length, 'series'),
  ];
}

/** Every k-th point (and the last) of a series longer than MAX_POINTS_SHOWN. */
function shownPoints(values: Sample[]): { points: Sample[]; every: number } {
  if (values.length <= MAX_POINTS_SHOWN) return { points: values, every: 1 };
  const every = Math.ceil(values.length / (MAX_POINTS_SHOWN - 1));
  const points = values.filter((_, i) => i % every === 0);
  const last = values.at(-1);
  if (last && points.at(-1) !== last) points.push(last);
  return { points, every };
}

function summary(values: Sample[]): string {
  const numbers = values.map((v) => Number(v[1])).filter((n) => !Number.isNaN(n));
  const min = values.reduce<Sample | undefined>(
    (a, v) => (a === undefined || Number(v[1]) < Number(a[1]) ? v : a),
    undefined,
  );
  const max = values.reduce<Sample | undefined>(
    (a, v) => (a === undefined || Number(v[1]) > Number(a[1]) ? v : a),
    undefined,
  );
  const last = values.at(-1);
  if (numbers.length === 0 || !min || !max || !last) return plural(values.length, 'point');
  return `${plural(values.length, 'point')}, min ${min[1]} at ${isoOf(min[0])}, max ${max[1]} at ${isoOf(max[0])}, last ${last[1]}`;
}

function matrixLines(result: MatrixSeries[]): string[] {
  const lines: string[] = [];
  const shown = result.slice(0, MAX_SERIES_SHOWN);
  for (const series of shown) {
    const { points, every } = shownPoints(series.values);
    lines.push(`${seriesName(series.metric)}: ${summary(series.values)}`);
    lines.push(
      ...alignRows([['TIMESTAMP', 'VALUE'], ...points.map((p) => [isoOf(p[0]), p[1]])]).map((l) => `  ${l}`),
    );
    if (every > 1)
      lines.push(`  (every ${every} points shown of ${series.values.length}, and the last; -o json for all)`);
  }
  return [...lines, ...more(result.length, shown.length, 'series')];
}

/** A query or range answer as lines under `head`. */
export function formatQuery(head: string, data: QueryData): string {
  switch (data.resultType) {
    case 'vector':
      if (data.result.length === 0)
        return `${head}: no series (the expression matched nothing at that time)\n`;
      return `${[`${head}: ${plural(data.result.length, 'series')}`, ...vectorLines(data.result)].join('\n')}\n`;
    case 'matrix':
      if (data.result.length === 0)
        return `${head}: no series (the expression matched nothing in that window)\n`;
      return `${[`${head}: ${plural(data.result.length, 'series')}`, ...matrixLines(data.result)].join('\n')}\n`;
    case 'scalar':
    case 'string':
      return `${[
        `${head}: a ${data.resultType}`,
        ...alignRows([
          ['VALUE', 'TIMESTAMP'],
          [data.result[1], isoOf(data.result[0])],
        ]),
      ].join('\n')}\n`;
  }
}

function list(head: string, rows: string[][], what: string, header?: string[]): string {
  if (rows.length === 0) return `${head}: none\n`;
  const shown = rows.slice(0, MAX_SERIES_SHOWN);
  const body = alignRows(header ? [header, ...shown] : shown);
  return `${[`${head}: ${plural(rows.length, what)}`, ...body, ...more(rows.length, shown.length, what)].join('\n')}\n`;
}

const str = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
const rec = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const labels = (v: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(rec(v)).map(([k, x]) => [k, str(x)]));

/** The answer of a series, labels, alerts, rules or metadata call. */
export function formatOther(head: string, command: PromqlCommand, data: unknown): string {
  switch (command.kind) {
    case 'series':
      return list(
        head,
        arr(data).map((s) => [seriesName(labels(s))]),
        'series',
      );
    case 'labels':
      return list(
        head,
        arr(data).map((s) => [str(s)]),
        command.name ? 'value' : 'label name',
      );
    case 'alerts':
      return list(
        head,
        arr(rec(data).alerts).map((a) => {
          const x = rec(a);
          const l = labels(x.labels);
          return [
            str(x.state),
            str(x.activeAt),
            str(x.value),
            seriesName({ ...l, __name__: l.alertname ?? '' }),
          ];
        }),
        'alert',
        ['STATE', 'ACTIVE SINCE', 'VALUE', 'ALERT'],
      );
    case 'rules':
      return list(
        head,
        arr(rec(data).groups).flatMap((g) =>
          arr(rec(g).rules).map((r) => {
            const x = rec(r);
            return [
              str(rec(g).name),
              str(x.type),
              str(x.name),
              str(x.health),
              str(x.state) || '-',
              str(x.query),
            ];
          }),
        ),
        'rule',
        ['GROUP', 'TYPE', 'NAME', 'HEALTH', 'STATE', 'EXPR'],
      );
    case 'metadata':
      return list(
        head,
        Object.entries(rec(data)).map(([metric, entries]) => {
          const e = rec(arr(entries)[0]);
          return [metric, str(e.type), str(e.unit) || '-', str(e.help)];
        }),
        'metric',
        ['METRIC', 'TYPE', 'UNIT', 'HELP'],
      );
    default:
      return `${head}\n${JSON.stringify(data)}\n`;
  }
}
