import type { Token, Tokens } from 'marked';
import { asMarked, plainText } from '../util/markdown.js';

// The agent's report (parsed by the shared parser, src/util/markdown.ts) rendered as Slack mrkdwn.
// Slack has no headings or tables: headings become bold lines, table rows become lines of cells. Text is
// escaped (&, <, >) so that a report can never ping `<!channel>` or forge a link.

export type { Token, Tokens } from 'marked';
export { parseMarkdown, plainText, sectionsOf, type MarkdownSection } from '../util/markdown.js';

/** Nesting deeper than this is flattened to plain text. */
const MAX_DEPTH = 32;

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
