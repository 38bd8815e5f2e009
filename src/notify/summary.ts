import { normalizeHeading } from '../audit/report.js';
import { parseMarkdown, plainText, type Token, type Tokens } from './mrkdwn.js';

// What a human reads first: the primary hypothesis with its confidence and the first recommended action,
// taken from the report's syntax tree. The k8s4agents template puts both in section 0 (Executive Triage
// Card: "### Primary Hypothesis" and the "### Top 3 Recommended Actions" table); older reports have an
// executive summary; section 3 (Root Cause Analysis, "### H1: … — Confidence: …") and section 4
// (Remediation Plan) are the fallbacks; the agent's one-line answer is the last resort.

export type SummarySource = 'triage-card' | 'executive-summary' | 'root-cause' | 'answer' | 'none';

export interface Summary {
  hypothesis?: string;
  /** As the report states it: High / Medium / Low, or a percentage. */
  confidence?: string;
  firstAction?: string;
  /** The agent's one-line answer (result.json `answer`), when it gave one. */
  answer?: string;
  /** Where the hypothesis came from. */
  source: SummarySource;
}

/** Longest hypothesis or action kept (the full text is in the report). */
export const SUMMARY_FIELD_CHARS = 600;

const clip = (text: string, max = SUMMARY_FIELD_CHARS): string =>
  text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`;

/** Heading text compared without numbering, emoji or punctuation (the same rule as the report check). */
const named = (heading: Tokens.Heading, ...names: string[]): boolean => {
  const text = normalizeHeading(plainText(heading.tokens));
  return names.some((name) => text === name || text.startsWith(`${name} `));
};

interface Block {
  heading: Tokens.Heading;
  nodes: Token[];
}

const isHeading = (token: Token | undefined): token is Tokens.Heading => token?.type === 'heading';

/** The first heading among `nodes` that `match` accepts, with the nodes under it (to the next heading of its level). */
function findBlock(nodes: Token[], match: (heading: Tokens.Heading) => boolean): Block | undefined {
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i];
    if (!isHeading(node) || !match(node)) continue;
    const under: Token[] = [];
    for (const next of nodes.slice(i + 1)) {
      if (isHeading(next) && next.depth <= node.depth) break;
      under.push(next);
    }
    return { heading: node, nodes: under };
  }
  return undefined;
}

const find = (nodes: Token[], ...names: string[]) => findBlock(nodes, (h) => named(h, ...names));

/** "Pods restart because … — Confidence: High" → the statement and "High". */
export function splitConfidence(text: string): { statement: string; confidence?: string } {
  const at = text.search(/\bconfidence\b\s*[:：=-]?/i);
  if (at < 0) return { statement: text };
  const statement = text
    .slice(0, at)
    .replace(/[\s—–\-(,;:|[]+$/u, '')
    .trim();
  const rest = text.slice(at).replace(/^confidence\s*[:：=-]?\s*/i, '');
  const confidence = /^[^\s,;)\].]+(?:\s*%)?/u.exec(rest)?.[0];
  return { statement, ...(confidence ? { confidence } : {}) };
}

/** The text of the first paragraph (or list item) among `nodes`. */
function firstText(nodes: Token[]): string | undefined {
  for (const node of nodes) {
    if (node.type === 'paragraph' || node.type === 'text') {
      const text = plainText(node);
      if (text) return text;
    }
    if (node.type === 'list') {
      const item = (node as Tokens.List).items[0];
      if (item) return plainText(item.tokens);
    }
  }
  return undefined;
}

/** The first body row's cell under the column named `column` (else the second column) of the first table. */
function firstTableCell(nodes: Token[], column: string): string | undefined {
  const table = nodes.find((n): n is Tokens.Table => n.type === 'table');
  const first = table?.rows[0];
  if (!table || !first) return undefined;
  const names = table.header.map((cell) => normalizeHeading(plainText(cell.tokens)));
  let index = names.indexOf(column);
  if (index < 0) index = Math.min(1, first.length - 1);
  const cell = first[index];
  const text = cell ? plainText(cell.tokens) : '';
  return text || undefined;
}

const firstAction = (nodes: Token[]): string | undefined =>
  firstTableCell(nodes, 'action') ?? firstText(nodes);

/** The summary of a report; `answer` (result.json) fills in what the report lacks. */
export function summarize(report: string | undefined, answer?: string): Summary {
  const fromReport = report ? summarizeReport(report) : { source: 'none' as const };
  const oneLine = answer?.trim() ? clip(answer.replace(/\s+/g, ' ').trim()) : undefined;
  if (fromReport.hypothesis || !oneLine) return { ...fromReport, ...(oneLine ? { answer: oneLine } : {}) };
  return { ...fromReport, hypothesis: oneLine, answer: oneLine, source: 'answer' };
}

/** Names of sections and labels: a candidate hypothesis that is one of these is a heading, never an answer. */
const LABELS = new Set(
  [
    'root cause',
    'root cause analysis',
    'primary hypothesis',
    'hypothesis',
    'hypotheses',
    'analysis and hypotheses',
    'executive summary',
    'executive triage card',
    'summary',
    'statement',
    'findings',
    'conclusion',
  ].map((name) => normalizeHeading(name)),
);
const isLabel = (text: string): boolean => LABELS.has(normalizeHeading(text));

interface Hypothesis {
  statement: string;
  confidence?: string;
}

/** A statement with its confidence, unless it is empty or only a label. */
function hypothesisOf(text: string | undefined, confidence?: string): Hypothesis | undefined {
  if (!text) return undefined;
  const split = splitConfidence(text);
  const statement = split.statement.replace(/^[\s:：—–-]+/u, '').trim();
  if (!statement || isLabel(statement)) return undefined;
  const conf = confidence ?? split.confidence;
  return { statement, ...(conf ? { confidence: conf } : {}) };
}

/** "**Primary Hypothesis**: …" (a bold label opening a paragraph or list item): the text after it. */
function labelledLine(nodes: Token[], ...labels: string[]): string | undefined {
  const wanted = labels.map(normalizeHeading);
  const lines: Token[][] = [];
  for (const node of nodes) {
    if (node.type === 'paragraph') lines.push((node as Tokens.Paragraph).tokens);
    if (node.type === 'list')
      for (const item of (node as Tokens.List).items) {
        const first = item.tokens[0] as Tokens.Text | undefined;
        if (first?.type === 'text') lines.push(first.tokens ?? []);
      }
  }
  for (const inline of lines) {
    const head = inline[0];
    if (head?.type !== 'strong') continue;
    const label = normalizeHeading(plainText(head));
    if (!wanted.some((w) => label === w || label.startsWith(`${w} `))) continue;
    const rest = plainText(inline.slice(1)).replace(/^[\s:：—–-]+/u, '');
    // "**Primary Hypothesis: the pod …**": the statement inside the bold label.
    const inside = plainText(head).replace(/^[^:：]*[:：]\s*/u, '');
    return rest || (inside !== plainText(head) ? inside : undefined);
  }
  return undefined;
}

/** The first row of a table with a hypothesis (or root cause) column: that cell, and the confidence cell. */
function hypothesisTable(nodes: Token[]): Hypothesis | undefined {
  for (const node of nodes) {
    if (node.type !== 'table') continue;
    const table = node as Tokens.Table;
    const names = table.header.map((cell) => normalizeHeading(plainText(cell.tokens)));
    const column = names.findIndex((n) => /^(?:primary )?(?:hypothesis|root cause)\b/.test(n));
    const row = table.rows[0];
    if (column < 0 || !row) continue;
    const confidenceAt = names.findIndex((n) => n.startsWith('confidence'));
    const cell = (i: number) => (i >= 0 && row[i] ? plainText(row[i].tokens) : '');
    const found = hypothesisOf(cell(column), cell(confidenceAt) || undefined);
    if (found) return found;
  }
  return undefined;
}

/** The hypothesis stated among `nodes`: under a "Primary Hypothesis" heading, as a bold line, or in a table. */
function statedHypothesis(nodes: Token[], loose: boolean): Hypothesis | undefined {
  const primary = find(nodes, 'primary hypothesis', 'most likely root cause', 'root cause');
  if (primary) {
    const under =
      hypothesisOf(statementOf(primary.nodes) ?? firstText(primary.nodes)) ?? hypothesisTable(primary.nodes);
    if (under) return under;
  }
  return (
    hypothesisOf(
      labelledLine(nodes, 'primary hypothesis', 'most likely root cause', 'root cause', 'hypothesis'),
    ) ??
    hypothesisTable(nodes) ??
    (loose ? hypothesisOf(firstText(nodes)) : undefined)
  );
}

/** Section 3: the H1 block (its statement, else its title), else the first hypothesis stated in it. */
function rootCauseHypothesis(nodes: Token[]): Hypothesis | undefined {
  const h1 = findBlock(nodes, (h) => /^(?:h1|hypothesis 1)\b/i.test(plainText(h.tokens)));
  if (h1) {
    const title = splitConfidence(
      plainText(h1.heading.tokens).replace(/^(?:H1|hypothesis 1)\s*[:.)—–-]\s*/i, ''),
    );
    const fromBody = hypothesisOf(statementOf(h1.nodes) ?? labelledLine(h1.nodes, 'statement', 'hypothesis'));
    const found = fromBody ?? hypothesisOf(title.statement);
    if (found)
      return title.confidence && !found.confidence ? { ...found, confidence: title.confidence } : found;
  }
  return statedHypothesis(nodes, true);
}

function summarizeReport(report: string): Summary {
  const top = parseMarkdown(report);
  if (!top) return { source: 'none' };
  const card = find(top, 'executive triage card');
  const summary = card ?? find(top, 'executive summary', 'summary', 'tl dr', 'tldr');
  const rca = find(top, 'root cause analysis', 'root cause', 'analysis and hypotheses');
  const remediation = find(top, 'remediation plan', 'remediation', 'recommended actions');

  let hypothesis: Hypothesis | undefined;
  let source: SummarySource = 'none';
  if (summary) {
    hypothesis = statedHypothesis(summary.nodes, !card);
    if (hypothesis) source = card ? 'triage-card' : 'executive-summary';
  }
  if (!hypothesis && rca) {
    hypothesis = rootCauseHypothesis(rca.nodes);
    if (hypothesis) source = 'root-cause';
  }
  if (!hypothesis && !summary && !rca) {
    // No template sections at all: a bold "Hypothesis:" line or a hypothesis table anywhere.
    hypothesis = statedHypothesis(top, false);
    if (hypothesis) source = 'root-cause';
  }

  let action: string | undefined;
  if (summary) {
    const actions = find(summary.nodes, 'top 3 recommended actions', 'recommended actions', 'next steps');
    if (actions) action = firstAction(actions.nodes);
  }
  if (!action && remediation) {
    const mitigation = find(remediation.nodes, 'immediate mitigation');
    action = firstAction(mitigation ? mitigation.nodes : remediation.nodes);
  }
  return {
    ...(hypothesis?.statement ? { hypothesis: clip(hypothesis.statement) } : {}),
    ...(hypothesis?.confidence ? { confidence: clip(hypothesis.confidence, 40) } : {}),
    ...(action ? { firstAction: clip(action) } : {}),
    source,
  };
}

/** "**Statement**: …" under an H1 block: the text after the label. */
function statementOf(nodes: Token[]): string | undefined {
  for (const node of nodes) {
    if (node.type !== 'paragraph') continue;
    const text = plainText(node);
    const match = /^statement\s*:\s*(.+)$/i.exec(text);
    if (match?.[1]) return match[1].trim();
  }
  return undefined;
}
