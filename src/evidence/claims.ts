import type { Token, Tokens } from '../util/markdown.js';
import { asMarked, parseMarkdown, plainText } from '../util/markdown.js';
import { normalizeHeading } from '../audit/report.js';

// What a report claims to rest on, read from its markdown syntax tree: the kubectl commands it says it
// ran (code blocks under command and evidence sections, the `Source:` of each `[FACT-n]`), the output
// lines it quotes (code blocks and quotes under evidence sections), the facts it states and the facts
// each `[INF-n]` cites. Commands it only proposes (remediation, falsification tests, inline code
// elsewhere) are not claims of having run anything.

export interface CitedCommand {
  /** The command line as the report wrote it (one line, `$ ` and anything after a pipe dropped). */
  text: string;
  /** Where: `FACT-3`, or the heading it sits under. */
  where: string;
}

export interface QuotedLine {
  /** The line as quoted, whitespace collapsed. */
  text: string;
  where: string;
}

export interface ReportClaims {
  commands: CitedCommand[];
  excerpts: QuotedLine[];
  /** `FACT-n` ids the report states. */
  facts: string[];
  /** Each `[INF-n]` and the `FACT-n` ids it cites. */
  inferences: { id: string; cites: string[] }[];
}

/** Headings whose code blocks list commands that were run (and their output). */
const COMMAND_SECTION =
  /\b(?:commands?|proof of work|evidence|investigation (?:log|steps)|diagnostics? run|what (?:i|we) ran)\b/;
/** Headings whose code blocks and quotes hold quoted output. */
const EVIDENCE_SECTION =
  /\b(?:evidence|excerpts?|logs?|outputs?|proof of work|findings|facts|observ\w*|events|commands?)\b/;
/** Headings whose code blocks are plans, not records: never claims, even under an evidence heading. */
const PLAN_SECTION =
  /\b(?:remediation|mitigation|recommended|actions?|next steps|rollback|falsification|prevention)\b/;

const ELISIONS = ['[...]', '...', '…'];
const SHELL_TAIL = /\s(?:\||&&|\|\||;|>|2>|<)\s?.*$/;
const MIN_EXCERPT_CHARS = 6;

/** A code line that runs kubectl: the command (prompt and pipes dropped), else undefined. */
export function commandLine(line: string): string | undefined {
  const text = line
    .trim()
    .replace(/^(?:\$|#|>|PS>)\s+/, '')
    .replace(SHELL_TAIL, '')
    .trim();
  return /^(?:\S*\/)?kubectl\s/.test(`${text} `) && text !== 'kubectl' ? text : undefined;
}

/** A quoted output line as compared: whitespace collapsed, elision marks at either end dropped. */
export function normalizeExcerpt(line: string): string {
  let text = line.replace(/\s+/g, ' ').trim();
  for (const mark of ELISIONS) {
    if (text.startsWith(mark)) text = text.slice(mark.length).trimStart();
    if (text.endsWith(mark)) text = text.slice(0, -mark.length).trimEnd();
  }
  return text;
}

const worthChecking = (text: string): boolean =>
  text.length >= MIN_EXCERPT_CHARS && /[\p{L}\p{N}]/u.test(text) && !/^#/.test(text) && !/^<.*>$/.test(text);

interface Walk {
  claims: ReportClaims;
  /** The heading path, innermost last, normalised. */
  headings: string[];
  facts: Set<string>;
}

const under = (walk: Walk, pattern: RegExp): boolean => walk.headings.some((h) => pattern.test(h));
const where = (walk: Walk): string => walk.headings.at(-1) ?? 'the report';

/** The claims of a report; an unparseable (absurdly nested) report claims nothing. */
export function readClaims(markdown: string): ReportClaims {
  const claims: ReportClaims = { commands: [], excerpts: [], facts: [], inferences: [] };
  const tokens = parseMarkdown(markdown);
  if (!tokens) return claims;
  const walk: Walk = { claims, headings: [], facts: new Set() };
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
  claims.facts = [...walk.facts];
  return claims;
}

const MAX_DEPTH = 32;

function visit(raw: Token, walk: Walk, depth: number): void {
  if (depth > MAX_DEPTH) return;
  const token = asMarked(raw);
  switch (token.type) {
    case 'code':
      codeBlock(token.text, walk);
      return;
    case 'blockquote':
      if (under(walk, EVIDENCE_SECTION) && !under(walk, PLAN_SECTION))
        for (const line of token.text.split('\n')) quote(line.replace(/^\s*>\s?/, ''), walk);
      return;
    case 'paragraph':
      statement(token.tokens, plainText(token), walk);
      return;
    case 'list':
      for (const item of token.items) listItem(item, walk, depth + 1);
      return;
    case 'table':
      for (const row of token.rows) {
        const cells = row.flatMap((cell) => cell.tokens);
        statement(cells, row.map((cell) => plainText(cell.tokens)).join(' | '), walk);
      }
      return;
    default:
      return;
  }
}

function listItem(item: Tokens.ListItem, walk: Walk, depth: number): void {
  const own = item.tokens.filter((t) => t.type !== 'list');
  const nested = item.tokens.filter((t) => t.type === 'list');
  const inline = own.flatMap((t) => (t as { tokens?: Token[] }).tokens ?? [t]);
  const ownText = plainText(own);
  // An inference's citations may sit in a nested "Based on: FACT-1" line.
  const fullText = /\[INF-\d+\]/.test(ownText) ? plainText(item.tokens) : ownText;
  statement(inline, fullText, walk);
  for (const t of own) if (t.type === 'code' || t.type === 'blockquote') visit(t, walk, depth + 1);
  for (const t of nested) visit(t, walk, depth + 1);
}

/** A paragraph, list item or table row: the facts it states, the facts an inference cites, its sources. */
function statement(inline: Token[], text: string, walk: Walk): void {
  const inference = /\[INF-(\d+)\]/.exec(text);
  if (inference) {
    const cites = [...new Set([...text.matchAll(/\bFACT-(\d+)\b/g)].map((m) => `FACT-${m[1]}`))];
    walk.claims.inferences.push({ id: `INF-${inference[1]}`, cites });
    return;
  }
  const fact = /\[FACT-(\d+)\]/.exec(text);
  if (!fact) return;
  const id = `FACT-${fact[1]}`;
  walk.facts.add(id);
  for (const source of sources(inline, text)) walk.claims.commands.push({ text: source, where: id });
}

/** The kubectl commands named after `Source:` in a fact: code spans, else the plain text. */
function sources(inline: Token[], text: string): string[] {
  const out: string[] = [];
  let afterLabel = false;
  for (const raw of flatten(inline)) {
    const token = asMarked(raw);
    if (token.type === 'text' || token.type === 'strong' || token.type === 'em') {
      if (/\bsources?\s*[:：]/i.test(plainText(token))) afterLabel = true;
    } else if (token.type === 'codespan' && afterLabel) {
      const command = commandLine(token.text);
      if (command) out.push(command);
    }
  }
  if (out.length > 0) return out;
  const plain = /\bsources?\s*[:：]\s*(kubectl\s[^;,—–]+)/i.exec(text)?.[1];
  const command = plain ? commandLine(plain) : undefined;
  return command ? [command] : [];
}

function flatten(tokens: Token[], depth = 0): Token[] {
  if (depth > MAX_DEPTH) return [];
  return tokens.flatMap((t) => {
    if (t.type === 'codespan') return [t];
    const children = (t as { tokens?: Token[] }).tokens;
    return t.type === 'text' || !children?.length ? [t] : [t, ...flatten(children, depth + 1)];
  });
}

function codeBlock(code: string, walk: Walk): void {
  if (under(walk, PLAN_SECTION)) return;
  const commands = under(walk, COMMAND_SECTION);
  const evidence = under(walk, EVIDENCE_SECTION);
  if (!commands && !evidence) return;
  // A trailing backslash continues a command on the next line.
  const lines = code.replace(/\\\r?\n\s*/g, ' ').split(/\r?\n/);
  for (const line of lines) {
    const command = commandLine(line);
    if (command) {
      if (commands) walk.claims.commands.push({ text: command, where: where(walk) });
      continue;
    }
    if (evidence) quote(line, walk);
  }
}

function quote(line: string, walk: Walk): void {
  const text = normalizeExcerpt(line);
  if (worthChecking(text)) walk.claims.excerpts.push({ text, where: where(walk) });
}
