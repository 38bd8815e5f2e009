import { RETRYABLE_STATES } from '../../incident/queries.js';
import { INCIDENT_STATES, type IncidentState } from '../../incident/types.js';
import type { AuditEntry } from '../../audit/log.js';
import type { IncidentDetail } from '../../status/detail.js';
import { formatAge, formatCost, formatDuration, formatTokens } from '../../status/format.js';
import type { IncidentView, ListPage } from '../../status/types.js';
import { noReportWhy } from '../../status/view.js';
import { html, type SafeHtml } from './html.js';

// The status page's HTML, rendered on the server: the incident list and one incident. No inline
// script or style (the Content-Security-Policy forbids both): behaviour comes from /assets/status.js,
// which updates the list from server-sent events.

export const ASSET_SCRIPT = '/assets/status.js';
export const ASSET_STYLE = '/assets/status.css';

const incidentHref = (folder: string): string => `/incidents/${encodeURIComponent(folder)}`;

function layout(title: string, body: SafeHtml, data: Record<string, string>): SafeHtml {
  const attrs = Object.entries(data).map(([k, v]) => html` data-${k}="${v}"`);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="${ASSET_STYLE}">
<script type="module" src="${ASSET_SCRIPT}"></script>
</head>
<body${attrs}>
${body}
</body>
</html>
`;
}

const badge = (state: IncidentState): SafeHtml => html`<span class="badge state-${state}">${state}</span>`;

/** One row of the list; status.js builds the same cells from a view (keep the two in step). */
function row(view: IncidentView, now: number): SafeHtml {
  return html`<tr data-folder="${view.folder}" data-arrived="${String(now - view.age)}">
    <td class="state">${badge(view.state)}</td>
    <td class="incident">
      <a href="${incidentHref(view.folder)}">${view.folder}</a>
      <div class="sub">${view.incidentId}</div>
    </td>
    <td class="age">${formatAge(view.age)}</td>
    <td class="num attempts">${String(view.attempts)}</td>
    <td class="agent">${view.agent ?? '-'}</td>
    <td class="num duration">${formatDuration(view.durationMs)}</td>
    <td class="num tokens">${formatTokens(view.tokens)}</td>
    <td class="num cost">${formatCost(view.costUsd)}</td>
    <td class="answer">
      ${view.answer ?? (view.reason ? html`<span class="reason">${view.reason}</span>` : '')}
    </td>
  </tr> `;
}

function totalsNav(page: ListPage, current: IncidentState | undefined): SafeHtml {
  const all = INCIDENT_STATES.reduce((n, s) => n + page.totals[s], 0);
  const links = INCIDENT_STATES.map(
    (s) =>
      html`<a class="total${s === current ? ' current' : ''}" data-total="${s}" href="/?state=${s}"
        >${s} <b>${String(page.totals[s])}</b></a
      >`,
  );
  return html`<nav class="totals">
    <a class="total${current ? '' : ' current'}" data-total="all" href="/">all <b>${String(all)}</b></a
    >${links}
  </nav>`;
}

export interface ListPageInput {
  page: ListPage;
  state?: IncidentState;
  /** The page shows the newest incidents (no cursor): new ones are added live at the top. */
  first: boolean;
  now: number;
}

export function renderListPage(input: ListPageInput): string {
  const { page, state, now } = input;
  const query = state ? `state=${state}&` : '';
  const body = html`<header>
      <h1>triage-runner</h1>
      ${totalsNav(page, state)}
    </header>
    <main>
      <p id="live" class="live" role="status">live updates: connecting…</p>
      <table id="incidents">
        <thead>
          <tr>
            <th>State</th>
            <th>Incident</th>
            <th>Age</th>
            <th class="num">Att.</th>
            <th>Agent</th>
            <th class="num">Duration</th>
            <th class="num">Tokens</th>
            <th class="num">Cost</th>
            <th>Answer</th>
          </tr>
        </thead>
        <tbody>
          ${page.incidents.map((v) => row(v, now))}
        </tbody>
      </table>
      ${page.incidents.length === 0 ? html`<p class="empty" id="empty">No incidents${state ? html` in state ${state}` : ''}.</p>` : ''}
      ${page.nextCursor ? html`<p class="pager"><a href="/?${query}cursor=${page.nextCursor}">Older incidents →</a></p>` : ''}
    </main>`;
  return layout('triage-runner status', body, {
    page: 'list',
    state: state ?? '',
    first: input.first ? 'true' : 'false',
  }).html;
}

/** Audit fields shown in the timeline's details column (the chain's own fields are left out). */
const HIDDEN_AUDIT_FIELDS = new Set([
  'type',
  'ts',
  'seq',
  'prev',
  'hash',
  'mac',
  'incidentId',
  'runId',
  'files',
  'stateSha256',
]);

function auditDetails(entry: AuditEntry): string {
  const parts = Object.entries(entry)
    .filter(([k]) => !HIDDEN_AUDIT_FIELDS.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  const text = parts.join(' ');
  return text.length > 400 ? `${text.slice(0, 399)}…` : text;
}

function contextTable(detail: IncidentDetail): SafeHtml {
  const c = detail.context;
  if (!c) return html`<p class="none">No context.json yet: no run has built its context.</p>`;
  return html`<table class="context">
    <thead>
      <tr>
        <th>Section</th>
        <th class="num">Tokens</th>
        <th class="num">Before truncation</th>
        <th>Truncated</th>
      </tr>
    </thead>
    <tbody>
      ${c.sections.map(
        (s) =>
          html`<tr>
            <td><code>${s.tag}</code></td>
            <td class="num">${String(s.tokens)}</td>
            <td class="num">${String(s.originalTokens)}</td>
            <td>${s.truncated ? 'yes' : 'no'}</td>
          </tr> `,
      )}
    </tbody>
    <tfoot>
      <tr>
        <th>Total</th>
        <th class="num">${String(c.totalTokens)}</th>
        <th colspan="2">
          budget: warn ${String(c.budget.warn)}, truncate ${String(c.budget.truncate)} (${c.estimator}; run
          ${c.runId})
        </th>
      </tr>
    </tfoot>
  </table>`;
}

function timeline(detail: IncidentDetail): SafeHtml {
  const { events, omitted, problem } = detail.audit;
  if (events.length === 0) return html`<p class="none">${problem ?? 'No audit events.'}</p>`;
  return html`${omitted ? html`<p class="note">${String(omitted)} older events not shown.</p>` : ''}${problem ? html`<p class="note">${problem}</p>` : ''}
    <table class="timeline">
      <thead>
        <tr>
          <th>Time</th>
          <th>Event</th>
          <th>Run</th>
          <th>Details</th>
        </tr>
      </thead>
      <tbody>
        ${events.map(
          (e) =>
            html`<tr>
              <td class="time">${e.ts}</td>
              <td><code>${e.type}</code></td>
              <td class="run">${e.runId ?? ''}</td>
              <td class="details">${auditDetails(e)}</td>
            </tr> `,
        )}
      </tbody>
    </table>`;
}

export interface IncidentPageInput {
  detail: IncidentDetail;
  /** The report rendered (sanitised), or why there is none. */
  report: { html: SafeHtml } | { why: string };
  now: number;
}

export function renderIncidentPage(input: IncidentPageInput): string {
  const { detail: d, report } = input;
  const field = (name: string, value: SafeHtml | string | null, id?: string) =>
    html`<dt>${name}</dt><dd${id ? html` id="${id}"` : ''}>${value ?? '-'}</dd>`;
  const body = html`<header>
      <a class="back" href="/">← all incidents</a>
      <h1>${d.folder}</h1>
    </header>
    <main>
      <p id="live" class="live" role="status">live updates: connecting…</p>
      <p id="changed" class="changed" hidden>
        This incident changed. <a href="${incidentHref(d.folder)}">Reload</a> to see the latest.
      </p>
      <section class="summary">
        <dl>
          ${field('Incident', d.incidentId)} ${field('State', badge(d.state), 'state')}
          ${field('Attempts', String(d.attempts))} ${field('Agent', d.agent)}
          ${field('Duration', formatDuration(d.durationMs))}
          ${field('Tokens', d.tokens ? `${formatTokens(d.tokens)} (${d.tokens.input} in, ${d.tokens.output} out)` : null)}
          ${field('Cost', formatCost(d.costUsd))} ${field('Age', formatAge(d.age))}
          ${field('Updated', d.updatedAt)} ${d.resolvedAt ? field('Alert resolved', d.resolvedAt) : ''}
          ${field('Answer', d.answer)} ${field('Reason', d.reason)}
          ${field('Report', d.reportPath ?? `none: ${noReportWhy(d)}`)}
        </dl>
        ${RETRYABLE_STATES.has(d.state) ? html`<p class="hint">Retry in place: <code>triage-runner retry ${d.folder}</code> (from the workspaces root) or <code>POST /v1/incidents/${d.folder}/retry</code>.</p>` : ''}
      </section>
      <section>
        <h2>Report</h2>
        ${'html' in report ? html`<article class="report" id="report">${report.html}</article>` : html`<p class="none" id="report-none">${report.why}</p>`}
      </section>
      <section>
        <h2>Context</h2>
        ${contextTable(d)}
      </section>
      <section>
        <h2>Runs</h2>
        ${
          d.runs.length
            ? html`<ol class="runs">
                ${d.runs.map((r) => html`<li><code>${r.id}</code> ${r.status}</li>`)}
              </ol>`
            : html`<p class="none">No runs yet.</p>`
        }
      </section>
      <section>
        <h2>Timeline</h2>
        ${timeline(d)}
      </section>
    </main>`;
  return layout(`${d.folder} · triage-runner`, body, { page: 'incident', folder: d.folder }).html;
}

/** A page for errors (bad id, no such incident), as HTML for a browser. */
export function renderProblemPage(title: string, message: string): string {
  return layout(
    `${title} · triage-runner`,
    html`<header>
        <a class="back" href="/">← all incidents</a>
        <h1>${title}</h1>
      </header>
      <main><p>${message}</p></main>`,
    { page: 'problem' },
  ).html;
}
