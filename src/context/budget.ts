import type { TokenCounter } from './tokens.js';
import type { PromptParts } from './types.js';

// Fits the prompt to `context.budget.truncate`. Order: said briefs are degraded to references (lowest
// priority first), then the triage report is cut at line boundaries keeping its head and tail, with a
// marker. Incident and permissions are never cut: if they alone overrun, the overrun is reported.
//
// Cost: the triage text is never tokenized as a whole more than once. Lines are counted lazily from
// both ends (only as far as the budget can reach); the middle is estimated from the counted lines'
// tokens per character when the text is large. Every candidate prompt is then measured exactly, so the
// result is never over the budget whatever the tokenizer does at line joins.

/** Lines longer than this are cut into pieces of this many characters for truncation purposes. */
export const MAX_UNIT_CHARS = 4096;
/** Triage text up to this size is counted exactly; above, the uncounted middle is extrapolated. */
export const EXACT_COUNT_CHARS = 256 * 1024;

export interface MarkerInfo {
  removedLines: number;
  removedTokens: number;
  /** True when removedTokens was extrapolated rather than counted. */
  estimated: boolean;
}

export interface FitInput {
  counter: TokenCounter;
  limit: number;
  /** Briefs that may be degraded to references, lowest priority first. */
  degradable: readonly string[];
  /** The triage report body, already escaped; '' when there is none. */
  triageText: string;
  /** Builds the prompt for a set of degraded briefs and a triage body. */
  assemble(degraded: ReadonlySet<string>, triageBody: string): PromptParts;
  /** The line put where triage lines were removed. */
  marker(info: MarkerInfo): string;
  exactCountChars?: number;
}

export interface FitResult {
  prompt: PromptParts;
  /** Tokens of system + user, each counted exactly (after the safety factor). */
  total: number;
  degraded: string[];
  triageBody: string;
  triage: { tokens: number; originalTokens: number; truncated: boolean } & MarkerInfo;
  /** Tokens over the limit that could not be cut (0 when within). */
  overBudgetBy: number;
}

/** Splits text into truncation units: whole lines (with their newline), long lines in pieces. */
export function splitUnits(text: string, maxChars = MAX_UNIT_CHARS): string[] {
  const units: string[] = [];
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl + 1;
    for (let at = start; at < end;) {
      let next = Math.min(end, at + maxChars);
      // Never split a surrogate pair.
      if (next < end && isHighSurrogate(text.charCodeAt(next - 1))) next -= 1;
      units.push(text.slice(at, next));
      at = next;
    }
    start = end;
  }
  return units;
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;

/** Per-unit raw token counts, computed on demand and cached. */
class UnitCounts {
  private readonly counts: Int32Array;
  countedChars = 0;
  countedTokens = 0;
  readonly totalChars: number;

  constructor(
    readonly units: string[],
    private readonly counter: TokenCounter,
  ) {
    this.counts = new Int32Array(units.length).fill(-1);
    this.totalChars = units.reduce((n, u) => n + u.length, 0);
  }

  at(i: number): number {
    let c = this.counts[i] ?? 0;
    if (c < 0) {
      const unit = this.units[i] ?? '';
      c = this.counter.raw(unit);
      this.counts[i] = c;
      this.countedChars += unit.length;
      this.countedTokens += c;
    }
    return c;
  }

  get allCounted(): boolean {
    return this.countedChars >= this.totalChars;
  }

  /** Raw tokens of every unit: exact when all were counted, else extrapolated for the rest. */
  estimateTotal(): { tokens: number; estimated: boolean } {
    if (this.allCounted) return { tokens: this.countedTokens, estimated: false };
    const perChar = this.countedChars > 0 ? this.countedTokens / this.countedChars : 1 / 3;
    const rest = Math.ceil((this.totalChars - this.countedChars) * perChar);
    return { tokens: this.countedTokens + rest, estimated: true };
  }
}

const totalOf = (counter: TokenCounter, p: PromptParts): number =>
  counter.count(p.system) + counter.count(p.user);

const countLines = (text: string): number => {
  if (text === '') return 0;
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n += 1;
  return text.endsWith('\n') ? n : n + 1;
};

export function fitToBudget(input: FitInput): FitResult {
  const { counter, limit } = input;
  const units = splitUnits(input.triageText);
  const counts = new UnitCounts(units, counter);
  const exactChars = input.exactCountChars ?? EXACT_COUNT_CHARS;

  // Count from the head: everything when small, else only until the triage alone is over the limit.
  let headSum = 0;
  for (let i = 0; i < units.length; i += 1) {
    headSum += counts.at(i);
    if (counts.totalChars > exactChars && counter.factor * headSum > limit) break;
  }
  const wholeFits = counts.allCounted && counter.factor * headSum <= limit;
  const original = counts.estimateTotal();
  const originalScaled = Math.ceil(original.tokens * counter.factor - 1e-9);

  const done = (
    degraded: Set<string>,
    prompt: PromptParts,
    total: number,
    body: string,
    info: MarkerInfo,
  ) => ({
    prompt,
    total,
    degraded: [...degraded],
    triageBody: body,
    triage: {
      tokens: counter.count(body),
      originalTokens: originalScaled,
      truncated: body !== input.triageText,
      ...info,
    },
    overBudgetBy: Math.max(0, total - limit),
  });
  const untouched: MarkerInfo = { removedLines: 0, removedTokens: 0, estimated: false };

  // 1. The whole triage report, degrading briefs one at a time while over.
  const degraded = new Set<string>();
  if (wholeFits) {
    const candidates = [undefined, ...input.degradable];
    for (const id of candidates) {
      if (id !== undefined) degraded.add(id);
      const prompt = input.assemble(degraded, input.triageText);
      const total = totalOf(counter, prompt);
      if (total <= limit) return done(degraded, prompt, total, input.triageText, untouched);
    }
  } else {
    for (const id of input.degradable) degraded.add(id);
  }

  // 2. Cut the triage report: head and tail lines around a marker, shrinking until the exact count fits.
  const widest = input.marker({ removedLines: 9_999_999, removedTokens: 99_999_999, estimated: true });
  const base = totalOf(counter, input.assemble(degraded, widest));
  let rawRoom = Math.floor((limit - base) / counter.factor);
  for (let attempt = 0; attempt < 40 && rawRoom > 0 && units.length > 0; attempt += 1) {
    const pick = pickHeadTail(counts, rawRoom);
    const head = units.slice(0, pick.head).join('');
    const tail = units.slice(units.length - pick.tail).join('');
    const middle = units.slice(pick.head, units.length - pick.tail).join('');
    const keptRaw = pick.headTokens + pick.tailTokens;
    const info: MarkerInfo = {
      removedLines: countLines(middle),
      removedTokens: Math.max(0, originalScaled - Math.ceil(keptRaw * counter.factor - 1e-9)),
      estimated: original.estimated,
    };
    const body = `${withNewline(head)}${input.marker(info)}\n${tail}`;
    const prompt = input.assemble(degraded, body);
    const total = totalOf(counter, prompt);
    if (total <= limit) return done(degraded, prompt, total, body, info);
    rawRoom -= Math.max(1, Math.ceil((total - limit) / counter.factor));
  }

  // 3. Nothing of the report fits: the marker alone. If even the marker does not fit, the report goes
  // entirely, so that any overrun left is the uncuttable part only (never our own marker).
  const info: MarkerInfo = {
    removedLines: countLines(input.triageText),
    removedTokens: originalScaled,
    estimated: original.estimated,
  };
  if (units.length > 0) {
    const body = input.marker(info);
    const prompt = input.assemble(degraded, body);
    const total = totalOf(counter, prompt);
    if (total <= limit) return done(degraded, prompt, total, body, info);
  }
  const prompt = input.assemble(degraded, '');
  return done(degraded, prompt, totalOf(counter, prompt), '', units.length > 0 ? info : untouched);
}

const withNewline = (text: string): string => (text === '' || text.endsWith('\n') ? text : `${text}\n`);

/** Head and tail units whose raw tokens sum to at most `room`: half each, then the head takes what is left. */
function pickHeadTail(counts: UnitCounts, room: number) {
  const n = counts.units.length;
  let head = 0;
  let headTokens = 0;
  while (head < n && headTokens + counts.at(head) <= room / 2) headTokens += counts.at(head++);
  let tail = 0;
  let tailTokens = 0;
  while (tail < n - head && headTokens + tailTokens + counts.at(n - 1 - tail) <= room) {
    tailTokens += counts.at(n - 1 - tail++);
  }
  while (head < n - tail && headTokens + tailTokens + counts.at(head) <= room)
    headTokens += counts.at(head++);
  return { head, tail, headTokens, tailTokens };
}
