import path from 'node:path';
import { INCIDENT_STATES } from '../workspace/state.js';
import type { IncidentView, StatusTotals } from './types.js';
import { noReportWhy, stateLabel, totalLabel } from './view.js';
import { evidenceMark } from '../evidence/summary.js';

// `triage-runner status` as text: one line per incident, then the totals. Pure.

export function formatAge(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return '-';
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

export function formatTokens(tokens: IncidentView['tokens']): string {
  return tokens ? formatCount(tokens.input + tokens.output) : '-';
}

/** 950, 9.6k, 20k, 1.2M; `-` for none. */
export function formatCount(n: number | null): string {
  if (n === null) return '-';
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** 0.68 → `68%`; `-` for none. */
export const formatShare = (share: number | null): string =>
  share === null ? '-' : `${Math.round(share * 100)}%`;

export const formatCost = (usd: number | null): string => (usd === null ? '-' : `$${usd.toFixed(2)}`);

/** Cuts `text` to `width` characters (an ellipsis marks the cut). */
export function cut(text: string, width: number): string {
  const chars = [...text];
  if (chars.length <= width) return text;
  return width <= 1 ? chars.slice(0, Math.max(0, width)).join('') : `${chars.slice(0, width - 1).join('')}…`;
}

/**
 * Cuts `text` to `width` characters in its middle, keeping its start and, longer, its end: names made
 * of a common prefix and a distinguishing end (an incident id's time, alert and workload, then its
 * random suffix; `prod-eu-1` and `prod-us-1`) stay told apart.
 */
export function cutMiddle(text: string, width: number): string {
  const chars = [...text];
  if (chars.length <= width) return text;
  if (width <= 2) return cut(text, width);
  const head = Math.floor((width - 1) / 3);
  return `${chars.slice(0, head).join('')}…${chars.slice(chars.length - (width - 1 - head)).join('')}`;
}

/** Control characters (a terminal escape in an agent's answer) are shown as spaces. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const printable = (text: string): string => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');

export interface FormatOptions {
  /** Terminal width: the answer is cut to fit; undefined (not a terminal) prints it whole. */
  columns?: number;
  /** Report paths are shown relative to this folder when inside it. */
  cwd: string;
}

/**
 * `1ST TURN`: from the run's start to its first tool call (the first investigation turn). `1ST CALL`:
 * the input tokens of its first model call (the prompt its agent starts from); `CACHED`: the share of
 * its input tokens the provider's prompt cache served.
 */
const HEADER = [
  'FOLDER',
  'CLUSTER',
  'INCIDENT',
  'STATE',
  'AGE',
  'ATT',
  'AGENT',
  'DURATION',
  '1ST TURN',
  'TOKENS',
  '1ST CALL',
  'CACHED',
  'COST',
  'REPORT',
];
/**
 * How each column is cut: to its widest (the answer takes what is left of the line), in the middle
 * (names told apart by their end), or never. The folder is never cut: it is what `retry`, `notify` and
 * the page's address take, and two incidents of one workload differ only in its last characters.
 */
const COLUMNS: readonly { width: number; cut: 'end' | 'middle' | 'never' }[] = [
  { width: Infinity, cut: 'never' },
  { width: 24, cut: 'middle' },
  { width: 32, cut: 'middle' },
  ...[28, 4, 3, 8, 8, 8, 6, 8, 6, 8, 48].map((width) => ({ width, cut: 'end' as const })),
];

const cutCell = (text: string, i: number): string => {
  const column = COLUMNS[i];
  if (!column || column.cut === 'never') return text;
  return column.cut === 'middle' ? cutMiddle(text, column.width) : cut(text, column.width);
};

function reportCell(view: IncidentView, cwd: string): string {
  if (view.reportPath) {
    const rel = path.relative(cwd, view.reportPath);
    return rel.startsWith('..') || path.isAbsolute(rel) ? view.reportPath : rel;
  }
  return `(no report: ${noReportWhy(view)})`;
}

function cells(view: IncidentView, cwd: string): string[] {
  return [
    view.folder,
    view.subject?.cluster ?? '-',
    view.incidentId,
    view.resolvedAt && view.state !== 'resolved' ? `${stateLabel(view)}, resolved` : stateLabel(view),
    formatAge(view.age),
    String(view.attempts),
    view.agent ?? '-',
    formatDuration(view.durationMs),
    formatDuration(view.measures?.firstToolCallMs ?? null),
    formatTokens(view.tokens),
    formatCount(view.measures?.firstCallInputTokens ?? null),
    formatShare(view.measures?.cacheReadShare ?? null),
    formatCost(view.costUsd),
    reportCell(view, cwd),
  ].map(printable);
}

export function formatTotals(totals: StatusTotals): string {
  const all = INCIDENT_STATES.reduce((n, s) => n + totals[s], 0);
  const parts = INCIDENT_STATES.filter((s) => totals[s] > 0).map((s) => `${totals[s]} ${totalLabel(s)}`);
  return `${all} incident${all === 1 ? '' : 's'}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}

/** The listing: a header, one line per incident (the answer last, cut to the width), the totals. */
export function formatStatus(
  incidents: IncidentView[],
  totals: StatusTotals,
  options: FormatOptions,
): string {
  if (incidents.length === 0) return `no incidents\n${formatTotals(totals)}\n`;
  const rows = incidents.map((v) => cells(v, options.cwd).map(cutCell));
  const widths = HEADER.map((h, i) => Math.max(h.length, ...rows.map((r) => [...(r[i] ?? '')].length)));
  const pad = (row: string[]) =>
    row.map((c, i) => c + ' '.repeat((widths[i] ?? 0) - [...c].length)).join('  ');
  const lines = [`${pad(HEADER)}  ANSWER`];
  rows.forEach((row, i) => {
    const start = `${pad(row)}  `;
    const view = incidents[i];
    // How far the answer holds comes first: an ungrounded answer is read as one; then what responders said.
    const verdict = view?.evidence ? `${evidenceMark(view.evidence)} ` : '';
    const rated = view?.feedback ? `[rated ${view.feedback.verdict}] ` : '';
    const answer = printable(`${verdict}${rated}${view?.answer ?? view?.progress?.retrying ?? '-'}`);
    const room = options.columns === undefined ? Infinity : options.columns - [...start].length;
    lines.push(`${start}${room === Infinity ? answer : cut(answer, Math.max(room, 1))}`.trimEnd());
  });
  lines.push('', formatTotals(totals));
  return `${lines.join('\n')}\n`;
}
