import type { CallIndex, RecordedCall } from './calls.js';
import { applyPipes } from './pipes.js';
import { countHeld, heldAt, outputLines, prepareQuote, tooCommon, tooWeak, type Quote } from './quote.js';
import { tokensOf } from './normalize.js';

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

/** Lines of every successful call's output, indexed by their tokens, for quotes that cite no call. */
class AllOutputs {
  private readonly byToken = new Map<string, number[]>();
  private readonly at: { call: RecordedCall; line: number }[] = [];

  constructor(calls: RecordedCall[]) {
    for (const call of calls)
      call.lines().forEach((line, i) => {
        const id = this.at.length;
        this.at.push({ call, line: i });
        for (const token of new Set(tokensOf(line))) {
          const list = this.byToken.get(token);
          if (list) list.push(id);
          else this.byToken.set(token, [id]);
        }
      });
  }

  /** The first call whose output holds the quote (looked up by its longest whole token). */
  find(quote: Quote): RecordedCall | undefined {
    const inner = quote.segments.flatMap((s) => tokensOf(s).slice(1, -1));
    const whole = inner.length > 0 ? inner : quote.tokens.length >= 2 ? quote.tokens : [];
    const anchor = whole.filter((t) => !t.includes('\u2217')).sort((a, b) => b.length - a.length)[0];
    const ids = anchor === undefined ? this.at.map((_, i) => i) : (this.byToken.get(anchor) ?? []);
    const tried = new Set<string>();
    for (const id of ids) {
      const entry = this.at[id];
      if (!entry) continue;
      // A quote of wrapped lines may start up to two lines before the anchor's.
      for (let start = Math.max(0, entry.line - 2); start <= entry.line; start++) {
        const key = `${id - (entry.line - start)}`;
        if (tried.has(key)) continue;
        tried.add(key);
        if (heldAt(quote, entry.call.lines(), start)) return entry.call;
      }
    }
    return undefined;
  }
}

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

  check(text: string, cited: CitedCall[], yaml = false): QuoteVerdict | undefined {
    const quote = prepareQuote(text, yaml);
    if (!quote) return undefined;
    const weak = tooWeak(quote);
    if (weak) return { kind: 'weak', why: weak };
    let derived: string | undefined;
    for (const { call, pipes } of cited) {
      let lines = call.lines();
      if (pipes.length > 0) {
        const piped = applyPipes(call.output?.stdout ?? '', pipes);
        if (piped.kind === 'applied') lines = outputLines(piped.text);
        else derived = piped.why;
      }
      let held = countHeld(quote, lines, lines.length);
      if (held === 0 && lines !== call.lines()) {
        lines = call.lines();
        held = countHeld(quote, lines, lines.length);
      }
      if (held > 0 && tooCommon(held, lines.length))
        return { kind: 'weak', why: `it is on ${held} of ${lines.length} lines of \`${call.label}\`` };
      if (held > 0) return { kind: 'found', call };
    }
    this.all ??= new AllOutputs(this.index.succeeded());
    const elsewhere = this.all.find(quote);
    if (elsewhere) {
      if (cited.length > 0) return { kind: 'other', call: elsewhere };
      const held = countHeld(quote, elsewhere.lines());
      if (tooCommon(held, elsewhere.lines().length))
        return {
          kind: 'weak',
          why: `it is on ${held} of ${elsewhere.lines().length} lines of \`${elsewhere.label}\``,
        };
      return { kind: 'found', call: elsewhere };
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
