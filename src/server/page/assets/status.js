// The status page's only script (served as a file, so the Content-Security-Policy can forbid inline
// script): follows GET /v1/events and updates the list in place. Text goes into the page through
// textContent only, never as markup: an answer is agent output derived from untrusted cluster data.

const body = document.body;
const live = document.getElementById('live');

const say = (text) => {
  if (live) live.textContent = text;
};

function age(ms) {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

function duration(ms) {
  if (ms === null) return '-';
  if (ms < 10000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  const pad = (n) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${pad(s % 60)}s`;
  return `${Math.floor(s / 3600)}h${pad(Math.floor((s % 3600) / 60))}m`;
}

function tokens(t) {
  if (!t) return '-';
  const n = t.input + t.output;
  if (n < 1000) return String(n);
  if (n < 1000000) return `${(n / 1000).toFixed(n < 10000 ? 1 : 0)}k`;
  return `${(n / 1000000).toFixed(1)}M`;
}

const cost = (usd) => (usd === null ? '-' : `$${usd.toFixed(2)}`);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** What an answer amounts to, as src/evidence/standing.ts words it (keep the two in step). */
const STANDING = {
  grounded: 'grounded',
  partial: 'partly verified',
  unverified: 'not verified',
  'no-access': 'no cluster access',
  contradicted: 'contradicted',
};

/** The state's badge; an answered incident's says what its answer amounts to, never "succeeded". */
function badge(view) {
  if (view.outcome)
    return el('span', `badge outcome-${view.outcome}`, STANDING[view.outcome] ?? view.outcome);
  return el('span', `badge state-${view.state}`, view.state);
}

/** critical, warning or info: the severity's colour, as render.ts decides it. */
function severityClass(severity) {
  const s = severity.trim().toLowerCase();
  if (['critical', 'p1', 'sev1', 'high', 'error', 'page'].includes(s)) return 'critical';
  if (['warning', 'p2', 'p3', 'sev2', 'medium', 'major'].includes(s)) return 'warning';
  return 'info';
}

/** What broke and where (cluster / namespace · kind/name, then severity and fault type). */
function whereOf(view) {
  const s = view.subject;
  if (!s) return [el('div', 'where', '-')];
  const where = el('div', 'where');
  where.append(
    el('span', 'cluster', s.cluster),
    ' / ',
    el('span', 'namespace', s.namespace),
    ' · ',
    el('span', 'resource', `${s.resource.kind}/${s.resource.name}`),
  );
  // A storm's incident: how many workloads alerted, each named in the title (and on its page).
  const workloads = (s.workloads ?? []).length + (s.moreWorkloads ?? 0);
  if (workloads > 1) {
    const span = el('span', 'workloads', `${workloads} workloads`);
    span.title = s.workloads.map((w) => `${w.kind}/${w.name}`).join(', ');
    where.append(' · ', span);
  }
  const what = el('div', 'what');
  what.append(
    el('span', `severity sev-${severityClass(s.severity)}`, s.severity),
    ' ',
    el('span', 'fault', s.faultType),
  );
  return [where, what];
}

/** The cells of one row, as render.ts makes them on the server. */
function rowOf(view) {
  const tr = document.createElement('tr');
  tr.dataset.folder = view.folder;
  tr.dataset.arrived = String(Date.now() - view.age);
  const state = el('td', 'state');
  state.append(badge(view));
  // Alerts that resolved after the answer: marked as render.ts marks them.
  if (view.resolvedAt && view.state !== 'resolved') {
    const mark = el('span', 'resolved-mark', 'resolved');
    mark.title = `every alert resolved at ${view.resolvedAt}`;
    state.append(' ', mark);
  }
  const incident = el('td', 'incident');
  const link = el('a', 'title', view.subject ? view.subject.title : view.folder);
  link.href = `/incidents/${encodeURIComponent(view.folder)}`;
  incident.append(link, ...whereOf(view));
  const ev = el('td', 'ev');
  const verdict = view.evidence ? view.evidence.verdict : null;
  ev.append(el('span', `evidence ev-${verdict ?? 'none'}`, verdict ?? '-'));
  const answer = el('td', 'answer');
  if (view.answer !== null) answer.textContent = view.answer;
  else if (view.duplicateOf !== null) {
    const reason = el('span', 'reason', 'duplicate of ');
    const dup = el('a', 'duplicate', view.duplicateOf);
    dup.href = `/by-id/${encodeURIComponent(view.duplicateOf)}`;
    reason.append(dup);
    answer.append(reason);
  } else if (view.reason !== null) answer.append(el('span', 'reason', view.reason));
  tr.append(
    state,
    incident,
    ev,
    answer,
    el('td', 'age', age(view.age)),
    el('td', 'agent', view.agent ?? '-'),
    el('td', 'num attempts', String(view.attempts)),
    el('td', 'num duration', duration(view.durationMs)),
    el('td', 'num tokens', tokens(view.tokens)),
    el('td', 'num cost', cost(view.costUsd)),
  );
  return tr;
}

function updateTotals(totals) {
  if (!totals) return;
  let all = 0;
  for (const [state, n] of Object.entries(totals)) {
    all += n;
    const b = document.querySelector(`[data-total="${state}"] b`);
    if (b) b.textContent = String(n);
  }
  const b = document.querySelector('[data-total="all"] b');
  if (b) b.textContent = String(all);
}

function findRow(tbody, folder) {
  for (const tr of tbody.rows) if (tr.dataset.folder === folder) return tr;
  return undefined;
}

function listPage() {
  const tbody = document.querySelector('#incidents tbody');
  const filter = body.dataset.state || undefined;
  const first = body.dataset.first === 'true';
  return {
    upsert(view) {
      const existing = findRow(tbody, view.folder);
      if (filter && view.state !== filter) {
        existing?.remove();
        return;
      }
      if (!existing && !first) return;
      const tr = rowOf(view);
      // Newest change first, as the server orders the list.
      existing?.remove();
      tbody.prepend(tr);
      document.getElementById('empty')?.remove();
    },
    remove(folder) {
      findRow(tbody, folder)?.remove();
    },
    tick() {
      for (const tr of tbody.rows) {
        const cell = tr.querySelector('.age');
        if (cell) cell.textContent = age(Date.now() - Number(tr.dataset.arrived));
      }
    },
  };
}

function incidentPage() {
  const folder = body.dataset.folder;
  return {
    upsert(view) {
      if (view.folder !== folder) return;
      const state = document.getElementById('state');
      if (state) state.replaceChildren(badge(view));
      const changed = document.getElementById('changed');
      if (changed) changed.hidden = false;
    },
    remove() {},
    tick() {},
  };
}

function start() {
  const page =
    body.dataset.page === 'list' ? listPage() : body.dataset.page === 'incident' ? incidentPage() : undefined;
  if (!page) return;
  const events = new EventSource('/v1/events');
  events.addEventListener('open', () => say('live'));
  events.addEventListener('error', () => say('live updates: reconnecting…'));
  events.addEventListener('incident', (e) => {
    const data = JSON.parse(e.data);
    page.upsert(data.view);
    updateTotals(data.totals);
  });
  events.addEventListener('remove', (e) => {
    const data = JSON.parse(e.data);
    page.remove(data.folder);
    updateTotals(data.totals);
  });
  setInterval(() => page.tick(), 5000);
}

start();
