import { parseDocument } from '../../shared/yaml.js';
import { ParseCache } from '../../util/parse-cache.js';

/** What a markdown file's YAML frontmatter held, or why it could not be read. */
export type Frontmatter =
  | { ok: true; data: Record<string, unknown>; body: string }
  | { ok: false; reason: 'missing' | 'unterminated' | 'not_a_mapping' | 'rejected'; message: string }
  | { ok: false; reason: 'yaml'; message: string; line: number; column: number };

/** Aliases a document may expand: more is an alias bomb ("billion laughs"), rejected by the parser. */
export const MAX_YAML_ALIASES = 100;

/**
 * Parses YAML text into a plain value; whatever the parser throws (an alias bomb, a nesting deep
 * enough to exhaust the stack) comes back as `rejected` with its message, never as an exception.
 */
export function parseYamlValue(
  text: string,
):
  | { ok: true; value: unknown }
  | { ok: false; error: { message: string; line?: number; column?: number }; rejected: boolean } {
  try {
    const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
    const err = doc.errors[0];
    if (err) {
      const pos = err.linePos?.[0];
      return {
        ok: false,
        rejected: false,
        error: { message: firstLine(err.message), ...(pos ? { line: pos.line, column: pos.col } : {}) },
      };
    }
    return { ok: true, value: doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }) as unknown };
  } catch (err) {
    return {
      ok: false,
      rejected: true,
      error: { message: err instanceof Error ? err.message : String(err) },
    };
  }
}

/**
 * Every run reads the persona's and each skill's frontmatter: the same text is parsed once (the file is
 * still read each run, so an edit counts at once). Only frontmatter up to this size is kept, so the cache
 * stays small however large the files; results are frozen, since every caller shares them.
 */
const CACHED_FRONTMATTER_BYTES = 16 * 1024;
const frontmatterCache = new ParseCache<ReturnType<typeof parseYamlValue>>(256);

function frozen<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) frozen(v);
  }
  return value;
}

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
  const parsed =
    yamlText.length <= CACHED_FRONTMATTER_BYTES
      ? frontmatterCache.get('', yamlText, () => frozen(parseYamlValue(yamlText)))
      : parseYamlValue(yamlText);
  if (!parsed.ok) {
    const { message, line = 1, column = 1 } = parsed.error;
    if (parsed.rejected)
      return { ok: false, reason: 'rejected', message: `the frontmatter was rejected: ${message}` };
    // Line 1 of the file is the opening ---.
    return { ok: false, reason: 'yaml', line: line + 1, column, message };
  }
  const data = parsed.value;
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

/** Collapses whitespace so a value fits on one prompt line. */
export function oneLine(s: string): string {
  return s.replace(/\s+/g, ' ').trim();
}

function firstLine(s: string): string {
  return s.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? s;
}
