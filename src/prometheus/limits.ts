import { formatPromDuration } from './duration.js';
import { resolveTime } from './duration.js';
import type { PromqlCommand, PromqlLimits } from './types.js';

// The bounds of one `promql` call, checked by the daemon: the time range and the points per series
// before Prometheus is asked, the series and points of what it answered after. The bytes of an answer
// and the time a call may take are held by the client (client.ts). Every refusal names its limit and
// what to do.

/** A call refused by a limit: which one (`promql.max_range`), and what the caller is told. */
export interface LimitRefusal {
  limit:
    'promql.max_range' | 'promql.max_points' | 'promql.max_series' | 'promql.max_bytes' | 'promql.timeout';
  message: string;
}

/** Points a range query gets without --step: about a minute apart over an hour. */
const DEFAULT_POINTS = 60;
const MIN_STEP_MS = 1_000;

/** The step of a range query without --step: the window over DEFAULT_POINTS, at least 1 s, whole seconds. */
export const defaultStep = (sinceMs: number): number =>
  Math.max(MIN_STEP_MS, Math.ceil(sinceMs / DEFAULT_POINTS / 1000) * 1000);

/** The points per series a range of `sinceMs` at `stepMs` holds. */
export const pointsOf = (sinceMs: number, stepMs: number): number => Math.floor(sinceMs / stepMs) + 1;

/** Why the call asks for too much, before anything is sent; undefined when it is within the limits. */
export function checkCommand(command: PromqlCommand, limits: PromqlLimits): LimitRefusal | undefined {
  if (!('sinceMs' in command)) return undefined;
  if (command.sinceMs > limits.maxRangeMs)
    return {
      limit: 'promql.max_range',
      message: `the range ${formatPromDuration(command.sinceMs)} is longer than promql.max_range (${formatPromDuration(limits.maxRangeMs)}): ask for a shorter --since`,
    };
  if (command.kind !== 'range') return undefined;
  const step = command.stepMs ?? defaultStep(command.sinceMs);
  const points = pointsOf(command.sinceMs, step);
  if (points > limits.maxPoints) {
    const fits = Math.ceil(command.sinceMs / (limits.maxPoints - 1) / 1000) * 1000;
    return {
      limit: 'promql.max_points',
      message: `--since ${formatPromDuration(command.sinceMs)} at --step ${formatPromDuration(step)} is ${points} points per series, over promql.max_points (${limits.maxPoints}): use --step ${formatPromDuration(fits)} or more`,
    };
  }
  return undefined;
}

/** How many items an answer's `data` holds (series, label names or values, alerts, rules), and its longest series. */
export function answerSize(data: unknown): { items: number; maxPoints: number } {
  if (Array.isArray(data)) return { items: data.length, maxPoints: 0 };
  if (typeof data !== 'object' || data === null) return { items: 0, maxPoints: 0 };
  const d = data as Record<string, unknown>;
  if (Array.isArray(d.alerts)) return { items: d.alerts.length, maxPoints: 0 };
  if (Array.isArray(d.groups)) {
    const rules = d.groups.reduce<number>(
      (n, g) =>
        n + (Array.isArray((g as { rules?: unknown }).rules) ? (g as { rules: unknown[] }).rules.length : 0),
      0,
    );
    return { items: rules, maxPoints: 0 };
  }
  if (d.resultType === 'matrix' && Array.isArray(d.result)) {
    const lengths = d.result.map((s) => {
      const values = (s as { values?: unknown }).values;
      return Array.isArray(values) ? values.length : 0;
    });
    return { items: d.result.length, maxPoints: Math.max(0, ...lengths) };
  }
  if (d.resultType === 'vector' && Array.isArray(d.result)) return { items: d.result.length, maxPoints: 1 };
  if (d.resultType === 'scalar' || d.resultType === 'string') return { items: 1, maxPoints: 1 };
  // metadata: one entry per metric name.
  return { items: Object.keys(d).length, maxPoints: 0 };
}

/** Why an answer is too big to hand over; undefined when it is within the limits. */
export function checkAnswer(
  command: PromqlCommand,
  data: unknown,
  limits: PromqlLimits,
): LimitRefusal | undefined {
  const { items, maxPoints } = answerSize(data);
  if (items > limits.maxSeries) {
    const what =
      command.kind === 'labels'
        ? command.name
          ? 'values'
          : 'label names'
        : command.kind === 'alerts'
          ? 'alerts'
          : command.kind === 'rules'
            ? 'rules'
            : command.kind === 'metadata'
              ? 'metrics'
              : 'series';
    const how =
      command.kind === 'query' || command.kind === 'range'
        ? 'narrow the selector or aggregate (sum by (…), topk(10, …))'
        : command.kind === 'alerts' || command.kind === 'rules'
          ? 'ask with promql query for the ones you need (ALERTS{alertstate="firing"})'
          : 'narrow the matchers';
    return {
      limit: 'promql.max_series',
      message: `the answer holds ${items} ${what}, over promql.max_series (${limits.maxSeries}): ${how}`,
    };
  }
  if (maxPoints > limits.maxPoints)
    return {
      limit: 'promql.max_points',
      message: `a series in the answer has ${maxPoints} points, over promql.max_points (${limits.maxPoints}): use a longer --step`,
    };
  return undefined;
}

/** The absolute window of a call at `now` (ms): its start and end. */
export function windowOf(command: PromqlCommand, now: number): { start: number; end: number } | undefined {
  if (!('sinceMs' in command)) return undefined;
  const end = command.kind === 'range' ? resolveTime(command.end, now) : now;
  return { start: end - command.sinceMs, end };
}
