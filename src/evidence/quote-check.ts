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
import { collapseSpaces, needsRewrite, tokensOf } from './normalize.js';

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

const DIGIT = /\d/g;

/** The anchor words anchorsOf found last (the first `count` of them): one array for every line. */
const found: string[] = [];

/**
 * How many anchor words a line has, put in `found` in order: found from its digits (a native search),
 * each word cut out only when it is long enough, not every word of every line. Read them before the
 * next call, which writes over them.
 */
function anchorsOf(line: string): number {
  let count = 0;
  DIGIT.lastIndex = 0;
  while (DIGIT.test(line)) {
    const at = DIGIT.lastIndex - 1;
    const start = line.lastIndexOf(' ', at) + 1;
    let end = line.indexOf(' ', at);
    if (end < 0) end = line.length;
    if (end - start >= 6) found[count++] = line.slice(start, end);
    // On to the next word (at the end of the line, the search fails and starts over at 0).
    DIGIT.lastIndex = end;
  }
  return count;
}

/**
 * Every successful call's output, for quotes that cite no call, by the anchor words each output holds:
 * a quote is looked for only in the outputs holding its rarest ones. A line copied whole (the most
 * common quote) is found the same way; one without an anchor word, or whose rarest is in many outputs,
 * in a map of every line to the first call that printed it (built when first needed).
 */
class AllOutputs {
  /** Each anchor word and the calls whose output holds it, in order. */
  private readonly byToken = new Map<string, number[]>();
  /** Each line and the first call that printed it, and on how many of its lines (read when needed). */
  private whole: Map<string, { call: RecordedCall; held: number }> | undefined;

  constructor(private readonly calls: RecordedCall[]) {
    calls.forEach((call, n) => {
      for (const line of call.rawLines()) this.index(line, n);
    });
  }

  /** The anchor words of a line (the outputs as printed: an anchor is a word normalising leaves alone). */
  private index(line: string, n: number): void {
    for (let k = 0, count = anchorsOf(line); k < count; k++) {
      const token = found[k] as string;
      const list = this.byToken.get(token);
      if (!list) this.byToken.set(token, [n]);
      else if (list[list.length - 1] !== n) list.push(n);
    }
  }

  /** The first call that printed this line as it stands (runs of spaces aside), and on how many of its lines. */
  exact(line: string): { call: RecordedCall; held: number } | undefined {
    let rarest: number[] | undefined;
    for (let k = 0, count = anchorsOf(line); k < count; k++) {
      const list = this.byToken.get(found[k] as string);
      // A call that printed the line holds each of its words: none holds this one.
      if (!list) return undefined;
      if (!rarest || list.length < rarest.length) rarest = list;
    }
    if (!rarest || rarest.length > FEW_OUTPUTS) return this.wholeLines().get(line);
    for (const n of rarest) {
      const call = this.calls[n];
      const held = call ? timesPrinted(line, call) : 0;
      if (call && held > 0) return { call, held };
    }
    return undefined;
  }

  private wholeLines(): Map<string, { call: RecordedCall; held: number }> {
    if (this.whole) return this.whole;
    const whole = new Map<string, { call: RecordedCall; held: number }>();
    for (const call of this.calls)
      for (const line of call.rawLines()) {
        const first = whole.get(line);
        if (first === undefined) whole.set(line, { call, held: 1 });
        else if (first.call === call) first.held++;
      }
    this.whole = whole;
    return whole;
  }

  /** The first call whose output holds the quote (found through its rarest whole words), and its lines. */
  find(quote: Quote, plain: boolean): { call: RecordedCall; held: number } | undefined {
    const byToken = this.byToken;
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
      const held = call ? heldCount(quote, call, plain) : 0;
      if (call && held > 0) return { call, held };
    }
    return undefined;
  }
}

/**
 * How many lines of `call`'s output hold the quote (0: none), normalising no more of it than needed:
 * a plain quote (no time of day, typography or mask) in the output as printed; else only the lines
 * holding every word of it normalising leaves alone; else (a quote across lines, words the output
 * spells otherwise) all of it.
 */
function heldCount(quote: Quote, call: RecordedCall, plain: boolean): number {
  const raw = call.rawLines();
  if (plain && countHeld(quote, raw, 1) > 0) return countLines(quote, raw, commonAt(raw.length)) || 1;
  // The words of the quote as written are in the line as printed (a shortened `09:07:00` is in
  // `2026-11-26T09:07:00Z`), unless they are masks, elisions or typography.
  const words = tokensOf(collapseSpaces(quote.raw)).filter(
    (t) =>
      t.length >= 2 && !/\.\.\.|…|[[\]()]|[\u2010-\u2015\u2018-\u201E\u2212]/.test(t) && !A_MASK_WORD.test(t),
  );
  if (words.length > 0) {
    let held = 0;
    for (let i = 0; i < raw.length; i++) {
      const line = raw[i] ?? '';
      if (words.every((w) => line.includes(w)) && heldAt(quote, [call.lineAt(i)], 0)) held++;
    }
    if (held > 0) return held;
  }
  const lines = call.lines();
  return countHeld(quote, lines, 1) > 0 ? countLines(quote, lines, commonAt(lines.length)) || 1 : 0;
}

/** Outputs few enough that a line is compared with each of theirs rather than looked up in all. */
const FEW_OUTPUTS = 8;

/** Outputs of up to this many lines are searched line by line; longer ones through a map of their lines. */
const SCAN_LINES = 256;

/** On how many of its lines (as printed) `call` printed `line`. */
function timesPrinted(line: string, call: RecordedCall): number {
  const lines = call.rawLines();
  if (lines.length > SCAN_LINES) return call.lineCounts().get(line) ?? 0;
  let held = 0;
  for (const l of lines) if (l.length === line.length && l === line) held++;
  return held;
}

/** The first cited call (its output not piped) that printed `line` as it stands, and on how many lines. */
function copiedFrom(line: string, cited: CitedCall[]): { call: RecordedCall; held: number } | undefined {
  for (const { call, pipes } of cited) {
    const held = pipes.length > 0 ? 0 : timesPrinted(line, call);
    if (held > 0) return { call, held };
  }
  return undefined;
}

/** A word that is a mask or a redaction marker. */
const A_MASK_WORD =
  /\*{3}|•{3}|<(?:redacted|hidden|masked|secret|removed)>|redacted|(?:^|[^\p{L}\p{N}])(?:x{3,}|X{3,})(?:$|[^\p{L}\p{N}])/iu;

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

  /** Found in `call`, on `held` of its `searched` lines: unless that is so many that it says nothing. */
  private heldIn(call: RecordedCall, held: number, searched: number): QuoteVerdict {
    return tooCommon(held, searched)
      ? { kind: 'weak', why: `it is on ${held} of ${searched} lines of \`${call.label}\`` }
      : { kind: 'found', call };
  }

  private allOutputs(): AllOutputs {
    this.all ??= new AllOutputs(this.index.succeeded());
    return this.all;
  }

  check(text: string, cited: CitedCall[], yaml = false): QuoteVerdict | undefined {
    // A line copied whole, as printed: found without normalising the quote or the outputs.
    const copied = collapseSpaces(text);
    if (!yaml && copied && !ELIDED.test(copied)) {
      const exact = cited.length === 0 ? this.allOutputs().exact(copied) : copiedFrom(copied, cited);
      if (exact) {
        const weak = tooWeak(tokensOf(copied));
        if (weak) return { kind: 'weak', why: weak };
        return this.heldIn(exact.call, exact.held, exact.call.rawLines().length);
      }
    }
    const quote = prepareQuote(text, yaml);
    if (!quote) return undefined;
    const weak = tooWeak(quote);
    if (weak) return { kind: 'weak', why: weak };
    const plain = !needsRewrite(text);
    let derived: string | undefined;
    for (const { call, pipes } of cited) {
      if (pipes.length > 0) {
        const piped = applyPipes(call.output?.stdout ?? '', pipes);
        if (piped.kind === 'derived') derived = piped.why;
        else {
          const lines = outputLines(piped.text);
          if (countHeld(quote, lines, 1) > 0)
            return this.heldIn(call, countLines(quote, lines), lines.length);
        }
      }
      const held = heldCount(quote, call, plain);
      if (held > 0) return this.heldIn(call, held, call.rawLines().length);
    }
    const elsewhere = this.allOutputs().find(quote, plain);
    if (elsewhere) {
      if (cited.length > 0) return { kind: 'other', call: elsewhere.call };
      return this.heldIn(elsewhere.call, elsewhere.held, elsewhere.call.rawLines().length);
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
