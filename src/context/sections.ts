import { workloadLabel, type IncidentWorkload } from '../workspace/workloads.js';
import type { AlertMetrics, SectionTag } from './types.js';

// The preloaded sections. Content is data the agent must not mistake for structure, so no
// content can open, close or forge one of our tags: every `<` that starts something that reads as one
// of the tags (`<incident`, `</ incident`, `<INITIAL_TRIAGE_REPORT`, …) is escaped. JSON content gets
// `\u003c`, which keeps the JSON valid and its parsed value identical; text content gets `&lt;`.

export const SECTION_TAGS: readonly SectionTag[] = [
  'incident',
  'kubernetes_cluster_access_permissions',
  'initial_triage_report',
  'previous_investigations',
  'alert_metrics',
];

// `<`, optional whitespace, optional `/`, optional whitespace, a tag name, then anything that ends a
// tag name. Case-insensitive: a model reads `</INCIDENT>` as a closing tag too.
const TAG_LIKE = new RegExp(`<(?=\\s*/?\\s*(?:${SECTION_TAGS.join('|')})(?![A-Za-z0-9_-]))`, 'gi');

/** Escapes tag-like sequences in JSON text; the result parses to the same value. */
export function escapeJsonContent(json: string): string {
  return json.replace(TAG_LIKE, '\\u003c');
}

/** Escapes tag-like sequences in plain text (triage output). */
export function escapeTextContent(text: string): string {
  return text.replace(TAG_LIKE, '&lt;');
}

/** `<tag>\n{body}\n</tag>`; the body must already be escaped. */
export function wrapSection(tag: SectionTag, body: string): string {
  return `<${tag}>\n${body}\n</${tag}>`;
}

/** Most workloads the incident section names; the rest are counted (alerts.json has them all). */
export const PROMPT_WORKLOADS = 25;

/**
 * A storm's incident (alerts of several workloads joined into one under storm_limit): incident.json
 * names only the first workload, so each one is listed, bounded, with the count of the rest.
 */
export function workloadsNote(workloads: readonly IncidentWorkload[] | undefined): string | undefined {
  if (!workloads || workloads.length <= 1) return undefined;
  const listed = workloads.slice(0, PROMPT_WORKLOADS).map((w) => {
    const alerts = `${w.alerts} alert${w.alerts === 1 ? '' : 's'}`;
    return `- ${workloadLabel(w)} (${alerts})`;
  });
  const rest = workloads.length - listed.length;
  return [
    `This incident holds the alerts of ${workloads.length} workloads: an alert storm joined them, and incident.json names only the first. Investigate each; every alert is in alerts.json beside incident.json.`,
    ...listed,
    ...(rest > 0 ? [`- and ${rest} more workload${rest === 1 ? '' : 's'} (in alerts.json)`] : []),
  ].join('\n');
}

/** The incident section: incident.json as written, after the note naming a storm's workloads. */
export function renderIncident(incidentText: string, workloads?: readonly IncidentWorkload[]): string {
  const note = workloadsNote(workloads);
  const lead = note ? `${escapeTextContent(note)}\n\n` : '';
  return wrapSection('incident', `${lead}${escapeJsonContent(trimEnd(incidentText))}`);
}

/**
 * The permissions section: the producer's file as is (or what the daemon probed), else a note; the
 * daemon's `notice` (an unreachable cluster) comes first, outside the file's text.
 */
export function renderPermissions(permissionsText: string | undefined, notice?: string): string {
  const lead = notice ? `${escapeTextContent(notice)}\n\n` : '';
  if (permissionsText === undefined) {
    return wrapSection(
      'kubernetes_cluster_access_permissions',
      `${lead}Not provided: the workspace has no valid incident_cluster_permissions.json. Check your access with \`kubectl auth can-i --list\` before relying on it.`,
    );
  }
  return wrapSection(
    'kubernetes_cluster_access_permissions',
    `${lead}${escapeJsonContent(trimEnd(permissionsText))}`,
  );
}

/**
 * The triage section; `note` (status) and `escapedProducts` (the script's files by the agent's path) are
 * ours, `escapedBody` is the output after `escapeTextContent`.
 */
export function renderTriage(note: string | undefined, escapedBody: string, escapedProducts = ''): string {
  const parts = [note, escapedBody, escapedProducts].filter((p): p is string => p !== undefined && p !== '');
  return wrapSection('initial_triage_report', parts.join('\n'));
}

const trimEnd = (text: string): string => text.replace(/\s+$/, '');

/** The budget's id of the alert metrics section, degraded to a pointer at its file when the budget is tight. */
export const ALERT_METRICS_DEGRADE_ID = '@alert_metrics';

/** The alert's expression values (src/daemon/run/alert-metrics.ts), or a pointer at them when `degraded`. */
export function renderAlertMetrics(metrics: AlertMetrics | undefined, degraded: boolean): string {
  if (!metrics) return '';
  const body = degraded
    ? `The alert's expression was evaluated when this run began (${metrics.expressions === 1 ? 'one expression' : `${metrics.expressions} expressions`}, now and over the last hour); the values are in ${metrics.fullPath} (not preloaded, to fit the token budget). Read them before querying again.`
    : metrics.text;
  return wrapSection('alert_metrics', escapeTextContent(trimEnd(body)));
}
