import { O200K_TOKEN_SPLIT_REGEX } from 'gpt-tokenizer/encodingParams/constants';

// Token counting with a bounded cost per character. o200k's BPE is quadratic in the length of one
// pre-token (the regex pieces it merges within: a word, a run of punctuation, a run of whitespace),
// so 200 KB of `[` took 35 s. Text without long runs is counted exactly as the tokenizer counts it.
// In text with a long run, every pre-token longer than MAX_PIECE_CHARS is cut into pieces of that
// size, counted piece by piece, and CUT_SURCHARGE tokens are added per cut; all other pre-tokens are
// counted exactly (tokens never cross a pre-token boundary).
//
// Error bound, measured by test/unit/context/token-count.test.ts over runs of one character, repeated
// patterns, random letters, punctuation, whitespace and CJK text: the result is never below the true
// count, and at most 2 tokens per cut above it (a cut is made only every 256 characters of a run).

/** Pre-tokens longer than this are cut into pieces of this many characters. */
export const MAX_PIECE_CHARS = 256;
/** Tokens added per cut: cutting can lose up to ~0.5 token per piece, so the error stays on the safe side. */
export const CUT_SURCHARGE = 1;

const LETTER = /\p{L}/u;
const MARK = /\p{M}/u;
const NUMBER = /\p{N}/u;
const SPACE = /\s/u;

/**
 * True when `text` has a run that may make one pre-token longer than MAX_PIECE_CHARS: letters and
 * marks, punctuation and symbols (marks too), or whitespace; digits are pre-tokenized three at a time.
 * Without such a run no pre-token exceeds about twice MAX_PIECE_CHARS, and the text is counted in one
 * call. A character loop (ASCII classified inline) rather than a regular expression: several times
 * faster on ordinary text.
 */
export function hasLongRun(text: string): boolean {
  let letters = 0;
  let others = 0;
  let spaces = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    let letter = false;
    let mark = false;
    let number = false;
    let space = false;
    if (code < 0x80) {
      letter = (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
      number = code >= 0x30 && code <= 0x39;
      space = code === 0x20 || (code >= 0x09 && code <= 0x0d);
    } else {
      const point = text.codePointAt(i) ?? code;
      const char = String.fromCodePoint(point);
      if (point > 0xffff) i += 1;
      letter = LETTER.test(char);
      mark = MARK.test(char);
      number = NUMBER.test(char);
      space = SPACE.test(char);
    }
    // A mark continues both a letter run and a punctuation run, as in the pre-tokenizer's classes.
    letters = letter || mark ? letters + 1 : 0;
    others = !letter && !number && !space ? others + 1 : 0;
    spaces = space ? spaces + 1 : 0;
    if (letters >= MAX_PIECE_CHARS || others >= MAX_PIECE_CHARS || spaces >= MAX_PIECE_CHARS) return true;
  }
  return false;
}

/** Counts one string exactly (the tokenizer's own count); must treat special-token text as text. */
export type ExactCount = (text: string) => number;

/** Token count of `text` in time linear in its length (see the module comment for the error bound). */
export function countBounded(text: string, exact: ExactCount): number {
  if (text.length === 0) return 0;
  if (!hasLongRun(text)) return exact(text);
  const split = new RegExp(O200K_TOKEN_SPLIT_REGEX.source, 'gu');
  let total = 0;
  // Consecutive whole pre-tokens are counted together: from `pending` to the current position.
  let pending = 0;
  for (const match of text.matchAll(split)) {
    const start = match.index;
    const end = start + match[0].length;
    if (end - start <= MAX_PIECE_CHARS) continue;
    if (start > pending) total += exact(text.slice(pending, start));
    total += countPieces(text, start, end, exact);
    pending = end;
  }
  if (pending < text.length) total += exact(text.slice(pending));
  return total;
}

/** Counts text[start, end) in pieces of MAX_PIECE_CHARS (never splitting a surrogate pair), plus the surcharge. */
function countPieces(text: string, start: number, end: number, exact: ExactCount): number {
  let total = 0;
  let cuts = -1;
  for (let at = start; at < end; cuts += 1) {
    let next = Math.min(end, at + MAX_PIECE_CHARS);
    if (next < end && isHighSurrogate(text.charCodeAt(next - 1))) next -= 1;
    total += exact(text.slice(at, next));
    at = next;
  }
  return total + cuts * CUT_SURCHARGE;
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
