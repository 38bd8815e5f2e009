import { asMarked, type Token } from '../util/markdown.js';
import { collapseSpaces } from './normalize.js';

// The small readers of report text the claims reader (claims.ts) uses: a command line (with its
// aliases, prompt and pipes), whether a line looks like output a tool printed, and a fact's inline text
// with its code spans kept in backticks (values and literals are read from them).

/** A command the report says it ran: the kubectl (or promql) part, and the pipe stages after it. */
export interface CommandText {
  /** `kubectl …` (an alias `k`, `oc`, `kubecolor` or a path read as kubectl), or `promql …`. */
  text: string;
  pipes: string[];
}

const PROMPT = /^(?:\$|#|>|%|PS>|❯|➜)\s+/;
const ALIAS = /^(?:\S*\/)?(?:kubectl|kubecolor|oc|k)(?=\s)/;
const PROMQL = /^(?:\S*\/)?promql(?=\s)/;

/** Splits at the first `&&`, `;`, `||` or redirect, and at each pipe, outside quotes. */
function stages(line: string): string[] {
  const out: string[] = [];
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"') i++;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '\\') i++;
    else if (c === ';' || (c === '&' && line[i + 1] === '&') || (c === '|' && line[i + 1] === '|')) {
      out.push(line.slice(start, i));
      return out;
    } else if (c === '>' && /\s|^\d$/.test(line[i - 1] ?? ' ')) {
      out.push(line.slice(start, i).replace(/\s\d$/, ''));
      return out;
    } else if (c === '|') {
      out.push(line.slice(start, i));
      start = i + 1;
    }
  }
  out.push(line.slice(start));
  return out;
}

/** A line that runs kubectl (or an alias of it) or promql: the command and its pipes, else undefined. */
export function commandLine(line: string): CommandText | undefined {
  const text = line
    .trim()
    .replace(PROMPT, '')
    .replace(/^(?:[A-Z_][A-Z0-9_]*=\S*\s+)+/, '')
    .trim();
  if (PROMQL.test(text)) {
    const [first = '', ...pipes] = stages(text).map((s) => s.trim());
    const command = first.replace(PROMQL, 'promql').trim();
    return /^promql\s+[a-z]/.test(command) ? { text: command, pipes: pipes.filter(Boolean) } : undefined;
  }
  if (!ALIAS.test(text)) return undefined;
  const [first = '', ...pipes] = stages(text).map((s) => s.trim());
  const command = first.replace(ALIAS, 'kubectl').trim();
  if (!/^kubectl\s+\S/.test(command) || /^kubectl\s+-{0,2}(?:h|help)$/.test(command)) return undefined;
  return { text: command, pipes: pipes.filter(Boolean) };
}

/** A line of a shell session that is a comment, not output. */
export const isComment = (line: string): boolean =>
  /^\s*#(?:\s|$|[^!])/.test(line) && !PROMPT.test(line.trim());

/** Lines that look like what a tool printed: a log line, an event, a describe field, a get row. */
const OUTPUT_LIKE = [
  /^\s*\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/,
  /^\s*[IWEF]\d{4} \d{2}:\d{2}:\d{2}/,
  /^\s*\[?\d{2}:\d{2}:\d{2}\b/,
  /\b(?:FATAL|PANIC|ERROR|SEVERE|CRITICAL)\b|\bpanic:|\bException\b|\bTraceback\b|\blevel=(?:error|fatal|warn\w*|info)\b|\btime="/,
  /^\s*(?:Normal|Warning)\s+[A-Z]\w+\s/,
  /^\s*(?:State|Last State|Reason|Exit Code|Restart Count|Message|Started|Finished)\s*:\s*\S/,
  /^\s*[a-z0-9][a-z0-9.-]*\s+\d+\/\d+\s+[A-Za-z]+\s+\d+/,
];

export const outputLike = (line: string): boolean => OUTPUT_LIKE.some((re) => re.test(line));

const MAX_DEPTH = 32;

/** Inline tokens as text, code spans kept in backticks (a fact's literals and quotes are read from them). */
export function inlineText(tokens: Token[], depth = 0): string {
  if (depth > MAX_DEPTH) return '';
  return collapseSpaces(
    tokens
      .map((raw) => {
        const t = asMarked(raw);
        if (t.type === 'codespan') return `\`${t.text}\``;
        if (t.type === 'br') return ' ';
        const children = (t as { tokens?: Token[] }).tokens;
        if (children?.length) return inlineText(children, depth + 1);
        return 'text' in t && typeof t.text === 'string' ? t.text : '';
      })
      .join(''),
  );
}

/** The code spans among inline tokens, at any depth. */
export function codeSpans(tokens: Token[], depth = 0): string[] {
  if (depth > MAX_DEPTH) return [];
  return tokens.flatMap((raw) => {
    const t = asMarked(raw);
    if (t.type === 'codespan') return [t.text];
    const children = (t as { tokens?: Token[] }).tokens;
    return children?.length ? codeSpans(children, depth + 1) : [];
  });
}

/** Decodes the entities an HTML block may hold and drops its tags. */
export function htmlText(html: string): string {
  return html
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&');
}
