import type { CallOutputRecord } from '../kubectl/broker/outputs.js';
import { splitCommandLine } from '../kubectl/parse.js';
import { parsePromql, type ParsedPromql } from '../prometheus/command.js';
import type { PromqlCommand, TimeSpec } from '../prometheus/types.js';

// The run's promql calls, as the evidence check asks about them: which recorded call a cited
// `promql …` line is (the same subcommand and expression; a window or time the citation gives must be
// the call's), the values Prometheus answered (from the recorded exchange, else the printed table), and
// the metric values a claim states, each held to those answers: a value the answer holds (to the
// precision it is written with) is confirmed; one it does not, where the answer is of the same kind
// (a ratio for a percentage, bytes for a size, durations for a time), is contradicted.

/** The parsed `promql` command of a cited line, undefined when it is not one the check can read. */
export const parsePromqlCited = (text: string): ParsedPromql | undefined =>
  parsePromqlWords(splitCommandLine(text) ?? []);

/** The same, of the line's words as a shell splits it. */
export function parsePromqlWords(words: string[]): ParsedPromql | undefined {
  if (words[0] !== 'promql') return undefined;
  const parsed = parsePromql(words.slice(1));
  return parsed.ok && !('help' in parsed) ? parsed : undefined;
}

/** An expression with its spacing dropped: `sum by (pod) (x)` is `sum by(pod)(x)`. */
const compact = (expr: string): string => expr.replace(/\s+/g, '');

const sameTime = (a: TimeSpec | undefined, b: TimeSpec | undefined): boolean =>
  b === undefined || JSON.stringify(a) === JSON.stringify(b);

/** The subject of a call: its expression, matchers, label or metric. */
function subject(c: PromqlCommand): string {
  switch (c.kind) {
    case 'query':
    case 'range':
      return compact(c.expr);
    case 'series':
      return c.matchers.map(compact).sort().join(' ');
    case 'labels':
      return `${c.name ?? ''} ${c.matchers.map(compact).sort().join(' ')}`;
    case 'metadata':
      return c.metric ?? '';
    default:
      return '';
  }
}

/** Whether the call `made` is the call `cited` describes, its window left out or not. */
export function promqlSameSubject(made: PromqlCommand, cited: PromqlCommand): boolean {
  return made.kind === cited.kind && subject(made) === subject(cited);
}

/** True when the recorded call `made` is the call `cited` describes (its times and windows as given). */
export function promqlCovers(made: PromqlCommand, cited: PromqlCommand, words: string): boolean {
  if (!promqlSameSubject(made, cited)) return false;
  if (made.kind === 'query' && cited.kind === 'query') return sameTime(made.time, cited.time);
  if (made.kind === 'range' && cited.kind === 'range')
    return (
      (!/--since\b/.test(words) || made.sinceMs === cited.sinceMs) &&
      (cited.stepMs === undefined || made.stepMs === cited.stepMs) &&
      sameTime(made.end, cited.end)
    );
  if ('sinceMs' in made && 'sinceMs' in cited)
    return !/--since\b/.test(words) || made.sinceMs === cited.sinceMs;
  return true;
}

const rec = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The sample values of a query or range answer (the API's `data`). */
function dataValues(data: unknown): number[] {
  const d = rec(data);
  const sample = (s: unknown) => Number(arr(s)[1]);
  const result = d.result;
  switch (d.resultType) {
    case 'vector':
      return arr(result).map((s) => sample(rec(s).value));
    case 'matrix':
      return arr(result).flatMap((s) => arr(rec(s).values).map(sample));
    case 'scalar':
      return [sample(result)];
    default:
      return [];
  }
}

/** A value column of the printed table: a vector row's first cell, a range row's second. */
const PRINTED = [/^\s*(-?[\d.]+(?:e[+-]?\d+)?|NaN|[+-]Inf)\s{2,}\S/i, /^\s*\d{4}-\d\d-\d\dT\S+\s+(\S+)\s*$/];

/** The values a promql call's answer held: the recorded exchange's, else the printed table's. */
export function answerValues(output: CallOutputRecord | undefined): number[] {
  const answer = rec(output?.prometheus?.answer);
  const fromExchange = answer.status === 'success' ? dataValues(answer.data) : [];
  if (fromExchange.length > 0) return fromExchange.filter((n) => Number.isFinite(n));
  const printed: number[] = [];
  for (const line of (output?.stdout ?? '').split('\n'))
    for (const re of PRINTED) {
      const m = re.exec(line);
      if (m?.[1] !== undefined) printed.push(Number(m[1]));
    }
  return printed.filter((n) => Number.isFinite(n));
}

/** What a stated value's number can mean, in the units an answer is in. */
export interface MetricValue {
  /** As written (`97%`, `496 MiB`, `0.42`). */
  text: string;
  /** The readings of it (97% is 0.97, or 97 in a series already in percent), each with its tolerance. */
  readings: { value: number; tolerance: number }[];
  unit: 'percent' | 'bytes' | 'seconds' | 'plain';
}

const BYTES: Record<string, number> = {
  b: 1,
  byte: 1,
  bytes: 1,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
  ki: 2 ** 10,
  mi: 2 ** 20,
  gi: 2 ** 30,
  ti: 2 ** 40,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
};
const SECONDS: Record<string, number> = { ms: 1e-3, s: 1, sec: 1, secs: 1, second: 1, seconds: 1 };

const NUMBER =
  /(?<![\w.:/#-])(\d+(?:\.\d+)?(?:e[+-]?\d+)?)(?:\s?(%|percent\b|[KMGT]i?B\b|[KMGT]i\b|bytes?\b|B\b|ms\b|s\b|secs?\b|seconds?\b))?(?![\w:-]|\.\d)/gi;
/** Words after a number that make it a count or a window, not a value of the series. */
const COUNT_AFTER =
  /^\s*(?:x\b|min(?:ute)?s?\b|h(?:ou)?rs?\b|hours?\b|days?\b|weeks?\b|times\b|restarts?\b|points?\b|series\b|samples?\b|replicas?\b|pods?\b|containers?\b|nodes?\b|alerts?\b|rules?\b|of the\b|out of\b)/i;
const COUNT_BEFORE =
  /\b(?:last|past|every|each|within|top|step|since|over|HTTP|status|code|port|exit|FACT|INF)\s*$/i;
/** A bare integer is a value only right after a word that gives one. */
const VALUE_BEFORE = /(?:\b(?:is|was|were|at|reached|returned|returns|value|peaked at|to|from|of)|[=:])\s*$/i;

/** Half a unit of the last digit written (97 → 0.5, 0.97 → 0.005), and at least 0.5% of the value. */
function halfUnit(digits: string, scale: number): number {
  const decimals = /\.(\d+)/.exec(digits)?.[1]?.length ?? 0;
  return Math.max(0.5 * 10 ** -decimals * scale, Math.abs(Number(digits) * scale) * 0.005);
}

function readingsOf(digits: string, unit: string): Omit<MetricValue, 'text'> | undefined {
  const n = Number(digits);
  const u = unit.toLowerCase();
  if (u === '%' || u === 'percent')
    return {
      unit: 'percent',
      readings: [
        { value: n / 100, tolerance: halfUnit(digits, 0.01) },
        { value: n, tolerance: halfUnit(digits, 1) },
      ],
    };
  const bytes = BYTES[u];
  if (bytes !== undefined) {
    // 500MB is read both ways: people write MB for MiB.
    const alt = /^[kmgt]b$/.test(u) ? BYTES[`${u[0]}ib`] : undefined;
    return {
      unit: 'bytes',
      readings: [bytes, ...(alt ? [alt] : [])].map((scale) => ({
        value: n * scale,
        tolerance: halfUnit(digits, scale),
      })),
    };
  }
  const seconds = SECONDS[u];
  if (seconds !== undefined)
    return {
      unit: 'seconds',
      readings: [
        { value: n * seconds, tolerance: halfUnit(digits, seconds) },
        // A series already in milliseconds.
        ...(u === 'ms' ? [{ value: n, tolerance: halfUnit(digits, 1) }] : []),
      ],
    };
  return { unit: 'plain', readings: [{ value: n, tolerance: halfUnit(digits, 1) }] };
}

/** The metric values a statement gives: numbers with a unit, with decimals, or right after "is", "at", "reached"…. */
export function metricValues(statement: string): MetricValue[] {
  // Label matchers, windows and times are not values.
  const text = statement
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b\d{4}-\d\d-\d\d(?:[T ][\d:.]+Z?)?/g, ' ')
    .replace(/\b\d{1,2}:\d\d(?::\d\d)?\b/g, ' ');
  const out: MetricValue[] = [];
  for (const m of text.matchAll(NUMBER)) {
    const digits = m[1] ?? '';
    const unit = m[2] ?? '';
    const before = text.slice(Math.max(0, m.index - 30), m.index);
    const after = text.slice(m.index + m[0].length, m.index + m[0].length + 20);
    if (COUNT_BEFORE.test(before) || (unit === '' && COUNT_AFTER.test(after))) continue;
    const bare = unit === '' && !/[.e]/i.test(digits);
    if (bare && Number(digits) < 1000 && !VALUE_BEFORE.test(before)) continue;
    const read = readingsOf(digits, unit);
    if (read && !out.some((v) => v.text === m[0].trim())) out.push({ text: m[0].trim(), ...read });
  }
  return out;
}

/** Whether an answer's values are of the kind a stated value is (so that a mismatch says it is wrong). */
function comparable(value: MetricValue, answer: number[]): boolean {
  if (answer.length === 0) return false;
  const max = Math.max(...answer.map(Math.abs));
  switch (value.unit) {
    case 'percent':
      return max <= 100;
    case 'bytes':
      return max >= 1024;
    default:
      return true;
  }
}

export type MetricCheck =
  | { kind: 'confirmed'; value: MetricValue; source: string }
  | { kind: 'contradicted'; value: MetricValue; source: string; actual: string }
  | { kind: 'unknown'; value: MetricValue };

/** What an answer held, shortly: its value, or its range of values and how many. */
export function describeAnswer(values: number[]): string {
  if (values.length === 1) return String(values[0]);
  const sorted = [...values].sort((a, b) => a - b);
  return `${values.length} values from ${sorted[0]} to ${sorted.at(-1)}`;
}

/** One promql call a claim cites: its label and the values it answered. */
export interface MetricSource {
  label: string;
  values: number[];
}

/** A stated value against the promql answers a claim cites. */
export function checkMetricValue(value: MetricValue, sources: MetricSource[]): MetricCheck {
  for (const source of sources)
    if (source.values.some((v) => value.readings.some((r) => Math.abs(v - r.value) <= r.tolerance)))
      return { kind: 'confirmed', value, source: source.label };
  const against = sources.find((s) => comparable(value, s.values));
  if (against)
    return { kind: 'contradicted', value, source: against.label, actual: describeAnswer(against.values) };
  return { kind: 'unknown', value };
}
