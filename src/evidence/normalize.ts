// How a quoted line and a recorded output line are compared: both normalised the same way, so that
// what an honest report changes without changing what it says still matches — typographic quotes and
// dashes, runs of spaces, timestamps shortened or reformatted (`2026-11-28T16:35:01.902Z`, `16:35:01`
// and the time of `Sat, 28 Nov 2026 16:35:01 +0000` all read `⟨16:35⟩`), and a masked value (`********`,
// `<redacted>`, `xxx`) where the record holds a redaction marker (`[REDACTED]`, `[REDACTED:NAME]`, or
// whatever value the redactor left): both become the wildcard `∗`.

/** A stand-in for any one run of non-space characters: a masked or redacted value. */
export const WILDCARD = '\u2217';

const isDigit = (text: string, i: number): boolean => {
  const c = text.charCodeAt(i);
  return c >= 48 && c <= 57;
};
const twoDigits = (text: string, i: number): number =>
  isDigit(text, i) && isDigit(text, i + 1)
    ? (text.charCodeAt(i) - 48) * 10 + text.charCodeAt(i + 1) - 48
    : -1;

/**
 * Where a time of day that starts with the hour at `h` (and its colon at `h + 2`) ends, with its seconds,
 * fraction and zone if any; -1 when it is not one (a digit or a colon right after it).
 */
function timeEnd(text: string, h: number): number {
  const ends = [h + 5];
  let end = h + 5;
  if (text[end] === ':' && twoDigits(text, end + 1) >= 0 && twoDigits(text, end + 1) < 60) {
    end += 3;
    ends.push(end);
    if ((text[end] === '.' || text[end] === ',') && isDigit(text, end + 1)) {
      end++;
      while (isDigit(text, end)) end++;
      ends.push(end);
    }
  }
  if (text[end] === 'Z') ends.push(end + 1);
  else if ((text[end] === '+' || text[end] === '-') && twoDigits(text, end + 1) >= 0) {
    if (text[end + 3] === ':' && twoDigits(text, end + 4) >= 0) ends.push(end + 6);
    else if (twoDigits(text, end + 3) >= 0) ends.push(end + 5);
  }
  // The longest form not followed by a digit or a colon, as a pattern with optional parts would take.
  for (let k = ends.length - 1; k >= 0; k--) {
    const e = ends[k] as number;
    if (!isDigit(text, e) && text[e] !== ':') return e;
  }
  return -1;
}

/**
 * Every time of day as `⟨hh:mm⟩`, its date, seconds and zone dropped: `2026-11-28T16:35:01.902Z`,
 * `16:35:01`, `16:35` and the time in `Sat, 28 Nov 2026 16:35:01 +0000` read the same.
 */
function canonicalTimes(text: string): string {
  let out = '';
  let last = 0;
  for (let colon = text.indexOf(':'); colon >= 0; colon = text.indexOf(':', colon + 1)) {
    const h = colon - 2;
    if (h < 0 || (h > 0 && (isDigit(text, h - 1) || text[h - 1] === ':'))) continue;
    const hh = twoDigits(text, h);
    const mm = twoDigits(text, colon + 1);
    if (hh < 0 || hh > 23 || mm < 0 || mm > 59) continue;
    const end = timeEnd(text, h);
    if (end < 0) continue;
    const dated =
      h >= 11 && (text[h - 1] === 'T' || text[h - 1] === ' ') && DATE.test(text.slice(h - 11, h - 1));
    out += `${text.slice(last, dated ? h - 11 : h)}⟨${text.slice(h, h + 2)}:${text.slice(colon + 1, colon + 3)}⟩`;
    last = end;
    colon = end - 1;
  }
  return last === 0 ? text : out + text.slice(last);
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** Redaction markers the record may hold, and masks an agent writes over a value. */
const MASKS =
  /\[REDACTED[^\]\s]*\]|\*{3,}|•{3,}|<(?:redacted|hidden|masked|secret|removed)>|\[(?:redacted|hidden|masked|secret|removed)\]|(?<![\p{L}\p{N}])(?:x{3,}|X{3,})(?![\p{L}\p{N}])/giu;

/** The common form of a line of output or of a quote. */
export function normalizeLine(text: string): string {
  return collapseSpaces(rewrite(text));
}

/** Lines with runs of whitespace collapsed, empty ones dropped (an output as printed, for exact lookups). */
export function collapsedLines(text: string): string[] {
  const out: string[] = [];
  // Most log outputs have nothing to collapse: split as they are.
  if (!looseSpace(text, true)) {
    for (const line of text.split('\n')) if (line) out.push(line);
    return out;
  }
  // Whitespace other than the line breaks collapsed in one pass over the whole text, not line by line
  // (a describe has runs of spaces on every line); then a line's single leading or trailing space.
  for (const line of text.replace(SPACE_RUNS, ' ').split('\n')) {
    const trimmed = line.startsWith(' ') || line.endsWith(' ') ? line.trim() : line;
    if (trimmed) out.push(trimmed);
  }
  return out;
}

/** `text` with runs of whitespace as one space, trimmed: itself when it has nothing to collapse. */
export const collapseSpaces = (text: string): string =>
  looseSpace(text, false) ? text.replace(/\s+/g, ' ').trim() : text;

/**
 * Whitespace that collapsing would drop or change: any but a single space between two characters
 * (with `lines`, the line breaks aside and each line's own start and end). One search for a class
 * spelled out (several times faster than `[^\S ]`, and than a loop over the character codes).
 */
function looseSpace(text: string, lines: boolean): boolean {
  return (lines ? LOOSE_IN_LINES : LOOSE).test(text) || text.startsWith(' ') || text.endsWith(' ');
}

// The class is what `\s` matches but a space (and, in lines, a line break).
const LOOSE = /[\t\n\v\f\r\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]| {2}/;
const LOOSE_IN_LINES = /[\t\v\f\r\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]| [ \n]|\n /;
const SPACE_RUNS = /[\t\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+/g;

/** The common form of collapsed lines: a line with nothing to rewrite is kept as it is (no copy). */
export function normalizeCollapsed(lines: readonly string[]): string[] {
  // The rewrites replace runs of non-space characters only: a collapsed line stays collapsed.
  return lines.map(rewrite);
}

/** The common form of every line of an output. */
export const normalizeLines = (text: string): string[] => normalizeCollapsed(collapsedLines(text));

/** Whether normalising changes more than spaces in `text` (a time of day, typography, a mask). */
export const needsRewrite = (text: string): boolean =>
  /\d:[0-5]\d/.test(text) || TYPOGRAPHY.test(text) || (MASK_HINT.test(text) && A_MASK.test(text));

function rewrite(text: string): string {
  let out = text;
  // Each rewrite only when the line has what it rewrites: most output lines need none or one.
  if (TYPOGRAPHY.test(out))
    out = out
      .replace(/[\u2018\u2019\u201A\u2032]/g, "'")
      .replace(/[\u201C\u201D\u201E\u2033]/g, '"')
      .replace(/[\u2010-\u2015\u2212]/g, '-')
      .replace(/\u2026/g, '...');
  if (out.includes(':')) out = canonicalTimes(out);
  if (MASK_HINT.test(out)) out = out.replace(MASKS, WILDCARD);
  return out;
}

const TYPOGRAPHY = /[\u2010-\u2015\u2018-\u201E\u2026\u2032\u2033\u2212]/;
const MASK_HINT = /[*•<[]|xxx|XXX/;
/** MASKS without its global state, for a yes-or-no question. */
const A_MASK = new RegExp(MASKS.source, 'iu');

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
