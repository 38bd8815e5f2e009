import type { AccuracyRow } from '../../feedback/accuracy.js';
import { RETRYABLE_STATES } from '../../incident/queries.js';
import { INCIDENT_STATES, type IncidentState } from '../../workspace/state.js';
import type { AuditEntry } from '../../audit/log.js';
import type { IncidentDetail } from '../../status/detail.js';
import { formatAge, formatCost, formatDuration, formatTokens } from '../../status/format.js';
import { stateLabel, totalLabel } from '../../status/view.js';
import type { IncidentView, ListPage } from '../../status/types.js';
import { html, type SafeHtml } from './html.js';
import { evidenceItems } from '../../evidence/summary.js';
import { modelCallsSection } from './model-calls.js';
import { workloadCount, workloadList } from './workloads.js';

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

/**
 * The state's badge; an answered incident's says what its answer amounts to, green only when grounded
 * (`outcome-<standing>`), never "succeeded". status.js builds the same.
 */
const badge = (view: Pick<IncidentView, 'state' | 'outcome'>): SafeHtml =>
  view.outcome
    ? html`<span class="badge outcome-${view.outcome}">${stateLabel(view)}</span>`
    : html`<span class="badge state-${view.state}">${view.state}</span>`;

/** An incident whose alerts resolved after its answer is marked so in the list (status.js does the same). */
const resolvedMark = (view: Pick<IncidentView, 'state' | 'resolvedAt'>): SafeHtml =>
  view.resolvedAt && view.state !== 'resolved'
    ? html` <span class="resolved-mark" title="every alert resolved at ${view.resolvedAt}">resolved</span>`
    : html``;

/** Where an incident's duplicate-of link goes: the page of the incident with that incidentId. */
export const byIdHref = (incidentId: string): string => `/by-id/${encodeURIComponent(incidentId)}`;

const dash = (v: string | null | undefined): string => v ?? '-';

/** What broke and where, as the list and the incident header show it. */
function where(view: IncidentView): SafeHtml {
  const s = view.subject;
  if (!s) return html`<div class="where">-</div>`;
  return html`<div class="where">
      <span class="cluster" title="cluster">${s.cluster}</span> /
      <span class="namespace" title="namespace">${s.namespace}</span> ·
      <span class="resource" title="resource">${s.resource.kind}/${s.resource.name}</span>${workloadCount(s)}
    </div>
    <div class="what">
      <span class="severity sev-${severityClass(s.severity)}" title="severity">${s.severity}</span>
      <span class="fault" title="fault type">${s.faultType}</span>
    </div>`;
}

/** critical, warning, info or other: the severity's colour (the text is shown as given). */
export function severityClass(severity: string): string {
  const s = severity.trim().toLowerCase();
  if (['critical', 'p1', 'sev1', 'high', 'error', 'page'].includes(s)) return 'critical';
  if (['warning', 'p2', 'p3', 'sev2', 'medium', 'major'].includes(s)) return 'warning';
  return 'info';
}

const evidenceBadge = (view: IncidentView): SafeHtml =>
  view.evidence
    ? html`<span class="evidence ev-${view.evidence.verdict}">${view.evidence.verdict}</span>`
    : html`<span class="evidence ev-none">-</span>`;

/** The answer, else why there is none (with a link when it is a duplicate). */
function answerCell(view: IncidentView): SafeHtml {
  if (view.answer !== null) return html`${view.answer}`;
  if (view.duplicateOf !== null)
    return html`<span class="reason"
      >duplicate of <a class="duplicate" href="${byIdHref(view.duplicateOf)}">${view.duplicateOf}</a></span
    >`;
  return view.reason ? html`<span class="reason">${view.reason}</span>` : html``;
}

/** One row of the list; status.js builds the same cells from a view (keep the two in step). */
function row(view: IncidentView, now: number): SafeHtml {
  return html`<tr data-folder="${view.folder}" data-arrived="${String(now - view.age)}">
    <td class="state">${badge(view)}${resolvedMark(view)}</td>
    <td class="incident">
      <a class="title" href="${incidentHref(view.folder)}">${view.subject?.title ?? view.folder}</a>
      ${where(view)}
    </td>
    <td class="ev">${evidenceBadge(view)}</td>
    <td class="answer">${answerCell(view)}</td>
    <td class="age">${formatAge(view.age)}</td>
    <td class="agent">${dash(view.agent)}</td>
    <td class="num attempts">${String(view.attempts)}</td>
    <td class="num duration">${formatDuration(view.durationMs)}</td>
    <td class="num tokens">${formatTokens(view.tokens)}</td>
    <td class="num cost">${formatCost(view.costUsd)}</td>
  </tr> `;
}

function totalsNav(page: ListPage, current: IncidentState | undefined): SafeHtml {
  const all = INCIDENT_STATES.reduce((n, s) => n + page.totals[s], 0);
  const links = INCIDENT_STATES.map(
    (s) =>
      html`<a class="total${s === current ? ' current' : ''}" data-total="${s}" href="/?state=${s}"
        >${totalLabel(s)} <b>${String(page.totals[s])}</b></a
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
  /** Responders' verdicts over every answer (feedback), for the header. */
  accuracy?: AccuracyRow;
}

/** Accuracy at a glance: the mean grade of rated answers and how many confident answers were wrong. */
function accuracyLine(a: AccuracyRow | undefined): SafeHtml {
  if (!a) return html``;
  if (a.rated === 0)
    return html`<p class="accuracy" id="accuracy">
      Accuracy: no answer rated yet (${String(a.answers)} answered).
    </p>`;
  return html`<p class="accuracy" id="accuracy">
    Accuracy <b class="rate">${String(a.rate)}%</b> over ${String(a.rated)} rated of ${String(a.answers)}
    answers (${String(a.correct)} correct, ${String(a.partly)} partly, ${String(a.wrong)} wrong) ·
    <b class="confident-wrong${a.confidentWrong ? ' bad' : ''}">${String(a.confidentWrong)}</b> confidently
    wrong
  </p>`;
}

export function renderListPage(input: ListPageInput): string {
  const { page, state, now } = input;
  const query = state ? `state=${state}&` : '';
  const body = html`<header>
      <h1>triage-runner</h1>
      ${totalsNav(page, state)}
    </header>
    <main>
      ${accuracyLine(input.accuracy)}
      <p id="live" class="live" role="status">live updates: connecting…</p>
      <table id="incidents">
        <thead>
          <tr>
            <th>State</th>
            <th>Incident</th>
            <th>Evidence</th>
            <th>Answer</th>
            <th>Age</th>
            <th>Agent</th>
            <th class="num">Att.</th>
            <th class="num">Duration</th>
            <th class="num">Tokens</th>
            <th class="num">Cost</th>
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

/** The event's own fields; a reason the summary already states is not repeated. */
function auditDetails(entry: AuditEntry, shownReason?: string | null): string {
  const parts = Object.entries(entry)
    .filter(([k, v]) => !HIDDEN_AUDIT_FIELDS.has(k) && !(k === 'reason' && v === shownReason))
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

/** The incident's story, in order; each audit event belongs to one chapter. */
export const STORY = ['detected', 'queued', 'triage', 'agent', 'answer', 'delivered'] as const;
export type Chapter = (typeof STORY)[number];

const CHAPTER_OF: Partial<Record<AuditEntry['type'], Chapter>> = {
  detected: 'detected',
  validated: 'detected',
  rejected: 'detected',
  duplicate: 'detected',
  incident_changed: 'detected',
  unsafe: 'detected',
  queued: 'queued',
  deferred: 'queued',
  claimed: 'queued',
  retry_scheduled: 'queued',
  retry_requested: 'queued',
  requeued: 'queued',
  waiting: 'queued',
  replayed: 'queued',
  preparing: 'triage',
  skills_resolved: 'triage',
  triage_started: 'triage',
  triage_finished: 'triage',
  context_built: 'triage',
  launched: 'agent',
  adopted: 'agent',
  reattached: 'agent',
  interrupted: 'agent',
  kubectl_refused: 'agent',
  finished: 'agent',
};

/** The chapter of an audit event: `notify_*` are deliveries; what comes after the agent is the answer. */
export function chapterOf(type: string): Chapter {
  if (type.startsWith('notify_')) return 'delivered';
  return CHAPTER_OF[type as AuditEntry['type']] ?? 'answer';
}

export interface StoryPart {
  chapter: Chapter;
  events: AuditEntry[];
}

/** Consecutive events of one chapter grouped (a retried incident tells part of its story again). */
export function storyOf(events: readonly AuditEntry[]): StoryPart[] {
  const parts: StoryPart[] = [];
  for (const e of events) {
    const chapter = chapterOf(e.type);
    const last = parts.at(-1);
    if (last?.chapter === chapter) last.events.push(e);
    else parts.push({ chapter, events: [e] });
  }
  return parts;
}

/** Deliveries folded: one line per sink with how it ended and how many attempts it took. */
function deliveries(events: readonly AuditEntry[]): SafeHtml[] {
  const sinks = new Map<string, { attempts: number; outcome: string; ts: string; error?: string }>();
  for (const e of events) {
    const sink = typeof e.sink === 'string' ? e.sink : 'sink';
    const d = sinks.get(sink) ?? { attempts: 0, outcome: 'queued', ts: e.ts };
    d.ts = e.ts;
    if (e.type === 'notify_attempted') d.attempts++;
    if (e.type === 'notify_delivered') d.outcome = 'delivered';
    if (e.type === 'notify_failed') {
      d.outcome = 'failed';
      if (typeof e.error === 'string') d.error = e.error;
    }
    sinks.set(sink, d);
  }
  return [...sinks].map(
    ([sink, d]) =>
      html`<li>
        <span class="time">${clock(d.ts)}</span> <code>${sink}</code> ${d.outcome}
        <span class="sub">(${String(d.attempts)} attempt${d.attempts === 1 ? '' : 's'})</span
        >${d.error ? html`: ${d.error}` : ''}
      </li> `,
  );
}

/** HH:MM:SS of an ISO time (the full time is the element's title). */
const clock = (ts: string): SafeHtml =>
  html`<time datetime="${ts}" title="${ts}">${ts.slice(11, 19) || ts}</time>`;

function timeline(detail: IncidentDetail): SafeHtml {
  const { events, omitted, problem } = detail.audit;
  if (events.length === 0) return html`<p class="none">${problem ?? 'No audit events.'}</p>`;
  return html`${omitted ? html`<p class="note">${String(omitted)} older events not shown.</p>` : ''}${problem ? html`<p class="note">${problem}</p>` : ''}
    <ol class="story">
      ${storyOf(events).map(
        (part) =>
          html`<li class="chapter ch-${part.chapter}" data-chapter="${part.chapter}">
            <h3>${part.chapter} <span class="sub">${clock(part.events[0]?.ts ?? '')}</span></h3>
            <ul>
              ${
                part.chapter === 'delivered'
                  ? deliveries(part.events)
                  : part.events.map(
                      (e) =>
                        html`<li>
                          <span class="time">${clock(e.ts)}</span> <code>${e.type}</code>
                          <span class="details">${auditDetails(e, detail.reason)}</span>
                        </li> `,
                    )
              }
            </ul>
            ${
              part.chapter === 'delivered'
                ? html`<details>
                    <summary>${String(part.events.length)} delivery events</summary>
                    <ul>
                      ${part.events.map((e) => html`<li><span class="time">${clock(e.ts)}</span> <code>${e.type}</code> <span class="details">${auditDetails(e)}</span></li>`)}
                    </ul>
                  </details>`
                : ''
            }
          </li> `,
      )}
    </ol>`;
}

/** What responders said of the answer, and a form to say it (a plain form POST; no script). */
/** Under the summary: every citation of the answer that did not hold and every gap of the run. */
function evidenceSection(d: IncidentDetail): SafeHtml | string {
  const items = d.evidence ? evidenceItems(d.evidence) : [];
  if (items.length === 0) return '';
  return html`<section class="evidence-points" id="evidence-points">
    <h2>What the evidence check could not verify</h2>
    <ul>
      ${items.map((item) => html`<li>${item}</li>`)}
    </ul>
  </section>`;
}

function feedbackSection(d: IncidentDetail): SafeHtml {
  const f = d.feedback;
  const current = f
    ? html`<p class="current" id="feedback-current">
        <span class="verdict v-${f.verdict}">${f.verdict}</span
        >${f.cause ? html` · cause: <span class="cause">${f.cause}</span>` : ''}
        <span class="sub">· by ${f.by ?? 'someone'} at ${clock(f.at)}</span>
      </p>`
    : html`<p class="none" id="feedback-current">No feedback yet.</p>`;
  const form =
    d.runs.length === 0
      ? html`<p class="none">Feedback grades an answer: give it after a run.</p>`
      : html`<form class="feedback" method="post" action="${incidentHref(d.folder)}/feedback">
          <fieldset>
            <legend>Was the answer right?</legend>
            ${(['correct', 'partly', 'wrong'] as const).map(
              (v) =>
                html`<label
                  ><input
                    type="radio"
                    name="verdict"
                    value="${v}"
                    required${f?.verdict === v ? html` checked` : ''}
                  />
                  ${v}</label
                > `,
            )}
          </fieldset>
          <label class="wide"
            >Cause (what it really was)
            <input type="text" name="cause" maxlength="2000" value="${f?.cause ?? ''}"
          /></label>
          <label class="wide"
            >Your name <input type="text" name="by" maxlength="200" autocomplete="name"
          /></label>
          <button type="submit">Record feedback</button>
        </form>`;
  return html`<section id="feedback" class="feedback-section">
    <h2>Feedback</h2>
    ${current} ${form}
  </section>`;
}

export interface IncidentPageInput {
  detail: IncidentDetail;
  /** The report rendered (sanitised), or why there is none. */
  report: { html: SafeHtml } | { why: string };
  now: number;
}

/** What the latest run's broker recorded: kubectl calls and promql calls, each with its refusals. */
function callCounts(d: IncidentDetail): string | null {
  const k = d.result?.kubectl;
  if (!k) return null;
  const count = (what: string, c: { calls: number; refused: number }) =>
    `${what} ${c.calls}${c.refused ? ` (${c.refused} refused)` : ''}`;
  const promql = k.prometheus;
  return [
    count('kubectl', k),
    !promql
      ? undefined
      : promql.endpoint === 'configured'
        ? count('promql', promql)
        : promql.endpoint === 'none'
          ? 'promql not configured'
          : "promql unavailable (the endpoint's credentials are not set)",
  ]
    .filter((part) => part !== undefined)
    .join(' · ');
}

export function renderIncidentPage(input: IncidentPageInput): string {
  const { detail: d, report } = input;
  const field = (name: string, value: SafeHtml | string | null, id?: string) =>
    html`<dt>${name}</dt><dd${id ? html` id="${id}"` : ''}>${value ?? '-'}</dd>`;
  const s = d.subject;
  const title = s?.title ?? d.folder;
  // The reason is said once: in the summary; the report section only says there is none.
  const reportWhy =
    'why' in report && d.reason && report.why.includes(d.reason)
      ? 'No report (see Reason above).'
      : undefined;
  const body = html`<header>
      <a class="back" href="/">← all incidents</a>
      <h1 id="title">${title}</h1>
      <div class="sub folder">${d.folder}</div>
    </header>
    <main>
      <p id="live" class="live" role="status">live updates: connecting…</p>
      <p id="changed" class="changed" hidden>
        This incident changed. <a href="${incidentHref(d.folder)}">Reload</a> to see the latest.
      </p>
      <section class="summary">
        <dl>
          ${field('State', badge(d), 'state')} ${field('Cluster', s?.cluster ?? null, 'cluster')}
          ${field('Namespace', s?.namespace ?? null, 'namespace')}
          ${field('Resource', s ? `${s.resource.kind}/${s.resource.name}` : null, 'resource')}
          ${s && s.workloads.length + s.moreWorkloads > 1 ? field('Workloads', workloadList(s), 'workloads') : ''}
          ${field('Fault', s?.faultType ?? null, 'fault')}
          ${field('Severity', s ? html`<span class="severity sev-${severityClass(s.severity)}">${s.severity}</span>` : null, 'severity')}
          ${field('Evidence', evidenceBadge(d), 'evidence')} ${field('Answer', d.answer, 'answer')}
          ${d.duplicateOf !== null ? field('Duplicate of', html`<a class="duplicate" href="${byIdHref(d.duplicateOf)}">${d.duplicateOf}</a>`) : ''}
          ${d.reason ? field('Reason', d.reason, 'reason') : ''} ${field('Incident', d.incidentId)}
          ${field('Attempts', String(d.attempts))} ${field('Agent', d.agent)}
          ${field('Duration', formatDuration(d.durationMs))}
          ${field('Tokens', d.tokens ? `${formatTokens(d.tokens)} (${d.tokens.input} in, ${d.tokens.output} out)` : null)}
          ${field('Cost', formatCost(d.costUsd))} ${field('Age', formatAge(d.age))}
          ${field('Updated', d.updatedAt)} ${d.resolvedAt ? field('Alert resolved', d.resolvedAt) : ''}
          ${field('Report', d.reportPath ?? 'none')} ${field('Cluster calls', callCounts(d), 'calls')}
        </dl>
        ${RETRYABLE_STATES.has(d.state) ? html`<p class="hint">Retry in place: <code>triage-runner retry ${d.folder}</code> (from the workspaces root) or <code>POST /v1/incidents/${d.folder}/retry</code>.</p>` : ''}
      </section>
      ${evidenceSection(d)} ${feedbackSection(d)} ${modelCallsSection(d.measures)}
      <section>
        <h2>Report</h2>
        ${'html' in report ? html`<article class="report" id="report">${report.html}</article>` : html`<p class="none" id="report-none">${reportWhy ?? report.why}</p>`}
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
  return layout(`${title} · triage-runner`, body, { page: 'incident', folder: d.folder }).html;
}

/** A page for errors (bad id, no such incident), as HTML for a browser. */
export function renderProblemPage(
  title: string,
  message: string,
  back: { href: string; label: string } = { href: '/', label: '← all incidents' },
): string {
  return layout(
    `${title} · triage-runner`,
    html`<header>
        <a class="back" href="${back.href}">${back.label}</a>
        <h1>${title}</h1>
      </header>
      <main><p>${message}</p></main>`,
    { page: 'problem' },
  ).html;
}

/** What `/` shows a browser without a session: how to open the page (the server has a bearer token). */
export function renderSignInPage(problem: string, wrongToken: boolean): string {
  return layout(
    'Open the status page · triage-runner',
    html`<header><h1>triage-runner</h1></header>
      <main class="signin">
        <h2>${wrongToken ? 'That token does not open this page' : 'This status page needs its token'}</h2>
        <p>
          Open this address once with <code>?token=&lt;HTTP_TOKEN&gt;</code> added, for example
          <code>/?token=…</code>. The token is exchanged for a session cookie (12 h) and removed from the
          address.
        </p>
        <p class="note">${problem}.</p>
        <p class="note">
          The token is the daemon's <code>HTTP_TOKEN</code> secret (ask whoever runs it). Scripts use the
          header <code>Authorization: Bearer &lt;token&gt;</code> on <code>/v1/…</code>.
        </p>
      </main>`,
    { page: 'signin' },
  ).html;
}
