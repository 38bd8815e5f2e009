import { parseArgs } from 'node:util';
import { shellQuote } from '../kubectl/parse.js';
import { PROMQL_SUBCOMMANDS } from '../kubectl/policy/policy.js';
import { formatPromDuration, parsePromDuration, parseTime } from './duration.js';
import type { OutputFormat, PromqlCommand, PromqlKind, TimeSpec } from './types.js';

// The sandbox's `promql` command line, read by the daemon (the agent's `promql` only forwards its
// words): one subcommand, its expression or matchers, a few options. Anything else is a usage error
// that says what was wrong and how to write it; nothing here reaches Prometheus.

export const USAGE = `usage: promql query EXPR [--time T]                     the expression's value now (or at T)
       promql range EXPR [--since 1h] [--step 1m] [--end T]  its values over the last --since
       promql series MATCHER... [--since 1h]              the series that match
       promql labels [NAME] [--match MATCHER]... [--since 1h]  label names, or one label's values
       promql alerts                                     the alerts firing or pending now
       promql rules                                      the alerting and recording rules
       promql metadata [METRIC]                          metric types and help texts
options: -o json  Prometheus's answer as JSON instead of a table
         T is RFC 3339 (2025-03-14T10:00:00Z), Unix seconds, now, or now-15m; durations are 30s, 15m, 1h, 2d
         put -- before an expression that starts with - (promql query -- '-delta(x[5m])')
Read-only: every call goes to the run's cluster's Prometheus through the daemon and is recorded.`;

/** An expression longer than this is refused (it travels in a URL). */
export const MAX_EXPR_BYTES = 8 * 1024;
/** Matchers of one series or labels call, at most. */
export const MAX_MATCHERS = 20;
const DEFAULT_SINCE_MS = 3_600_000;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export interface ParsedPromql {
  command: PromqlCommand;
  output: OutputFormat;
}

export type PromqlParse =
  | ({ ok: true; normalized: string } & ParsedPromql)
  | { ok: true; help: true; normalized: string }
  | { ok: false; message: string; normalized: string };

const KINDS: readonly PromqlKind[] = PROMQL_SUBCOMMANDS;

const OPTIONS = {
  output: { type: 'string', short: 'o' },
  time: { type: 'string' },
  since: { type: 'string' },
  step: { type: 'string' },
  end: { type: 'string' },
  match: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Which options each subcommand takes (besides -o and -h). */
const TAKES: Record<PromqlKind, readonly string[]> = {
  query: ['time'],
  range: ['since', 'step', 'end'],
  series: ['since'],
  labels: ['since', 'match'],
  alerts: [],
  rules: [],
  metadata: [],
};

class UsageError extends Error {}

function duration(flag: string, text: string | undefined, fallback?: number): number | undefined {
  if (text === undefined) return fallback;
  const ms = parsePromDuration(text);
  if (ms === undefined || ms === 0)
    throw new UsageError(`--${flag} ${JSON.stringify(text)} is not a duration: write 30s, 15m, 1h or 2d`);
  return ms;
}

function time(flag: string, text: string | undefined): TimeSpec | undefined {
  if (text === undefined) return undefined;
  const spec = parseTime(text);
  if (!spec)
    throw new UsageError(
      `--${flag} ${JSON.stringify(text)} is not a time: write RFC 3339 (2025-03-14T10:00:00Z), Unix seconds, now or now-15m`,
    );
  return spec;
}

function expression(words: string[], kind: PromqlKind): string {
  if (words.length === 0)
    throw new UsageError(`promql ${kind} needs an expression, e.g. promql ${kind} 'up'`);
  if (words.length > 1)
    throw new UsageError(
      `promql ${kind} takes one expression, got ${words.length} words: quote the whole expression ('rate(http_requests_total[5m])')`,
    );
  const expr = (words[0] ?? '').trim();
  if (expr === '') throw new UsageError(`promql ${kind} needs an expression, e.g. promql ${kind} 'up'`);
  const bytes = Buffer.byteLength(expr);
  if (bytes > MAX_EXPR_BYTES)
    throw new UsageError(`the expression is ${bytes} bytes, at most ${MAX_EXPR_BYTES}: shorten it`);
  return expr;
}

function matchers(words: string[], kind: PromqlKind): string[] {
  if (words.length > MAX_MATCHERS)
    throw new UsageError(`promql ${kind} takes at most ${MAX_MATCHERS} matchers, got ${words.length}`);
  for (const w of words)
    if (Buffer.byteLength(w) > MAX_EXPR_BYTES)
      throw new UsageError(
        `a matcher is ${Buffer.byteLength(w)} bytes, at most ${MAX_EXPR_BYTES}: shorten it`,
      );
  return words.map((w) => w.trim());
}

type Values = {
  [K in keyof typeof OPTIONS]?: K extends 'match' ? string[] : K extends 'help' ? boolean : string;
};

function commandOf(kind: PromqlKind, words: string[], v: Values): PromqlCommand {
  switch (kind) {
    case 'query':
      return { kind, expr: expression(words, kind), ...opt('time', time('time', v.time)) };
    case 'range':
      return {
        kind,
        expr: expression(words, kind),
        sinceMs: duration('since', v.since, DEFAULT_SINCE_MS) ?? DEFAULT_SINCE_MS,
        ...opt('stepMs', duration('step', v.step)),
        ...opt('end', time('end', v.end)),
      };
    case 'series':
      if (words.length === 0)
        throw new UsageError(`promql series needs at least one matcher, e.g. promql series 'up{job="api"}'`);
      return {
        kind,
        matchers: matchers(words, kind),
        sinceMs: duration('since', v.since, DEFAULT_SINCE_MS) ?? DEFAULT_SINCE_MS,
      };
    case 'labels': {
      if (words.length > 1)
        throw new UsageError('promql labels takes at most one label name; give matchers with --match');
      const name = words[0];
      if (name !== undefined && !LABEL_NAME.test(name))
        throw new UsageError(
          `${JSON.stringify(name)} is not a label name (letters, digits and _, not starting with a digit)`,
        );
      return {
        kind,
        ...opt('name', name),
        matchers: matchers(v.match ?? [], kind),
        sinceMs: duration('since', v.since, DEFAULT_SINCE_MS) ?? DEFAULT_SINCE_MS,
      };
    }
    case 'metadata':
      if (words.length > 1) throw new UsageError('promql metadata takes at most one metric name');
      return { kind, ...opt('metric', words[0]) };
    case 'alerts':
    case 'rules':
      if (words.length > 0) throw new UsageError(`promql ${kind} takes no arguments`);
      return { kind };
  }
}

const opt = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };

/** The command as recorded and matched: its words in one order, shell-quoted. */
export function normalizeCommand(parsed: ParsedPromql): string {
  const { command: c, output } = parsed;
  const words: string[] = ['promql', c.kind];
  if ('expr' in c) words.push(shellQuote(c.expr));
  if (c.kind === 'series') words.push(...c.matchers.map(shellQuote));
  if (c.kind === 'labels' && c.name) words.push(c.name);
  if (c.kind === 'metadata' && c.metric) words.push(shellQuote(c.metric));
  if (c.kind === 'labels') for (const m of c.matchers) words.push('--match', shellQuote(m));
  if ('sinceMs' in c) words.push('--since', formatPromDuration(c.sinceMs));
  if (c.kind === 'range' && c.stepMs !== undefined) words.push('--step', formatPromDuration(c.stepMs));
  const at = c.kind === 'query' ? c.time : c.kind === 'range' ? c.end : undefined;
  if (at)
    words.push(
      c.kind === 'query' ? '--time' : '--end',
      'at' in at ? new Date(at.at).toISOString() : `now-${formatPromDuration(at.ago)}`,
    );
  if (output === 'json') words.push('-o', 'json');
  return words.join(' ');
}

/** Reads the words after `promql`. */
export function parsePromql(argv: readonly string[]): PromqlParse {
  const raw = ['promql', ...argv.map(shellQuote)].join(' ');
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: OPTIONS,
      allowPositionals: true,
      strict: true,
    });
    const [first, ...words] = positionals;
    if (values.help || first === 'help' || first === undefined)
      return { ok: true, help: true, normalized: raw };
    if (!KINDS.includes(first as PromqlKind))
      throw new UsageError(
        `unknown subcommand ${JSON.stringify(first)}; the subcommands are ${KINDS.join(', ')}`,
      );
    const kind = first as PromqlKind;
    for (const flag of ['time', 'since', 'step', 'end', 'match'] as const)
      if (values[flag] !== undefined && !TAKES[kind].includes(flag))
        throw new UsageError(`promql ${kind} does not take --${flag}`);
    if (values.output !== undefined && values.output !== 'json' && values.output !== 'table')
      throw new UsageError(`-o ${JSON.stringify(values.output)}: the outputs are json and table`);
    const parsed: ParsedPromql = {
      command: commandOf(kind, words, values),
      output: values.output === 'json' ? 'json' : 'table',
    };
    return { ok: true, ...parsed, normalized: normalizeCommand(parsed) };
  } catch (err) {
    // parseArgs' own errors (an unknown option, a missing value) are usage errors too.
    const message = err instanceof Error ? err.message : String(err);
    return { ok: false, message: `promql: ${message}\n${USAGE}`, normalized: raw };
  }
}
