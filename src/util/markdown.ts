import { Lexer, type MarkedToken, type Token, type Tokens } from 'marked';

// The one markdown parser of the daemon: CommonMark + GFM tokens from marked's lexer. Every reader of a
// report (the section check, the evidence check, the notification summary and its Slack rendering)
// walks this syntax tree; none of them scans lines with regexes.

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

export const asMarked = (token: Token): MarkedToken => token as MarkedToken;

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

/** The text of the first heading, if any (a fallback one-line summary): `#` lines in code blocks are not headings. */
export function firstHeading(markdown: string): string | undefined {
  const heading = parseMarkdown(markdown)?.find((t) => t.type === 'heading');
  return (heading && plainText(heading).trim()) || undefined;
}
