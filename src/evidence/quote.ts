import { normalizeLines, quoteSegments, tokensOf, WILDCARD } from './normalize.js';

// Whether a quoted line is in an output, and whether it could identify anything if it were. A quote is
// held by a line when its parts (between elisions) appear in it in order; by two or three lines joined
// (a line the report wrapped or joined); or, for a table row, when its cells are some of the row's
// cells in order (a `get pods` row with columns left out). A masked value matches any one run of
// non-space characters on either side. A quote made of status words, field labels and numbers, or held
// by many lines of what it was searched in, identifies nothing and verifies nothing.

export interface Quote {
  raw: string;
  segments: string[];
  tokens: string[];
  /** Text every line (or joined lines) holding the quote holds: its longest unmasked token. */
  probe: string;
}

export type Held = 'line' | 'joined' | 'columns';

/** A quote prepared for matching; undefined when nothing is left of it (only elisions or a comment). */
export function prepareQuote(raw: string, yaml = false): Quote | undefined {
  const segments = quoteSegments(raw, yaml);
  if (segments.length === 0) return undefined;
  const tokens = segments.flatMap(tokensOf);
  // The first longest piece between masks.
  let probe = '';
  for (const t of tokens) {
    if (!t.includes(WILDCARD)) {
      if (t.length > probe.length) probe = t;
      continue;
    }
    for (const piece of t.split(WILDCARD)) if (piece.length > probe.length) probe = piece;
  }
  return { raw, segments, tokens, probe };
}

/** The pieces of a token between masks. */
const pieces = (token: string): string[] => token.split(WILDCARD);

type Mode = 'whole' | 'suffix' | 'prefix' | 'inside';

const escapeRe = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const reverse = (text: string): string => [...text].reverse().join('');

/** `plain` is a prefix of some way of filling the masks of `masked` (its pieces in order, masks non-empty). */
function prefixOfMasked(plain: string, parts: string[]): boolean {
  const [first = '', ...rest] = parts;
  if (plain.length <= first.length) return first.startsWith(plain);
  if (!plain.startsWith(first)) return false;
  let tail = plain.slice(first.length);
  for (const part of rest) {
    // The mask takes at least one character, then the next piece, or the quote ends inside the mask.
    const at = part === '' ? -1 : tail.indexOf(part, 1);
    if (at < 0) return !/\s/.test(tail);
    tail = tail.slice(at + part.length);
  }
  return tail === '';
}

/** `a` (from the quote) against `b` (from the line): whole, a suffix of it, a prefix, or inside it. */
function tokenHolds(a: string, b: string, mode: Mode): boolean {
  const wildA = a.includes(WILDCARD);
  const wildB = b.includes(WILDCARD);
  // Plain text, or a mask on both sides (the same value masked): compared as they stand.
  if (wildA === wildB) {
    if (mode === 'whole') return a === b;
    if (mode === 'suffix') return b.endsWith(a);
    if (mode === 'prefix') return b.startsWith(a);
    return b.includes(a);
  }
  if (wildA) {
    // The quote masks a value: the line's text fills it, its pieces in order around it.
    const body = pieces(a).map(escapeRe).join('\\S+');
    const start = mode === 'whole' || mode === 'prefix' ? '^' : '';
    const end = mode === 'whole' || mode === 'suffix' ? '$' : '';
    return new RegExp(`${start}${body}${end}`).test(b);
  }
  // The line masks a value (the record is redacted): the quote may hold the value itself.
  const parts = pieces(b);
  if (mode === 'whole') return new RegExp(`^${parts.map(escapeRe).join('\\S+')}$`).test(a);
  if (mode === 'prefix') return prefixOfMasked(a, parts);
  if (mode === 'suffix') return prefixOfMasked(reverse(a), parts.map(reverse).reverse());
  return parts.some((p) => p.length >= 3 && (a.includes(p) || p.includes(a)));
}

/** Where `segment` ends in `line`, found at or after character `fromChar`; -1 when absent. */
function segmentIn(segment: string, line: string, fromChar: number): number {
  if (!segment.includes(WILDCARD) && !line.includes(WILDCARD)) {
    const at = line.indexOf(segment, fromChar);
    return at < 0 ? -1 : at + segment.length;
  }
  const want = tokensOf(segment);
  const have = tokensOf(line);
  let offset = 0;
  const starts = have.map((t) => {
    const start = offset;
    offset += t.length + 1;
    return start;
  });
  for (let i = 0; i + want.length <= have.length; i++) {
    if ((starts[i] ?? 0) < fromChar) continue;
    const ok = want.every((w, j) => {
      const h = have[i + j] as string;
      if (want.length === 1) return tokenHolds(w, h, 'inside');
      if (j === 0) return tokenHolds(w, h, 'suffix');
      if (j === want.length - 1) return tokenHolds(w, h, 'prefix');
      return tokenHolds(w, h, 'whole');
    });
    const last = i + want.length - 1;
    if (ok) return (starts[last] ?? 0) + (have[last] ?? '').length;
  }
  return -1;
}

/** Every segment in order. */
function segmentsIn(segments: string[], line: string): boolean {
  let at = 0;
  for (const segment of segments) {
    const end = segmentIn(segment, line, at);
    if (end < 0) return false;
    at = end;
  }
  return true;
}

/** Each output's lines split into tokens, once (a line is split only when a table-row quote asks). */
const tokenCache = new WeakMap<readonly string[], (string[] | undefined)[]>();

function lineTokens(lines: readonly string[], i: number): string[] {
  let cache = tokenCache.get(lines);
  if (!cache) {
    cache = [];
    tokenCache.set(lines, cache);
  }
  return (cache[i] ??= tokensOf(lines[i] ?? ''));
}

/** The quote's tokens are some of the line's tokens, in order (a table row with columns left out). */
function columnsIn(tokens: string[], have: string[]): boolean {
  if (tokens.length < 2) return false;
  let j = 0;
  for (const h of have) if (j < tokens.length && tokenHolds(tokens[j] as string, h, 'whole')) j++;
  return j === tokens.length;
}

/** Every word of the quote is on the line (or is masked). */
function everyWordOn(tokens: readonly string[], line: string): boolean {
  for (const t of tokens) if (!t.includes(WILDCARD) && !line.includes(t)) return false;
  return true;
}

/** A line holding the quote holds its longest token, unless a masked value on the line stands for it. */
const mayHold = (line: string | undefined, probe: string): boolean =>
  line !== undefined && (line.includes(probe) || line.includes(WILDCARD));

/** How line `i` of `lines` holds the quote, if it does. */
export function heldAt(quote: Quote, lines: readonly string[], i: number): Held | undefined {
  const line = lines[i] ?? '';
  const masked = line.includes(WILDCARD);
  const here = mayHold(line, quote.probe);
  if (!here && !mayHold(lines[i + 1], quote.probe) && !mayHold(lines[i + 2], quote.probe)) return undefined;
  if (here && segmentsIn(quote.segments, line)) return 'line';
  // Joined lines: the quote starts on this line, so the line holds its first word (or masks it).
  const first = quote.tokens[0] ?? '';
  if (i + 1 < lines.length && (masked || line.includes(first.split(WILDCARD)[0] ?? ''))) {
    let joined = line;
    for (let k = 1; k <= 2 && i + k < lines.length; k++) {
      joined = `${joined} ${lines[i + k] ?? ''}`;
      if (segmentsIn(quote.segments, joined)) return 'joined';
    }
  }
  // Some of a row's cells: every word of the quote is on the line.
  if (!here || quote.tokens.length < 2 || !(masked || everyWordOn(quote.tokens, line))) return undefined;
  return columnsIn(quote.tokens, lineTokens(lines, i)) ? 'columns' : undefined;
}

/** An output's lines, normalised for matching (empty lines dropped). */
export const outputLines = (text: string): string[] => normalizeLines(text);

/** How many of `lines` hold the quote as it stands, each on one line (counting stops at `enough`): how common it is. */
export function countLines(quote: Quote, lines: readonly string[], enough = Infinity): number {
  let count = 0;
  for (let i = 0; i < lines.length && count < enough; i++) {
    const line = lines[i] ?? '';
    if (mayHold(line, quote.probe) && segmentsIn(quote.segments, line)) count++;
  }
  return count;
}

/** How many of `lines` hold the quote (counting stops at `enough`). */
export function countHeld(quote: Quote, lines: readonly string[], enough = Infinity): number {
  let count = 0;
  for (let i = 0; i < lines.length && count < enough; i++) if (heldAt(quote, lines, i)) count++;
  return count;
}

/** Words that say what kind of thing a line is, not which one: a quote of only these identifies nothing. */
const COMMON = new Set([
  // pod and container states and reasons, event types
  'running',
  'pending',
  'succeeded',
  'failed',
  'unknown',
  'warning',
  'normal',
  'error',
  'completed',
  'terminated',
  'waiting',
  'true',
  'false',
  'ready',
  'notready',
  'crashloopbackoff',
  'oomkilled',
  'imagepullbackoff',
  'errimagepull',
  'containercreating',
  'evicted',
  'backoff',
  'unhealthy',
  'killing',
  'pulled',
  'created',
  'started',
  'scheduled',
  'active',
  'bound',
  'available',
  'ok',
  'none',
  '<none>',
  // field labels and column names
  'reason',
  'state',
  'last',
  'status',
  'type',
  'exit',
  'code',
  'message',
  'restart',
  'restarts',
  'count',
  'age',
  'name',
  'namespace',
  'image',
  'limits',
  'requests',
  'memory',
  'cpu',
  'info',
  'warn',
  'debug',
  'level',
  'from',
  'kubelet',
  'events',
  'conditions',
  'phase',
  'node',
  // words
  'the',
  'a',
  'an',
  'of',
  'in',
  'on',
  'to',
  'is',
  'was',
  'and',
  'or',
  'for',
  'with',
  'by',
  'at',
  'pod',
  'container',
  'containers',
  'pods',
]);

function bare(token: string): string {
  const lower = token.toLowerCase();
  // Most words are ASCII letters and digits at both ends: nothing to strip.
  const plain = /^[a-z0-9<]/.test(lower) && /[a-z0-9>]$/.test(lower);
  const stripped = plain ? lower : lower.replace(/^[^\p{L}\p{N}<]+|[^\p{L}\p{N}>]+$/gu, '');
  return stripped.startsWith('level=') ? stripped.slice(6) : stripped;
}

/** A word of a quote that could tell one line from another, lower case, or undefined. */
function tells(token: string): string | undefined {
  const t = bare(token);
  if (t.length < 2 || COMMON.has(t)) return undefined;
  // A mask, a time of day (normalised or as printed), a small number: nothing to tell lines apart by.
  if (t.includes(WILDCARD) || t.startsWith('⟨') || /\d:[0-5]\d|\*{3}|\[redacted|^\d{1,2}$/.test(t))
    return undefined;
  return /[\p{L}\p{N}]/u.test(t) ? t : undefined;
}

/** Why a quote (its words) identifies nothing, or undefined when it could identify a line. */
export function tooWeak(quote: Quote | readonly string[]): string | undefined {
  const tokens = 'tokens' in quote ? quote.tokens : quote;
  let first: string | undefined;
  for (const token of tokens) {
    const word = tells(token);
    if (word === undefined) continue;
    // Two words that tell, or one long one, are enough: no need to read the rest.
    if (first !== undefined || word.length >= 10) return undefined;
    first = word;
  }
  return first === undefined ? 'only status words, labels or numbers' : 'too short to identify a line';
}

/** Held by many lines of what it was searched in: it does not say which. */
export const tooCommon = (held: number, searched: number): boolean => held >= 4 && held * 10 >= searched * 3;

/** How many held lines make a quote too common in `searched` lines: counting can stop there. */
export const commonAt = (searched: number): number => Math.max(4, Math.ceil((searched * 3) / 10));
