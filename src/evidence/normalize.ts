// How a quoted line and a recorded output line are compared: both normalised the same way, so that
// what an honest report changes without changing what it says still matches — typographic quotes and
// dashes, runs of spaces, timestamps shortened or reformatted (`2026-11-28T16:35:01.902Z`, `16:35:01`
// and the time of `Sat, 28 Nov 2026 16:35:01 +0000` all read `⟨16:35⟩`), and a masked value (`********`,
// `<redacted>`, `xxx`) where the record holds a redaction marker (`[REDACTED]`, `[REDACTED:NAME]`, or
// whatever value the redactor left): both become the wildcard `∗`.

/** A stand-in for any one run of non-space characters: a masked or redacted value. */
export const WILDCARD = '\u2217';

/** A time of day, with its date and zone if any: `2026-11-28T16:35:01.902Z`, `16:35:01`, `16:35`. */
const TIME =
  /(?:\d{4}-\d{2}-\d{2}[T ])?(?<![\d:])([01]\d|2[0-3]):([0-5]\d)(?::[0-5]\d(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?(?![\d:])/g;
/** Redaction markers the record may hold, and masks an agent writes over a value. */
const MASKS =
  /\[REDACTED[^\]\s]*\]|\*{3,}|•{3,}|<(?:redacted|hidden|masked|secret|removed)>|\[(?:redacted|hidden|masked|secret|removed)\]|(?<![\p{L}\p{N}])(?:x{3,}|X{3,})(?![\p{L}\p{N}])/giu;

/** The common form of a line of output or of a quote. */
export function normalizeLine(text: string): string {
  return rewrite(text).replace(/\s+/g, ' ').trim();
}

/** Lines with runs of whitespace collapsed, empty ones dropped (an output as printed, for exact lookups). */
export function collapsedLines(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.replace(/[^\S\n]+/g, ' ').split('\n')) {
    const line = raw.charCodeAt(0) === 32 || raw.charCodeAt(raw.length - 1) === 32 ? raw.trim() : raw;
    if (line) out.push(line);
  }
  return out;
}

/** The common form of collapsed lines: a line with nothing to rewrite is kept as it is (no copy). */
export function normalizeCollapsed(lines: readonly string[]): string[] {
  // The rewrites replace runs of non-space characters only: a collapsed line stays collapsed.
  return lines.map(rewrite);
}

/** The common form of every line of an output. */
export const normalizeLines = (text: string): string[] => normalizeCollapsed(collapsedLines(text));

function rewrite(text: string): string {
  let out = text;
  // Each rewrite only when the line has what it rewrites: most output lines need none or one.
  if (TYPOGRAPHY.test(out))
    out = out
      .replace(/[\u2018\u2019\u201A\u2032]/g, "'")
      .replace(/[\u201C\u201D\u201E\u2033]/g, '"')
      .replace(/[\u2010-\u2015\u2212]/g, '-')
      .replace(/\u2026/g, '...');
  if (/\d:[0-5]\d/.test(out)) out = out.replace(TIME, '⟨$1:$2⟩');
  if (MASK_HINT.test(out)) out = out.replace(MASKS, WILDCARD);
  return out;
}

const TYPOGRAPHY = /[\u2010-\u2015\u2018-\u201E\u2026\u2032\u2033\u2212]/;
const MASK_HINT = /[*•<[]|xxx|XXX/;

/** Marks that say text was left out of a quote: the parts around them must appear in order. */
const ELISION =
  /\s*(?:\[\s*(?:\.{3}|…|snip|truncated|cut|omitted)\s*\]|\(\s*(?:\.{3}|…)\s*\)|<\s*(?:\.{3}|…)\s*>|\.{3,}|…)\s*/i;

/** A quote's parts between elisions, normalised; a YAML line's trailing comment and a trailing comma dropped. */
export function quoteSegments(quote: string, yaml = false): string[] {
  let text = quote;
  if (yaml || /^\s*-?\s*"?[\w./-]+"?\s*:(?:\s|$)/.test(text))
    text = text.replace(/\s+#(?![^"]*"\s*$).*$/, '');
  // A field named by its path (`status.lastState.terminated.reason: OOMKilled`) is its last key in YAML.
  text = text.replace(
    /^(\s*)[A-Za-z_][\w-]*(?:\[\d*\])?(?:\.[A-Za-z_][\w-]*(?:\[\d*\])?)*\.([A-Za-z_][\w-]*)\s*:\s/,
    '$1$2: ',
  );
  return normalizeLine(text)
    .split(ELISION)
    .map((s) => s.trim().replace(/,$/, '').trim())
    .filter((s) => s.length > 0);
}

/** Whitespace-separated tokens of a normalised line. */
export const tokensOf = (line: string): string[] => (line === '' ? [] : line.split(' '));
