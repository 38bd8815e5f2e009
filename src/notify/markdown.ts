import { Lexer, type MarkedToken, type Token, type Tokens } from 'marked';

// The agent's report as CommonMark + GFM tokens (marked's lexer), and their rendering as Slack mrkdwn.
// Slack has no headings or tables: headings become bold lines, table rows become lines of cells. Text is
// escaped (&, <, >) so that a report can never ping `<!channel>` or forge a link.

export type { Token, Tokens } from 'marked';

/** Nesting deeper than this is flattened to plain text. */
const MAX_DEPTH = 32;
/** Container markers (`>`, list markers) opening one line, and leading whitespace, past which we do not parse. */
const MAX_LINE_NESTING = 32;
const MAX_INDENT = 400;

/**
 * The report's block tokens; undefined when it nests containers deeper than any report does
 * (`- - - - …`, `> > > …`), which the lexer handles by recursion: such text is handled as plain text.
 */
export function parseMarkdown(text: string): Token[] | undefined {
  if (tooDeep(text)) return undefined;
  try {
    return new Lexer({ gfm: true }).lex(text);
  } catch {
    return undefined;
  }
}

/** True when a line opens more than MAX_LINE_NESTING containers or is indented past MAX_INDENT. */
function tooDeep(text: string): boolean {
  let start = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    let markers = 0;
    let indent = 0;
    let i = start;
    while (i < end) {
      const c = text[i];
      if (c === ' ' || c === '\t') {
        indent++;
        i++;
      } else if (c === '>') {
        markers++;
        i++;
      } else {
        // A list marker: -, * or + (or digits and . or )) followed by a space or a tab.
        const m = /^(?:[-*+]|\d{1,9}[.)])[ \t]/.exec(text.slice(i, Math.min(end, i + 12)));
        if (!m) break;
        markers++;
        i += m[0].length - 1;
      }
    }
    if (markers > MAX_LINE_NESTING || indent > MAX_INDENT) return true;
    start = end + 1;
  }
  return false;
}

const asMarked = (token: Token): MarkedToken => token as MarkedToken;

/** Plain text of tokens (inline markup dropped), whitespace collapsed. */
export function plainText(tokens: Token | Token[]): string {
  return collect(Array.isArray(tokens) ? tokens : [tokens], 0)
    .replace(/\s+/g, ' ')
    .trim();
}

function collect(tokens: Token[], depth: number): string {
  if (depth > MAX_DEPTH) return '';
  return tokens
    .map((raw) => {
      const token = asMarked(raw);
      switch (token.type) {
        case 'list':
          return token.items.map((item) => collect(item.tokens, depth + 1)).join(' ');
        case 'table':
          return [token.header, ...token.rows]
            .map((row) => row.map((cell) => collect(cell.tokens, depth + 1)).join(' '))
            .join(' ');
        case 'image':
          return token.text;
        case 'br':
        case 'space':
        case 'hr':
          return ' ';
        case 'checkbox':
        case 'def':
          return '';
        default: {
          const children = (token as { tokens?: Token[] }).tokens;
          if (children?.length) return collect(children, depth + 1);
          return 'text' in token && typeof token.text === 'string' ? token.text : '';
        }
      }
    })
    .join('');
}

/** A top-level section: a heading of depth <= `depth` and everything up to the next one. */
export interface MarkdownSection {
  heading?: Tokens.Heading;
  tokens: Token[];
}

/** Splits the top-level tokens at headings of depth <= `depth` (text before the first is a section too). */
export function sectionsOf(tokens: Token[], depth: number): MarkdownSection[] {
  const out: MarkdownSection[] = [];
  let current: MarkdownSection = { tokens: [] };
  for (const raw of tokens) {
    const token = asMarked(raw);
    if (token.type === 'heading' && token.depth <= depth) {
      if (current.heading || current.tokens.length > 0) out.push(current);
      current = { heading: token, tokens: [] };
    } else if (token.type !== 'space') current.tokens.push(token);
  }
  if (current.heading || current.tokens.length > 0) out.push(current);
  return out;
}

/** Escapes the three characters Slack mrkdwn treats as control characters. */
export const escapeMrkdwn = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A URL inside `<url|label>`: `|`, `<` and `>` would end it early. */
const linkTarget = (url: string): string =>
  url.replace(/\|/g, '%7C').replace(/>/g, '%3E').replace(/</g, '%3C');

export const codeBlock = (code: string): string => `\`\`\`\n${escapeMrkdwn(code)}\n\`\`\``;

const inline = (tokens: Token[] | undefined, depth: number): string =>
  (tokens ?? []).map((t) => toMrkdwn(t, depth + 1)).join('');

/** One token (block or inline) as mrkdwn. */
export function toMrkdwn(raw: Token, depth = 0): string {
  if (depth > MAX_DEPTH) return escapeMrkdwn(plainText(raw));
  const token = asMarked(raw);
  switch (token.type) {
    case 'heading':
      return wrap('*', escapeMrkdwn(plainText(token.tokens)));
    case 'paragraph':
      return inline(token.tokens, depth);
    case 'text':
      return token.tokens?.length ? inline(token.tokens, depth) : escapeMrkdwn(token.text);
    case 'escape':
      return escapeMrkdwn(token.text);
    case 'strong':
      return wrap('*', inline(token.tokens, depth));
    case 'em':
      return wrap('_', inline(token.tokens, depth));
    case 'del':
      return wrap('~', inline(token.tokens, depth));
    case 'codespan':
      return `\`${escapeMrkdwn(token.text.replace(/`/g, "'"))}\``;
    case 'br':
      return '\n';
    case 'link': {
      const label = inline(token.tokens, depth).replace(/[|>]/g, ' ');
      return label && label !== token.href
        ? `<${linkTarget(token.href)}|${label}>`
        : `<${linkTarget(token.href)}>`;
    }
    case 'image':
      return `<${linkTarget(token.href)}|${escapeMrkdwn(token.text || 'image').replace(/[|>]/g, ' ')}>`;
    case 'code':
      return codeBlock(token.text);
    case 'html':
      return escapeMrkdwn(token.text.trim());
    case 'blockquote':
      return token.tokens
        .map((t) => toMrkdwn(t, depth + 1))
        .filter(Boolean)
        .join('\n\n')
        .split('\n')
        .map((line) => `> ${line}`)
        .join('\n');
    case 'list':
      return listToMrkdwn(token, depth, 0);
    case 'table':
      return tableToMrkdwn(token, depth);
    case 'hr':
      return '───';
    case 'space':
    case 'def':
    case 'checkbox':
      return '';
    default:
      return escapeMrkdwn(plainText(token));
  }
}

/** Emphasis markers need text that does not start or end with a space to render. */
function wrap(marker: string, text: string): string {
  const trimmed = text.trim();
  if (!trimmed) return text;
  const lead = text.slice(0, text.indexOf(trimmed));
  const tail = text.slice(lead.length + trimmed.length);
  return `${lead}${marker}${trimmed}${marker}${tail}`;
}

function listToMrkdwn(list: Tokens.List, depth: number, level: number): string {
  if (depth > MAX_DEPTH) return escapeMrkdwn(plainText(list));
  const indent = '    '.repeat(Math.min(level, 6));
  const start = typeof list.start === 'number' ? list.start : 1;
  return list.items
    .map((item, i) => {
      const bullet = item.task ? (item.checked ? '☑' : '☐') : list.ordered ? `${start + i}.` : '•';
      const parts = item.tokens
        .map((raw) => {
          const child = asMarked(raw);
          if (child.type === 'list') return listToMrkdwn(child, depth + 2, level + 1);
          return toMrkdwn(child, depth + 2)
            .split('\n')
            .join(`\n${indent}  `);
        })
        .filter(Boolean);
      const [first = '', ...rest] = parts;
      return [`${indent}${bullet} ${first}`, ...rest].join('\n');
    })
    .join('\n');
}

/** Each row as `cell · cell · cell`; the header row in bold. Slack renders no tables. */
function tableToMrkdwn(table: Tokens.Table, depth: number): string {
  const line = (cells: Tokens.TableCell[]) =>
    cells
      .map((cell) => inline(cell.tokens, depth).trim())
      .filter((c) => c.length > 0)
      .join(' · ');
  const header = line(table.header).replace(/\*/g, '');
  return [wrap('*', header), ...table.rows.map(line)].join('\n');
}
