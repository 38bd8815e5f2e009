// The PromQL expression behind an alert: Prometheus puts it in every alert's `generatorURL`
// (`…/graph?g0.expr=<expr>&g0.tab=1`), which Alertmanager passes on and intake keeps (the incident's
// `source.url`, every alert in alerts.json). Pure: the caller reads the files.

/** Expressions preloaded per incident, at most. */
export const MAX_ALERT_EXPRESSIONS = 3;
/** An expression longer than this is not preloaded (promql refuses it too). */
const MAX_EXPR_BYTES = 8 * 1024;

export interface AlertExpression {
  expr: string;
  /** The alert's name, when known. */
  alertname?: string;
}

/** The `g0.expr` of a generatorURL, or undefined when the URL holds none. */
export function expressionOf(generatorUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(generatorUrl);
  } catch {
    return undefined;
  }
  const expr = url.searchParams.get('g0.expr')?.trim();
  if (!expr || Buffer.byteLength(expr) > MAX_EXPR_BYTES) return undefined;
  return expr;
}

const rec = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The distinct expressions of an incident opened by Alertmanager: its own alert first (the incident's
 * `source.url`, its `context.alertname`), then the other alerts in alerts.json, at most
 * MAX_ALERT_EXPRESSIONS. Empty for an incident from anywhere else.
 */
export function alertExpressions(incident: unknown, alertsDoc?: unknown): AlertExpression[] {
  const found: AlertExpression[] = [];
  const add = (url: string | undefined, alertname: string | undefined) => {
    const expr = url ? expressionOf(url) : undefined;
    if (!expr || found.some((e) => e.expr === expr) || found.length >= MAX_ALERT_EXPRESSIONS) return;
    found.push({ expr, ...(alertname ? { alertname } : {}) });
  };
  const source = rec(rec(incident).source);
  if (source.type === 'alertmanager') add(str(source.url), str(rec(rec(incident).context).alertname));
  const alerts = rec(alertsDoc).alerts;
  for (const entry of Array.isArray(alerts) ? alerts : []) {
    const e = rec(entry);
    if (e.source !== 'alertmanager') continue;
    const alert = rec(e.alert);
    add(str(alert.generatorURL), str(rec(alert.labels).alertname));
  }
  return found;
}
