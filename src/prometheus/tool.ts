import type { BrokeredTool, ToolPlan, ToolResult } from '../kubectl/broker/tool-call.js';
import { promqlNames } from '../kubectl/policy/policy.js';
import { promGet, type PromResult } from './client.js';
import { parsePromql, USAGE, type ParsedPromql } from './command.js';
import { formatPromDuration, resolveTime } from './duration.js';
import type { EndpointResolution, PrometheusEndpoint } from './endpoint.js';
import { formatOther, formatQuery, isoOf } from './format.js';
import { checkAnswer, checkCommand, defaultStep, windowOf } from './limits.js';
import { upstreamRequest } from './upstream.js';
import type { PromqlCommand, PromqlLimits, QueryData, UpstreamRequest } from './types.js';

// The sandbox's `promql` as the run's broker serves it: the words read into a command, the limits
// checked, the one request it becomes sent to the run's own cluster's endpoint with the daemon's
// credentials, and the answer printed as a table (or Prometheus's JSON with -o json). What the call
// asked and got is handed back for the records.

export interface PromqlToolOptions {
  /** The run's cluster's endpoint; undefined when none is configured for it. */
  endpoint: EndpointResolution | undefined;
  /** The run's cluster, named in what the agent is told. */
  cluster: string | undefined;
  limits: PromqlLimits;
  now: () => Date;
}

const secondsOf = (ms: number) => ms / 1000;

/** The line above a table: what was asked, with the times it resolved to. */
export function headOf(command: PromqlCommand, now: number): string {
  const window = windowOf(command, now);
  const span = window ? ` from ${isoOf(secondsOf(window.start))} to ${isoOf(secondsOf(window.end))}` : '';
  switch (command.kind) {
    case 'query':
      return `${command.expr} at ${isoOf(secondsOf(resolveTime(command.time, now)))}`;
    case 'range':
      return `${command.expr}${span}, step ${formatPromDuration(command.stepMs ?? defaultStep(command.sinceMs))}`;
    case 'series':
      return `series matching ${command.matchers.join(' or ')}${span}`;
    case 'labels':
      return `${command.name ? `values of label ${command.name}` : 'label names'}${command.matchers.length ? ` of series matching ${command.matchers.join(' or ')}` : ''}${span}`;
    case 'metadata':
      return `metadata${command.metric ? ` of ${command.metric}` : ''}`;
    case 'alerts':
    case 'rules':
      return command.kind;
  }
}

const failed = (message: string, refusedBy?: string): ToolResult => ({
  exitCode: 1,
  stdout: '',
  stderr: `promql: ${message}\n`,
  ...(refusedBy ? { refusedBy } : {}),
});

/** A call the client could not complete: which limit stopped it, if one did. */
function clientFailure(result: Extract<PromResult, { ok: false }>): ToolResult {
  if (result.kind === 'too-large') return failed(`refused: ${result.message}`, 'promql.max_bytes');
  if (result.kind === 'timeout') return failed(`refused: ${result.message}`, 'promql.timeout');
  return failed(result.message);
}

/** The answer of a call Prometheus served, printed, with the exchange for the records. */
function answered(
  parsed: ParsedPromql,
  request: UpstreamRequest,
  result: Extract<PromResult, { ok: true }>,
  limits: PromqlLimits,
  now: number,
): ToolResult {
  const { envelope } = result;
  const exchange = {
    endpoint: request.endpoint,
    ...(request.label ? { label: request.label } : {}),
    params: request.params,
    httpStatus: result.status,
    answer: envelope,
  };
  const warnings = (envelope.warnings ?? []).map((w) => `promql: warning from Prometheus: ${w}\n`).join('');
  if (envelope.status === 'error')
    return {
      exitCode: 1,
      stdout: '',
      stderr: `promql: Prometheus answered with an error (${envelope.errorType ?? 'error'}): ${envelope.error ?? 'no detail'}\n${warnings}`,
      exchange,
    };
  const tooBig = checkAnswer(parsed.command, envelope.data, limits);
  if (tooBig) return failed(`refused: ${tooBig.message}`, tooBig.limit);
  const head = headOf(parsed.command, now);
  const stdout =
    parsed.output === 'json'
      ? `${result.body.toString('utf8').trimEnd()}\n`
      : parsed.command.kind === 'query' || parsed.command.kind === 'range'
        ? formatQuery(head, envelope.data as QueryData)
        : formatOther(head, parsed.command, envelope.data);
  return { exitCode: 0, stdout, stderr: warnings, exchange };
}

/** Why this run has no usable endpoint, for the agent; undefined when it has one. */
function unavailable(options: PromqlToolOptions): string | undefined {
  const cluster = options.cluster ?? 'this run';
  if (!options.endpoint)
    return `no Prometheus endpoint is configured for cluster ${cluster}: metrics cannot be read in this run; say so in the report where a metric would have settled a question`;
  if (!options.endpoint.ok)
    return `the daemon cannot use the Prometheus endpoint of cluster ${cluster} (its credentials are not available): metrics cannot be read in this run`;
  return undefined;
}

export function promqlTool(options: PromqlToolOptions): BrokeredTool {
  const endpointOf = (): PrometheusEndpoint | undefined =>
    options.endpoint?.ok ? options.endpoint.endpoint : undefined;
  return {
    recordAs: 'prometheus',
    plan(argv): ToolPlan {
      const parsed = parsePromql(argv);
      // What cannot be read is refused, as the kubectl guard refuses it: it never becomes a request.
      if (!parsed.ok)
        return {
          kind: 'answer',
          normalized: parsed.normalized,
          result: { exitCode: 2, stdout: '', stderr: `${parsed.message}\n`, refusedBy: 'promql: unreadable' },
        };
      if ('help' in parsed)
        return {
          kind: 'answer',
          normalized: parsed.normalized,
          result: { exitCode: 0, stdout: `${USAGE}\n`, stderr: '' },
        };
      const why = unavailable(options);
      if (why)
        return { kind: 'answer', normalized: parsed.normalized, result: failed(why, 'promql: no endpoint') };
      return { kind: 'call', normalized: parsed.normalized, names: promqlNames(parsed.command.kind) };
    },
    async run(argv, signal): Promise<ToolResult> {
      const parsed = parsePromql(argv);
      const endpoint = endpointOf();
      if (!parsed.ok || 'help' in parsed || !endpoint) return failed('the call could not be read again');
      const over = checkCommand(parsed.command, options.limits);
      if (over) return failed(`refused: ${over.message}`, over.limit);
      // Whole seconds, as a person would type them; rounded up, so that a sample scraped within the
      // last second is not left out.
      const now = Math.ceil(options.now().getTime() / 1000) * 1000;
      const request = upstreamRequest(parsed.command, now, options.limits.timeoutMs);
      const result = await promGet(endpoint, request, {
        timeoutMs: options.limits.timeoutMs,
        maxBytes: options.limits.maxBytes,
        signal,
      });
      if (!result.ok) return clientFailure(result);
      return answered(parsed, request, result, options.limits, now);
    },
  };
}

/** The limits of `promql:` in the configuration. */
export const limitsOf = (promql: {
  timeout: number;
  max_range: number;
  max_points: number;
  max_series: number;
  max_bytes: number;
}): PromqlLimits => ({
  timeoutMs: promql.timeout,
  maxRangeMs: promql.max_range,
  maxPoints: promql.max_points,
  maxSeries: promql.max_series,
  maxBytes: promql.max_bytes,
});
