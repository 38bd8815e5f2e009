// Reading Kubernetes text line by line for the redaction (redact-objects.ts): a line's indentation,
// key and value as YAML and indented JSON write them, where a value begun on a line ends, and edits that
// replace a value while its key and quotes stay. Plain text functions, no parsing: the text may be cut
// anywhere or quoted in a report.

export const MARK = '[REDACTED]';

/** A line's indentation and key, if it has one: `  - name: x`, `"data": {`, `kind: Secret`. */
const KEY_LINE =
  /([ ]*)((?:-[ ]+)*)(?:"([^"\\\r\n]*)"|'([^'\r\n]*)'|([A-Za-z0-9_./@-]+))[ \t]*:(?=[ \t]|\r?$)[ \t]*/my;
const LEAD = /([ ]*)((?:-[ ]+|-$)*)/y;

export interface Line {
  start: number;
  /** Index of the line's `\n` (or the text's end); a `\r` before it belongs to no value. */
  end: number;
  lead: number;
  /** Column of the key (after any `- `); the line's lead when it has no key. */
  keyCol: number;
  dash: boolean;
  key?: string;
  /** Where the value starts (after `: `) and the value itself, without a trailing `\r`. */
  valueStart: number;
  value: string;
  blank: boolean;
  /** A `---` document marker or a markdown fence: no object spans it. */
  fence?: 'document' | 'markdown';
}

export function lineAt(text: string, start: number): Line {
  let end = text.indexOf('\n', start);
  if (end < 0) end = text.length;
  const contentEnd = end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end;
  KEY_LINE.lastIndex = start;
  const m = KEY_LINE.exec(text);
  if (m && m.index === start && KEY_LINE.lastIndex <= contentEnd + 1) {
    const lead = (m[1] ?? '').length;
    const valueStart = Math.min(KEY_LINE.lastIndex, contentEnd);
    return {
      start,
      end,
      lead,
      keyCol: lead + (m[2] ?? '').length,
      dash: (m[2] ?? '') !== '',
      key: m[3] ?? m[4] ?? m[5] ?? '',
      valueStart,
      value: text.slice(valueStart, contentEnd),
      blank: false,
    };
  }
  LEAD.lastIndex = start;
  const lm = LEAD.exec(text);
  const lead = (lm?.[1] ?? '').length;
  const rest = text.slice(start + lead, contentEnd);
  const fence = /^(?:---|\.\.\.)[ \t]*$/.test(rest)
    ? 'document'
    : /^(?:```|~~~)/.test(rest)
      ? 'markdown'
      : undefined;
  return {
    start,
    end,
    lead,
    keyCol: lead + (lm?.[2] ?? '').length,
    dash: (lm?.[2] ?? '') !== '',
    valueStart: contentEnd,
    value: '',
    blank: rest.trim() === '',
    ...(fence ? { fence } : {}),
  };
}

export const previousLineStart = (text: string, start: number) =>
  start < 2 ? 0 : text.lastIndexOf('\n', start - 2) + 1;

/** A scalar as written (quotes and a JSON comma off). */
export const scalar = (value: string) => value.replace(/,\s*$/, '').replace(/^(["'])(.*)\1$/, '$2');

export interface Edit {
  start: number;
  end: number;
  text: string;
}

/**
 * Replaces the value of a key line and of its continuation lines (a block scalar, a quoted scalar over
 * several lines): quotes and a JSON comma stay, the value goes.
 */
export function valueEdit(text: string, line: Line, lastEnd: number): Edit | undefined {
  const value = line.value.trimEnd();
  if (value === '' || value === '""' || value === "''" || value === '{}' || value === '[]') return undefined;
  const end = lastEnd > line.start && text.charCodeAt(lastEnd - 1) === 13 ? lastEnd - 1 : lastEnd;
  const comma = lastEnd === line.end && /",$/.test(value) ? ',' : '';
  const quote = value[0] === '"' || value[0] === "'" ? value[0] : '';
  const replacement = `${quote}${MARK}${quote}${comma}`;
  if (text.slice(line.valueStart, end).trimEnd() === replacement) return undefined;
  return { start: line.valueStart, end, text: replacement };
}

/** The end of the value begun on `line`: past the lines indented deeper than its key. */
export function valueEnd(text: string, line: Line): number {
  let last = line.end;
  for (let pos = line.end + 1; pos < text.length;) {
    const l = lineAt(text, pos);
    if (!l.blank && l.lead <= line.keyCol) break;
    if (!l.blank) last = l.end;
    pos = l.end + 1;
  }
  return last;
}

const KEY_CHAR = /[A-Za-z0-9_./-]/;

/** The key written just before the colon at `colon` (`password: `, `"password": `) and where it starts. */
export function keyBefore(text: string, colon: number): { key: string; start: number } | undefined {
  let i = colon;
  while (i > 0 && (text[i - 1] === ' ' || text[i - 1] === '\t')) i--;
  const quote = text[i - 1] === '"' || text[i - 1] === "'" ? text[i - 1] : '';
  if (quote) i--;
  const end = i;
  while (i > 0 && KEY_CHAR.test(text[i - 1] ?? '')) i--;
  if (i === end) return undefined;
  if (quote) {
    if (text[i - 1] !== quote) return undefined;
    i--;
  }
  return { key: text.slice(quote ? i + 1 : i, end), start: i };
}

/** The start of the line holding `index` when only spaces and `- ` come before it on that line, else -1. */
export function lineStartBefore(text: string, index: number): number {
  for (let i = index - 1; i >= 0; i--) {
    const c = text[i];
    if (c === '\n') return i + 1;
    if (c !== ' ' && c !== '-') return -1;
  }
  return 0;
}

/** A JSON string literal starting at `i` (a `"`): the index of its closing quote, or -1. */
export function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 92) j++;
    else if (c === 34) return j;
    else if (c === 10) return -1;
  }
  return -1;
}

/** Applies non-overlapping edits (an edit inside one already taken is dropped). */
export function applyEdits(text: string, edits: Edit[]): string {
  if (edits.length === 0) return text;
  edits.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const e of edits) {
    if (e.start < at) continue;
    out += text.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + text.slice(at);
}
