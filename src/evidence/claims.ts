import { normalizeHeading } from '../audit/report.js';
import { readHeadline, type Headline } from '../report/headline.js';
import type { Token, Tokens } from '../util/markdown.js';
import { asMarked, parseMarkdown, plainText } from '../util/markdown.js';
import {
  codeSpans,
  commandLine,
  htmlText,
  inlineText,
  isComment,
  outputLike,
  type CommandText,
} from './report-text.js';

// What a report claims, read from its whole syntax tree: the headline (src/report/headline.ts), every
// `[FACT-n]` with the sources it cites (kubectl commands, the alert or the triage output) and the output
// it quotes, every `[INF-n]` with the facts it rests on, and the output the report quotes outside
// facts — in code blocks under any heading, a console block under the command that printed it, HTML
// `<pre>`, tables, block quotes and footnotes. Plans (remediation, actions, falsification tests) are
// not claims of having seen anything, except for lines in them that look like printed output.

export interface CitedCommand extends CommandText {
  /** Where: `FACT-3`, or the heading it sits under. */
  where: string;
}

/** Sources that are not the cluster. */
export type Tier = 'alert' | 'triage';

export interface QuotedLine {
  text: string;
  /** The call whose output it is shown as (a console block's command), if the report says. */
  command?: CitedCommand;
  yaml?: boolean;
}

export interface FactClaim {
  id: string;
  /** The statement, code spans in backticks (the label and the source part left out). */
  text: string;
  /** Everything the fact says, its sources included (values are read from it). */
  full: string;
  sources: CitedCommand[];
  tiers: Tier[];
  quotes: QuotedLine[];
}

export interface InferenceClaim {
  id: string;
  text: string;
  /** `FACT-n` and `INF-n` ids it rests on. */
  cites: string[];
}

/** Output quoted outside facts: one block (a code block, a table, a paragraph's quotes). */
export interface QuoteBlock {
  where: string;
  lines: QuotedLine[];
}

export interface ReportClaims {
  headline?: Headline;
  facts: FactClaim[];
  inferences: InferenceClaim[];
  blocks: QuoteBlock[];
  /** Commands the report says it ran: command sections, console blocks, the sources of facts. */
  commands: CitedCommand[];
}

/** Headings whose code blocks list commands that were run. */
const COMMAND_SECTION =
  /\b(?:commands?|proof of work|investigation (?:log|steps)|diagnostics? run|what (?:i|we) ran|steps taken)\b/;
/** Headings of plans: their code is proposed, not seen. */
const PLAN_SECTION =
  /\b(?:remediation|mitigation|recommend\w*|actions?|next steps?|rollback|falsification|prevention|fix(?:es)?|follow[- ]?ups?|runbook)\b/;
/** Headings whose block quotes and tables quote output. */
const EVIDENCE_SECTION =
  /\b(?:evidence|excerpts?|logs?|outputs?|proof of work|findings|facts|observ\w*|events|root cause|analysis|symptoms|timeline|diagnos\w*)\b/;

/** A fact states itself with its label first (`[FACT-1]`, `**FACT-1:**`); elsewhere the label is a citation. */
const FACT_AT_START = /^\s*(?:[^\p{L}\p{N}\s[]{0,3}\s*)?\[?FACT-(\d+)\]?(?=[\s:：.)—–-]|$)/u;
const INF_AT_START = /^\s*(?:[^\p{L}\p{N}\s[]{0,3}\s*)?\[?INF-(\d+)\]?(?=[\s:：.)—–-]|$)/u;
const KUBECTL_HEADERS = new Set([
  'NAME',
  'READY',
  'STATUS',
  'RESTARTS',
  'AGE',
  'TYPE',
  'REASON',
  'OBJECT',
  'MESSAGE',
  'LAST SEEN',
  'NAMESPACE',
]);
const TIER_WORDS = /\b(?:triage|incident\.json|alert(?:manager)?|pagerduty|the page|initial report)\b/i;
const MAX_DEPTH = 32;

interface Walk {
  claims: ReportClaims;
  headings: string[];
  facts: Map<string, FactClaim>;
}

const under = (walk: Walk, pattern: RegExp): boolean => walk.headings.some((h) => pattern.test(h));
const where = (walk: Walk): string => walk.headings.at(-1) ?? 'the report';

/** The claims of a report; an unparseable (absurdly nested) report claims nothing. */
export function readClaims(markdown: string): ReportClaims {
  const claims: ReportClaims = { facts: [], inferences: [], blocks: [], commands: [] };
  const tokens = parseMarkdown(markdown);
  if (!tokens) return claims;
  const headline = readHeadline(tokens);
  if (headline) claims.headline = headline;
  const walk: Walk = { claims, headings: [], facts: new Map() };
  const depths: number[] = [];
  for (const raw of tokens) {
    const token = asMarked(raw);
    if (token.type === 'heading') {
      while (depths.length > 0 && (depths.at(-1) ?? 0) >= token.depth) {
        depths.pop();
        walk.headings.pop();
      }
      depths.push(token.depth);
      walk.headings.push(normalizeHeading(plainText(token.tokens)));
      continue;
    }
    visit(raw, walk, 0);
  }
  claims.facts = [...walk.facts.values()];
  return claims;
}

function visit(raw: Token, walk: Walk, depth: number, fact?: FactClaim): void {
  if (depth > MAX_DEPTH) return;
  const token = asMarked(raw);
  switch (token.type) {
    case 'code':
      codeBlock(token.text, token.lang ?? '', walk, fact);
      return;
    case 'html':
      html(token.text, walk, fact);
      return;
    case 'blockquote':
      if (!fact && /\[(?:FACT|INF)-\d+\]/.test(token.text))
        for (const t of token.tokens) visit(t, walk, depth + 1);
      else
        lines(
          token.text.split('\n'),
          walk,
          fact,
          under(walk, EVIDENCE_SECTION) && !under(walk, PLAN_SECTION),
        );
      return;
    case 'paragraph':
      if (!statement(token.tokens, walk, [])) prose(token, walk);
      return;
    case 'list':
      for (const item of token.items) listItem(item, walk, depth + 1);
      return;
    case 'table':
      table(token, walk);
      return;
    default:
      return;
  }
}

/**
 * A paragraph, list item or table row: a fact (it is returned) or an inference (true). False when it
 * is neither.
 */
function statement(inline: Token[], walk: Walk, nested: Token[]): FactClaim | boolean {
  const text = inlineText(inline);
  const inference = INF_AT_START.exec(text);
  if (inference) {
    const id = `INF-${inference[1]}`;
    const all = `${text} ${plainText(nested)}`;
    const cites = [...new Set([...all.matchAll(/\b(FACT|INF)-(\d+)\b/g)].map((m) => `${m[1]}-${m[2]}`))];
    walk.claims.inferences.push({ id, text, cites: cites.filter((c) => c !== id) });
    return true;
  }
  const label = FACT_AT_START.exec(text);
  if (!label) return false;
  const id = `FACT-${label[1]}`;
  const fact: FactClaim = walk.facts.get(id) ?? {
    id,
    text: statementText(text),
    full: text,
    sources: [],
    tiers: [],
    quotes: [],
  };
  walk.facts.set(id, fact);
  // Its own lines and the sub-items without labels of their own ("- Source: `kubectl …`").
  const parts = [inline, ...nested.filter((t) => !/\[(?:FACT|INF)-\d+\]/.test(plainText(t))).map(inlineOf)];
  for (const part of parts) factParts(part, fact, walk);
  return fact;
}

/** A fact's statement: without its label and its "— Source: …" part. */
function statementText(text: string): string {
  const body = text.replace(FACT_AT_START, '').replace(/^[\s:：.)—–-]+/u, '');
  const cut = body.search(/\s*[—–(;-]?\s*\b(?:sources?|evidence|command)\s*[:：]/i);
  return (cut > 0 ? body.slice(0, cut) : body).trim() || body.trim();
}

const inlineOf = (token: Token): Token[] => {
  const t = asMarked(token);
  if (t.type === 'list') return t.items.flatMap((i) => i.tokens.flatMap(inlineOf));
  return (t as { tokens?: Token[] }).tokens ?? [t];
};

/** The sources, tiers and quotes of one part of a fact. */
function factParts(inline: Token[], fact: FactClaim, walk: Walk): void {
  const text = inlineText(inline);
  let cites = false;
  for (const span of codeSpans(inline)) {
    const command = commandLine(span);
    if (command) addSource(fact, { ...command, where: fact.id }, walk);
    else if (/[\s:=]/.test(span.trim()) && span.trim().length >= 4) fact.quotes.push({ text: span });
    cites ||= command !== undefined;
  }
  const labelled = /\b(?:sources?|evidence|from|via|command|per)\s*[:：]?\s*(.*)$/i.exec(text)?.[1] ?? '';
  if (!cites) {
    const plain = /\b((?:kubectl|kubecolor|oc|k)\s[^;,—–()`]+)/.exec(labelled)?.[1];
    const command = plain ? commandLine(plain) : undefined;
    if (command) addSource(fact, { ...command, where: fact.id }, walk);
  }
  const tierText = labelled || text;
  if (TIER_WORDS.test(tierText) && /\b(?:sources?|from|per|according to|evidence)\b/i.test(text)) {
    const tier: Tier = /\btriage|initial report\b/i.test(tierText) ? 'triage' : 'alert';
    if (!fact.tiers.includes(tier)) fact.tiers.push(tier);
  }
  const prose = text.replace(/`[^`]*`/g, ' ');
  for (const m of prose.matchAll(/["“]([^"“”]{8,}?)["”](?=[\s,.;:)—–-]|$)/g))
    if (m[1] && /\s/.test(m[1])) fact.quotes.push({ text: m[1] });
}

function addSource(fact: FactClaim, command: CitedCommand, walk: Walk): void {
  if (!fact.sources.some((s) => s.text === command.text && s.pipes.join('|') === command.pipes.join('|')))
    fact.sources.push(command);
  walk.claims.commands.push(command);
}

function listItem(item: Tokens.ListItem, walk: Walk, depth: number): void {
  const own = item.tokens.filter((t) => t.type !== 'list' && t.type !== 'code' && t.type !== 'blockquote');
  const nested = item.tokens.filter((t) => t.type === 'list');
  const blocks = item.tokens.filter((t) => t.type === 'code' || t.type === 'blockquote');
  const inline = own.flatMap((t) => (t as { tokens?: Token[] }).tokens ?? [t]);
  const read = statement(inline, walk, nested);
  if (read) {
    const fact = read === true ? undefined : read;
    for (const t of blocks) visit(t, walk, depth + 1, fact);
    // Nested items with labels of their own are facts or inferences of their own.
    for (const list of nested)
      for (const sub of (list as Tokens.List).items)
        if (/\[(?:FACT|INF)-\d+\]/.test(plainText(sub.tokens))) listItem(sub, walk, depth + 1);
    return;
  }
  for (const t of own) if (t.type === 'paragraph' || t.type === 'text') prose(t, walk);
  for (const t of [...blocks, ...nested]) visit(t, walk, depth + 1);
}

/** Output a paragraph quotes outside any fact: code spans and quoted strings that look printed, footnotes. */
function prose(token: Token, walk: Walk): void {
  const inline = (token as { tokens?: Token[] }).tokens ?? [];
  const found: string[] = [];
  for (const span of codeSpans(inline)) if (outputLike(span) && !commandLine(span)) found.push(span);
  const text = inlineText(inline);
  for (const m of text.replace(/`[^`]*`/g, ' ').matchAll(/["“]([^"“”]{8,}?)["”]/g))
    if (m[1] && outputLike(m[1])) found.push(m[1]);
  const lines: QuotedLine[] = found.map((text) => ({ text }));
  // Footnotes (`[^1]: …`) are paragraphs to the parser.
  for (const line of ((token as { raw?: string }).raw ?? '').split('\n')) {
    const note = /^\s*\[\^[^\]]+\]:\s*(.*)$/.exec(line)?.[1];
    const quote = note ? footnote(note, walk) : undefined;
    if (quote) lines.push(quote);
  }
  if (lines.length > 0) walk.claims.blocks.push({ where: where(walk), lines });
}

/** The output a footnote quotes: after its labels (`Log:`, `` `kubectl logs …`: ``), under the command it names. */
function footnote(note: string, walk: Walk): QuotedLine | undefined {
  const span = /^`([^`]+)`\s*:?\s*/.exec(note);
  const named = span?.[1] ? commandLine(span[1]) : undefined;
  const rest = span ? note.slice(span[0].length) : note;
  const starts = [0, ...[...rest.matchAll(/:\s+/g)].map((m) => (m.index ?? 0) + m[0].length)];
  const text =
    starts.map((at) => rest.slice(at)).find((part) => STARTS_LIKE_OUTPUT.test(part)) ??
    (outputLike(rest) ? rest : undefined);
  if (!text) return undefined;
  const command = named ? { ...named, where: where(walk) } : undefined;
  if (command) walk.claims.commands.push(command);
  return { text, ...(command ? { command } : {}) };
}

/** A line that opens as printed output does: a timestamp or a level. */
const STARTS_LIKE_OUTPUT =
  /^\s*(?:\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\[?\d{2}:\d{2}:\d{2}|[IWEF]\d{4} |(?:FATAL|ERROR|WARN\w*|INFO|PANIC|panic:)\b|time=")/;

function table(token: Tokens.Table, walk: Walk): void {
  const header = token.header.map((c) => plainText(c.tokens).toUpperCase());
  const rows = token.rows.map((row) => row.map((c) => c.tokens));
  const factRows = rows.filter((row) => row.some((cell) => /^\[?FACT-\d+\]?$/.test(plainText(cell))));
  for (const row of factRows) {
    const idCell = row.findIndex((cell) => /^\[?FACT-\d+\]?$/.test(plainText(cell)));
    const id = /FACT-\d+/.exec(plainText(row[idCell] ?? []))?.[0] ?? '';
    const rest = row
      .filter((_, i) => i !== idCell)
      .flatMap((cell) => [...cell, { type: 'text', raw: ' ; ', text: ' ; ' } as Token]);
    statement([{ type: 'text', raw: `[${id}] `, text: `[${id}] ` } as Token, ...rest], walk, []);
  }
  const plan = under(walk, PLAN_SECTION);
  const kubectlLike = header.filter((h) => KUBECTL_HEADERS.has(h)).length >= 2;
  const found: string[] = [];
  for (const row of rows) {
    if (factRows.includes(row)) continue;
    if (kubectlLike && !plan) {
      found.push(row.map((cell) => plainText(cell)).join('   '));
      continue;
    }
    for (const cell of row) {
      const text = plainText(cell);
      const spanOnly = cell.length === 1 && cell[0]?.type === 'codespan';
      if (commandLine(text)) continue;
      if (outputLike(text) || (spanOnly && !plan && under(walk, EVIDENCE_SECTION) && /\s/.test(text)))
        found.push(text);
    }
  }
  if (found.length > 0)
    walk.claims.blocks.push({ where: where(walk), lines: found.map((text) => ({ text })) });
}

function html(text: string, walk: Walk, fact?: FactClaim): void {
  const pre = [...text.matchAll(/<(pre|code)\b[^>]*>([\s\S]*?)<\/\1>/gi)].map((m) => htmlText(m[2] ?? ''));
  if (pre.length > 0) {
    for (const block of pre) codeBlock(block, '', walk, fact);
    return;
  }
  const body = htmlText(text).split('\n');
  for (const line of body) {
    const parsed = parseMarkdown(line);
    const first = parsed?.[0];
    if (first && /\[?(?:FACT|INF)-\d+/.test(line)) visit(first, walk, 1, fact);
  }
  lines(
    body.filter((l) => !/\[?(?:FACT|INF)-\d+/.test(l)),
    walk,
    fact,
    false,
  );
}

/** Quoted lines (a block quote, an HTML block): every line, or only those that look printed. */
function lines(text: string[], walk: Walk, fact: FactClaim | undefined, all: boolean): void {
  const kept = text
    .map((l) => l.replace(/^\s*>\s?/, ''))
    .filter((l) => l.trim() && (all || outputLike(l)) && !commandLine(l));
  if (kept.length === 0) return;
  if (fact) fact.quotes.push(...kept.map((t) => ({ text: t })));
  else walk.claims.blocks.push({ where: where(walk), lines: kept.map((t) => ({ text: t })) });
}

/**
 * A code block: the commands it shows as run (under a command heading, or a console block with their
 * output) and its output lines, each under the command that printed it. In a plan, only lines that
 * look printed are quotes.
 */
function codeBlock(code: string, lang: string, walk: Walk, fact?: FactClaim): void {
  const plan = under(walk, PLAN_SECTION);
  const yaml = /^(?:ya?ml|json)$/i.test(lang.trim());
  if (plan && yaml) return;
  const all = code.replace(/\\\r?\n\s*/g, ' ').split(/\r?\n/);
  // Each line read as a command once (a block of output is thousands of lines).
  const commands = all.map((l) => (l.trim() === '' ? undefined : commandLine(l)));
  const isOutput = (l: string, i: number) => l.trim() !== '' && !commands[i] && !isComment(l);
  const console = all.some(isOutput) && commands.some((c) => c !== undefined);
  const runs = !plan && (under(walk, COMMAND_SECTION) || console || fact !== undefined);
  let current: CitedCommand | undefined;
  const found: QuotedLine[] = [];
  for (const [i, line] of all.entries()) {
    if (line.trim() === '') continue;
    const command = commands[i];
    if (command) {
      current = runs ? { ...command, where: fact?.id ?? where(walk) } : undefined;
      if (current && fact) addSource(fact, current, walk);
      else if (current) walk.claims.commands.push(current);
      continue;
    }
    if (isComment(line) && !yaml) continue;
    if (plan && !outputLike(line)) continue;
    found.push({ text: line, ...(current ? { command: current } : {}), ...(yaml ? { yaml } : {}) });
  }
  if (found.length === 0) return;
  if (fact) fact.quotes.push(...found);
  else walk.claims.blocks.push({ where: where(walk), lines: found });
}
