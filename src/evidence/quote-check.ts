import type { CallIndex, RecordedCall } from './calls.js';
import { applyPipes } from './pipes.js';
import {
  commonAt,
  countHeld,
  countLines,
  heldAt,
  outputLines,
  prepareQuote,
  tooCommon,
  tooWeak,
  type Quote,
} from './quote.js';
import { needsRewrite, tokensOf } from './normalize.js';

// One quoted line against the run's record: first the output of the call it cites (through the pipes
// the report shows, re-applied), then every other call's output (a quote from another pod's describe is
// found there, and said so), then the alert and the triage output (a separate tier, never cluster
// evidence), then the errors of failed calls (a connection refused is not what the cluster holds).

export type QuoteVerdict =
  | { kind: 'found'; call: RecordedCall }
  | { kind: 'weak'; why: string }
  | { kind: 'other'; call: RecordedCall }
  | { kind: 'alert' }
  | { kind: 'error'; call: RecordedCall }
  | { kind: 'cut'; call?: RecordedCall }
  | { kind: 'derived'; why: string }
  | { kind: 'unrecorded' }
  | { kind: 'missing' };

/** A cited call and the pipe stages its output went through. */
export interface CitedCall {
  call: RecordedCall;
  pipes: string[];
}

/**
 * Words that find the outputs a quote may be in: names and numbers with a digit (`pod=api-7d9f`,
 * `10.0.0.12`, `registry.example/shop/api:2.3.1`), 6 characters or more — not the words every line of
 * a log repeats. A quote without one is looked for in every output.
 */
const anchorWord = (token: string): boolean => token.length >= 6 && /\d/.test(token);

/** `line` holds a digit between `start` and `end` (a word is cut out only when it is an anchor). */
function hasDigit(line: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = line.charCodeAt(i);
    if (c >= 48 && c <= 57) return true;
  }
  return false;
}

/**
 * Every successful call's output, for quotes that cite no call: first by whole lines (a quote is most
 * often a line copied whole), then, built on the first quote that is not, by the words each output holds.
 */
class AllOutputs {
  private readonly whole = new Map<string, RecordedCall>();
  /** Each anchor word and the calls whose output holds it, in order. */
  private byToken: Map<string, number[]> | undefined;

  constructor(private readonly calls: RecordedCall[]) {
    for (const call of calls)
      for (const line of call.rawLines()) if (this.whole.get(line) === undefined) this.whole.set(line, call);
  }

  /** The call that printed this line as it stands (runs of spaces aside). */
  exact(line: string): RecordedCall | undefined {
    return this.whole.get(line);
  }

  private tokens(): Map<string, number[]> {
    if (this.byToken) return this.byToken;
    const byToken = new Map<string, number[]>();
    // The outputs as printed (runs of spaces collapsed): an anchor is a word normalising leaves alone.
    this.calls.forEach((call, n) => {
      for (const line of call.rawLines()) {
        // Words are cut out only when they can be anchors (no array of every word of every line).
        for (let start = 0; start < line.length;) {
          let end = line.indexOf(' ', start);
          if (end < 0) end = line.length;
          if (end - start >= 6 && hasDigit(line, start, end)) {
            const token = line.slice(start, end);
            const list = byToken.get(token);
            if (!list) byToken.set(token, [n]);
            else if (list[list.length - 1] !== n) list.push(n);
          }
          start = end + 1;
        }
      }
    });
    this.byToken = byToken;
    return byToken;
  }

  /** The first call whose output holds the quote (found through its rarest whole words), and its lines. */
  find(quote: Quote, plain: boolean): { call: RecordedCall; lines: readonly string[] } | undefined {
    const byToken = this.tokens();
    // Whole words of the quote (its very first and last may be cut), rarest first.
    const inner = quote.tokens.slice(1, -1);
    const words = [
      ...new Set(inner.length > 0 ? inner : quote.tokens.length >= 2 ? quote.tokens : []),
    ].filter((t) => anchorWord(t) && !/[\u2217⟨⟩]/.test(t));
    const ranked = words.map((t) => byToken.get(t) ?? []).sort((a, b) => a.length - b.length);
    const [rarest, next] = ranked;
    // An output printing typographic quotes or dashes has other words than the quote's normalised ones.
    const typographic = /[\u2010-\u2015\u2018-\u201E\u2212]/.test(quote.raw);
    const candidates =
      rarest && !(typographic && rarest.length === 0)
        ? next
          ? rarest.filter((n) => next.includes(n))
          : rarest
        : this.calls.map((_, n) => n);
    for (const n of candidates) {
      const call = this.calls[n];
      if (!call) continue;
      for (const lines of plain ? [call.rawLines(), call.lines()] : [call.lines()])
        for (let i = 0; i < lines.length; i++) if (heldAt(quote, lines, i)) return { call, lines };
    }
    return undefined;
  }
}

/** Marks of text left out: a quote with one is not a whole line. */
const ELIDED = /\.\.\.|…|\[\s*(?:snip|truncated|cut|omitted)\s*\]/i;

export class QuoteChecker {
  private all: AllOutputs | undefined;
  private readonly alertLines: string[];

  constructor(
    private readonly index: CallIndex,
    alertText: string,
    private readonly unrecorded: boolean,
  ) {
    this.alertLines = outputLines(alertText);
  }

  /** Found in `lines` of `call`, unless it is on so many of them that it says nothing. */
  private heldIn(quote: Quote, call: RecordedCall, lines: readonly string[]): QuoteVerdict {
    const held = countLines(quote, lines, commonAt(lines.length));
    return tooCommon(held, lines.length)
      ? { kind: 'weak', why: `it is on ${held} of ${lines.length} lines of \`${call.label}\`` }
      : { kind: 'found', call };
  }

  private allOutputs(): AllOutputs {
    this.all ??= new AllOutputs(this.index.succeeded());
    return this.all;
  }

  check(text: string, cited: CitedCall[], yaml = false): QuoteVerdict | undefined {
    // A line copied whole, as printed: found without normalising the quote or the outputs.
    const copied = text.replace(/\s+/g, ' ').trim();
    if (!yaml && copied && !ELIDED.test(copied)) {
      const exact =
        cited.length === 0
          ? this.allOutputs().exact(copied)
          : cited.find((c) => c.pipes.length === 0 && c.call.rawLines().includes(copied))?.call;
      if (exact) {
        const weak = tooWeak(tokensOf(copied));
        if (weak) return { kind: 'weak', why: weak };
        const lines = exact.rawLines();
        const held = lines.reduce((n, l) => n + (l === copied ? 1 : 0), 0);
        return tooCommon(held, lines.length)
          ? { kind: 'weak', why: `it is on ${held} of ${lines.length} lines of \`${exact.label}\`` }
          : { kind: 'found', call: exact };
      }
    }
    const quote = prepareQuote(text, yaml);
    if (!quote) return undefined;
    const weak = tooWeak(quote);
    if (weak) return { kind: 'weak', why: weak };
    // A quote that normalising leaves as it is (no time, typography or mask) is looked for in the
    // output as printed first; only where that fails is the output normalised.
    const plain = !needsRewrite(text);
    let derived: string | undefined;
    for (const { call, pipes } of cited) {
      const searched: string[][] = [];
      if (pipes.length > 0) {
        const piped = applyPipes(call.output?.stdout ?? '', pipes);
        if (piped.kind === 'applied') searched.push(outputLines(piped.text));
        else derived = piped.why;
      }
      if (plain) searched.push(call.rawLines());
      searched.push(call.lines());
      for (const lines of searched) {
        const held = countHeld(quote, lines, 1);
        if (held > 0) return this.heldIn(quote, call, lines);
      }
    }
    const elsewhere = this.allOutputs().find(quote, plain);
    if (elsewhere) {
      if (cited.length > 0) return { kind: 'other', call: elsewhere.call };
      return this.heldIn(quote, elsewhere.call, elsewhere.lines);
    }
    if (countHeld(quote, this.alertLines, 1) > 0) return { kind: 'alert' };
    for (const call of this.index.calls)
      if (!call.succeeded && countHeld(quote, call.errorLines(), 1) > 0) return { kind: 'error', call };
    const cut = (cited.length > 0 ? cited.map((c) => c.call) : this.index.calls).find((c) => c.cut);
    if (cut) return { kind: 'cut', call: cut };
    if (derived) return { kind: 'derived', why: derived };
    if (this.unrecorded) return { kind: 'unrecorded' };
    return { kind: 'missing' };
  }
}
