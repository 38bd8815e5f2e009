import path from 'node:path';
import type { RunBundle } from '../workspace/bundle.js';
import { RUN_FILES } from '../workspace/layout.js';
import { readAlertsDocument } from '../workspace/alerts.js';
import type { AlertMetrics } from '../context/types.js';
import { shellQuote } from '../kubectl/parse.js';
import { alertExpressions, type AlertExpression } from '../prometheus/alert-expr.js';
import { formatPromDuration } from '../prometheus/duration.js';
import type { Config } from '../config/schema.js';
import type { ToolResult } from '../kubectl/broker/tool-call.js';
import type { Workspace } from '../workspace/incident.js';

// The triage step's metrics: for an incident an Alertmanager alert opened, the alert's own PromQL
// expression (from its generatorURL) evaluated now and over promql.preload_range, through the same
// promql the agent has (recorded `by: triage`), preloaded as the <alert_metrics> section. The section
// is bounded; every value is in the run folder's alert-metrics/values.md.

/** Lines of one call's output put in the section; the rest is in the file. */
const MAX_LINES_PER_CALL = 40;
/** The section's text, at most (before the token budget, which may point at the file instead). */
const MAX_SECTION_BYTES = 24 * 1024;

const LEAD =
  "The alerting rule's expression, evaluated by the daemon when this run began with the same `promql` you have (these calls are recorded). Values are as Prometheus returned them; quote them as printed.";

/** One call as a person would have typed it, then what it printed (bounded when `limit` is given). */
function block(argv: string[], output: string, limit?: number): string {
  const lines = output.trimEnd().split('\n');
  const shown =
    limit !== undefined && lines.length > limit
      ? [...lines.slice(0, limit), `… ${lines.length - limit} more lines in the file named below`]
      : lines;
  return [`$ promql ${argv.map(shellQuote).join(' ')}`, ...shown].join('\n');
}

interface Evaluated {
  expression: AlertExpression;
  calls: { argv: string[]; output: string }[];
}

/** The section's text (bounded) and the file's (whole). */
function render(evaluated: Evaluated[], fullPath: string): { text: string; full: string } {
  const head = (e: Evaluated) => `Alert ${e.expression.alertname ?? '(unnamed)'}: ${e.expression.expr}`;
  const full = [
    LEAD,
    ...evaluated.map((e) => [head(e), ...e.calls.map((c) => block(c.argv, c.output))].join('\n')),
  ].join('\n\n');
  let text = [
    LEAD,
    ...evaluated.map((e) =>
      [head(e), ...e.calls.map((c) => block(c.argv, c.output, MAX_LINES_PER_CALL))].join('\n'),
    ),
    `Every value: ${fullPath}.`,
  ].join('\n\n');
  if (Buffer.byteLength(text) > MAX_SECTION_BYTES)
    text = `${Buffer.from(text)
      .subarray(0, MAX_SECTION_BYTES)
      .toString('utf8')
      .replace(/\n[^\n]*$/, '')}\n… cut at ${MAX_SECTION_BYTES} bytes; every value: ${fullPath}.`;
  return { text: `${text}\n`, full: `${full}\n` };
}

export interface AlertMetricsInput {
  config: Pick<Config, 'promql'>;
  workspace: Pick<Workspace, 'dir' | 'incident'>;
  bundle: RunBundle;
  /** The run folder as the agent sees it (where the full values are read). */
  runDir: string;
  /** One promql call of the triage step: a run's is recorded (triagePromql), a preview's is not. */
  promql: (argv: string[]) => Promise<ToolResult>;
}

/**
 * The alert's expressions evaluated for the run's prompt; undefined when the incident came from no
 * Alertmanager alert with a generatorURL, or promql.preload is off.
 */
export async function preloadAlertMetrics(input: AlertMetricsInput): Promise<AlertMetrics | undefined> {
  const { config, workspace } = input;
  if (!config.promql.preload) return undefined;
  const expressions = alertExpressions(workspace.incident, await readAlertsDocument(workspace.dir));
  if (expressions.length === 0) return undefined;
  const since = formatPromDuration(config.promql.preload_range);
  const evaluated: Evaluated[] = [];
  for (const expression of expressions) {
    const calls: Evaluated['calls'] = [];
    for (const argv of [
      ['query', expression.expr],
      ['range', expression.expr, '--since', since],
    ]) {
      const result = await input.promql(argv);
      calls.push({ argv, output: `${result.stdout}${result.stderr}` });
    }
    evaluated.push({ expression, calls });
  }
  const fullPath = path.posix.join(input.runDir, RUN_FILES.alertMetrics);
  const { text, full } = render(evaluated, fullPath);
  await input.bundle.makeDir(RUN_FILES.alertMetricsDir);
  await input.bundle.writeText(RUN_FILES.alertMetrics, full);
  return { text, fullPath, expressions: evaluated.length };
}
