import { parseDocument } from 'yaml';

/** What a markdown file's YAML frontmatter held, or why it could not be read. */
export type Frontmatter =
  | { ok: true; data: Record<string, unknown>; body: string }
  | { ok: false; reason: 'missing' | 'unterminated' | 'not_a_mapping'; message: string }
  | { ok: false; reason: 'yaml'; message: string; line: number; column: number };

/** Splits `---\n<yaml>\n---\n<body>`; YAML error positions are reported as lines of the whole file. */
export function parseFrontmatter(text: string): Frontmatter {
  const src = text.replace(/^\uFEFF/, '');
  const open = /^---[ \t]*\r?\n/.exec(src);
  if (!open)
    return { ok: false, reason: 'missing', message: 'the file does not start with a --- frontmatter line' };
  const rest = src.slice(open[0].length);
  const close = /^(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/m.exec(rest);
  if (!close) {
    return { ok: false, reason: 'unterminated', message: 'the frontmatter has no closing --- line' };
  }
  const yamlText = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length);
  const doc = parseDocument(yamlText, { prettyErrors: true, uniqueKeys: true });
  const err = doc.errors[0];
  if (err) {
    const pos = err.linePos?.[0] ?? { line: 1, col: 1 };
    return {
      ok: false,
      reason: 'yaml',
      // Line 1 of the file is the opening ---.
      line: pos.line + 1,
      column: pos.col,
      message: firstLine(err.message),
    };
  }
  const data: unknown = doc.toJS({ maxAliasCount: 100 });
  if (data === null || data === undefined) return { ok: true, data: {}, body };
  if (typeof data !== 'object' || Array.isArray(data)) {
    return {
      ok: false,
      reason: 'not_a_mapping',
      message: 'the frontmatter is not a YAML mapping of keys to values',
    };
  }
  return { ok: true, data: data as Record<string, unknown>, body };
}

/** The text of the first markdown heading, if any (used as a fallback one-line summary). */
export function firstHeading(markdown: string): string | undefined {
  const m = /^#{1,6}[ \t]+(.+?)[ \t#]*$/m.exec(markdown);
  return m?.[1]?.trim() || undefined;
}

/** Collapses whitespace so a value fits on one prompt line. */
export function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function firstLine(s: string): string {
  return s.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? s;
}
