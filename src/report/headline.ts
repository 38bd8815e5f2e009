import { normalizeHeading } from '../audit/report.js';
import { parseMarkdown, plainText, type Token, type Tokens } from '../util/markdown.js';
import { findBlock, findNamed, firstText, isHeading } from './blocks.js';
import { confidenceIn, splitConfidence } from './confidence.js';

// The report's headline: its labelled primary hypothesis or root-cause claim, with the confidence the
// agent gave it and the facts and inferences it cites. The one reader of it, for the evidence check
// (the claim it checks first), the notification summary and the eval scorer. The k8s4agents template
// puts it in section 0 (Executive Triage Card, "### Primary Hypothesis"); older reports have an
// executive summary; section 3 (Root Cause Analysis, "### H1: … — Confidence: …") is the fallback.
// A label, "See below", "TL;DR" or a status line is never a headline.

export type HeadlineSource = 'triage-card' | 'executive-summary' | 'root-cause';

export interface Headline {
  statement: string;
  /** As the report states it: High / Very high / Medium / Low, or a percentage. */
  confidence?: string;
  source: HeadlineSource;
  /** `FACT-n` and `INF-n` ids the headline rests on: in its statement, the lines under it, its H1 block. */
  cites: string[];
}

/** What is said when a report states no hypothesis. */
export const NO_HYPOTHESIS = 'no hypothesis stated';

/** Names of sections and labels: a candidate that is one of these is a heading, never an answer. */
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
    'tl dr',
    'tldr',
  ].map((name) => normalizeHeading(name)),
);

/** Text that points elsewhere or holds nothing: never a hypothesis. */
const NOT_A_STATEMENT =
  /^(?:see (?:below|above|section|the )|tl;? ?dr\b|n\/?a\b|tbd\b|todo\b|unknown\b|none\b|pending\b|to be determined|not (?:yet )?determined|under investigation|\.{3}|…)/i;
/** A status or field line of the card ("Status: 🔴 Active", "Severity: P1", "🔴 Active Incident"). */
const STATUS_LINE =
  /^(?:status|severity|impact|priority|incident|state|blast radius)\s*[:：|]|^[^\p{L}\p{N}]*(?:active|resolved|mitigated|ongoing|open)\s+incident\b/iu;

/** A statement with its confidence, unless it is empty, a label, a pointer or a status line. */
function statementOf(text: string | undefined, confidence?: string): Hypothesis | undefined {
  if (!text) return undefined;
  const split = splitConfidence(text);
  let statement = split.statement.replace(/^[\s:：—–-]+/u, '').trim();
  // "Root cause: …" in a paragraph: the label is not part of the statement.
  const labelled = /^([^:：]{1,40})[:：]\s*(.*)$/u.exec(statement);
  if (labelled?.[1] && LABELS.has(normalizeHeading(labelled[1]))) statement = (labelled[2] ?? '').trim();
  if (!statement || LABELS.has(normalizeHeading(statement))) return undefined;
  if (NOT_A_STATEMENT.test(statement) || STATUS_LINE.test(statement)) return undefined;
  if (!/[\p{L}\p{N}]+[^\p{L}\p{N}]+[\p{L}\p{N}]/u.test(statement)) return undefined;
  const conf = confidence ?? split.confidence;
  return { statement, ...(conf ? { confidence: conf } : {}) };
}

interface Hypothesis {
  statement: string;
  confidence?: string;
  /** The nodes the statement came from and those after it, up to the next heading: its own lines. */
  around?: Token[];
}

const LABEL_NAMES = ['primary hypothesis', 'most likely root cause', 'root cause', 'hypothesis'];

/** The inline tokens of a paragraph, or of a list item's first text. */
function linesOf(node: Token): Token[][] {
  if (node.type === 'paragraph') return [(node as Tokens.Paragraph).tokens];
  if (node.type !== 'list') return [];
  return (node as Tokens.List).items.flatMap((item) => {
    const first = item.tokens[0] as Tokens.Text | undefined;
    return first?.type === 'text' ? [first.tokens ?? []] : [];
  });
}

/**
 * "**Primary Hypothesis**: …" (a bold label opening a paragraph or list item): the text after it; a
 * label alone on its line takes the next paragraph or list item as its statement.
 */
function labelledLine(nodes: Token[], labels: string[]): Hypothesis | undefined {
  const wanted = labels.map(normalizeHeading);
  for (let i = 0; i < nodes.length; i++) {
    const node = nodes[i] as Token;
    if (isHeading(node)) continue;
    for (const inline of linesOf(node)) {
      const head = inline[0];
      if (head?.type !== 'strong') continue;
      const label = normalizeHeading(plainText(head));
      if (!wanted.some((w) => label === w || label.startsWith(`${w} `))) continue;
      const rest = plainText(inline.slice(1)).replace(/^[\s:：—–-]+/u, '');
      // "**Primary Hypothesis: the pod …**": the statement inside the bold label.
      const inside = plainText(head).replace(/^[^:：]*[:：]\s*/u, '');
      const text = rest || (inside !== plainText(head) ? inside : '');
      const around = following(nodes, i);
      if (text) return withAround(statementOf(text), around);
      // The label alone: the statement is the next paragraph or list item.
      const next = nodes.slice(i + 1).find((n) => n.type !== 'space');
      if (next && !isHeading(next)) return withAround(statementOf(firstText([next])), around);
    }
  }
  return undefined;
}

const withAround = (h: Hypothesis | undefined, around: Token[]): Hypothesis | undefined =>
  h ? { ...h, around } : undefined;

/** `nodes[i]` and those after it, up to the next heading. */
function following(nodes: Token[], i: number): Token[] {
  const out: Token[] = [];
  for (const node of nodes.slice(i)) {
    if (isHeading(node)) break;
    out.push(node);
  }
  return out;
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
    const found = statementOf(cell(column), cell(confidenceAt) || undefined);
    if (found) return { ...found, around: [node] };
  }
  return undefined;
}

/** "**Statement**: …" under an H1 block: the text after the label. */
function statementLine(nodes: Token[]): string | undefined {
  for (const node of nodes) {
    if (node.type !== 'paragraph') continue;
    const match = /^statement\s*:\s*(.+)$/i.exec(plainText(node));
    if (match?.[1]) return match[1].trim();
  }
  return undefined;
}

/** The hypothesis stated among `nodes`: under a "Primary Hypothesis" heading, as a bold line, or in a table. */
function statedHypothesis(nodes: Token[], loose: boolean): Hypothesis | undefined {
  const primary = findNamed(nodes, 'primary hypothesis', 'most likely root cause', 'root cause');
  if (primary) {
    const under =
      withAround(statementOf(statementLine(primary.nodes) ?? firstText(primary.nodes)), primary.nodes) ??
      labelledLine(primary.nodes, ['statement', ...LABEL_NAMES]) ??
      hypothesisTable(primary.nodes);
    if (under) return under;
  }
  return (
    labelledLine(nodes, LABEL_NAMES) ??
    hypothesisTable(nodes) ??
    (loose ? firstStatement(nodes) : confidentStatement(nodes))
  );
}

/** A paragraph that states its confidence ("We have high confidence that …"): a hypothesis anywhere. */
function confidentStatement(nodes: Token[]): Hypothesis | undefined {
  for (const node of nodes) {
    if (node.type !== 'paragraph') continue;
    const text = plainText(node);
    if (!confidenceIn(text) || /^\s*confidence\b/i.test(text)) continue;
    const found = statementOf(text);
    if (found) return { ...found, around: following(nodes, nodes.indexOf(node)) };
  }
  return undefined;
}

/** The first of the section's opening paragraphs or lists that states something ("TL;DR: see below" does not). */
function firstStatement(nodes: Token[]): Hypothesis | undefined {
  const blocks = nodes.filter((n) => n.type === 'paragraph' || n.type === 'list').slice(0, 3);
  for (const node of blocks) {
    const found = statementOf(firstText([node]));
    if (found) return { ...found, around: following(nodes, nodes.indexOf(node)) };
  }
  return undefined;
}

/** Section 3's H1 block: its title split from its confidence, and its nodes. */
function h1Block(nodes: Token[]): { title: Hypothesis | undefined; nodes: Token[] } | undefined {
  const h1 = findBlock(nodes, (h) => /^(?:h1|hypothesis 1)\b/i.test(plainText(h.tokens)));
  if (!h1) return undefined;
  const raw = plainText(h1.heading.tokens).replace(/^(?:H1|hypothesis 1)\s*[:.)—–-]\s*/i, '');
  return { title: statementOf(raw), nodes: h1.nodes };
}

/** Section 3: the H1 block (its statement, else its title), else the first hypothesis stated in it. */
function rootCauseHypothesis(nodes: Token[]): Hypothesis | undefined {
  const h1 = h1Block(nodes);
  if (h1) {
    const body =
      withAround(statementOf(statementLine(h1.nodes)), h1.nodes) ??
      labelledLine(h1.nodes, ['statement', 'hypothesis']);
    const found = body ?? (h1.title ? { ...h1.title, around: h1.nodes } : undefined);
    if (found)
      return h1.title?.confidence && !found.confidence
        ? { ...found, confidence: h1.title.confidence }
        : found;
  }
  return statedHypothesis(nodes, true);
}

/** Lines that name evidence against the hypothesis: their ids are not what it rests on. */
const AGAINST = /^(?:evidence\s+)?(?:against|contradict\w*|refut\w*|inconsistent)\b/i;
const CITE = /\b(FACT|INF)-(\d+)\b/g;

/** The FACT/INF ids in `nodes`, except in lines that argue against. */
export function citesIn(nodes: Token[], into = new Set<string>()): Set<string> {
  for (const node of nodes) {
    if (node.type === 'list') {
      for (const item of (node as Tokens.List).items) {
        const text = plainText(item.tokens);
        if (!AGAINST.test(text)) for (const m of text.matchAll(CITE)) into.add(`${m[1]}-${m[2]}`);
      }
      continue;
    }
    const text = plainText(node);
    if (AGAINST.test(text)) continue;
    for (const m of text.matchAll(CITE)) into.add(`${m[1]}-${m[2]}`);
  }
  return into;
}

/** A confidence on a line of its own under the statement (`**Confidence:** High`). */
function ownLineConfidence(around: Token[] | undefined): string | undefined {
  for (const node of around ?? []) {
    const text = plainText(node);
    if (/^\s*confidence\b/i.test(text)) return confidenceIn(text);
  }
  return undefined;
}

/** The headline of a report (its markdown, or its parsed tokens); undefined when it states none. */
export function readHeadline(report: string | Token[]): Headline | undefined {
  const top = typeof report === 'string' ? parseMarkdown(report) : report;
  if (!top) return undefined;
  const card = findNamed(top, 'executive triage card');
  const summary = card ?? findNamed(top, 'executive summary', 'summary', 'tl dr', 'tldr');
  const rca = findNamed(top, 'root cause analysis', 'root cause', 'analysis and hypotheses');

  let found: Hypothesis | undefined;
  let source: HeadlineSource | undefined;
  if (summary) {
    found = statedHypothesis(summary.nodes, !card);
    if (found) source = card ? 'triage-card' : 'executive-summary';
  }
  if (!found && rca) {
    found = rootCauseHypothesis(rca.nodes);
    if (found) source = 'root-cause';
  }
  if (!found && !summary && !rca) {
    // No template sections at all: a bold "Hypothesis:" line or a hypothesis table anywhere.
    found = statedHypothesis(top, false);
    if (found) source = 'root-cause';
  }
  if (!found || !source) return undefined;
  const cites = new Set<string>();
  for (const m of found.statement.matchAll(CITE)) cites.add(`${m[1]}-${m[2]}`);
  citesIn(found.around ?? [], cites);
  // The first hypothesis of the root-cause analysis argues for the same claim in more detail.
  const h1 = rca ? h1Block(rca.nodes) : undefined;
  if (h1) citesIn(h1.nodes, cites);
  const confidence = found.confidence ?? ownLineConfidence(found.around);
  return {
    statement: found.statement,
    ...(confidence ? { confidence } : {}),
    source,
    cites: [...cites],
  };
}
