import type { TokenCounter } from './tokens.js';
import type { PromptParts } from './types.js';

// Fits the prompt to `context.budget.truncate`. Order: said briefs are degraded to references (lowest
// priority first), then the triage report is cut at line boundaries keeping its head and tail, with a
// marker. Incident and permissions are never cut: if they alone overrun, the overrun is reported.
//
// Cost: the triage text is never tokenized as a whole more than once. Lines are counted lazily from
// both ends, in batches (only as far as the budget can reach); the middle is estimated from the
// counted lines' tokens per character when the text is large. Every candidate prompt is then measured
// exactly, so the result is never over the budget whatever the tokenizer does at line joins. Counting
// is asynchronous (a worker thread for o200k), so fitting never blocks the event loop.

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

/**
 * What the bounded capture of the triage output dropped before the budget saw it: the line standing
 * for it in `triageText` (offset and length) and the dropped lines and bytes. Marker numbers and
 * `originalTokens` then describe everything the script printed, not only the capture.
 */
export interface OmittedOutput {
  at: number;
  length: number;
  lines: number;
  bytes: number;
}

export interface FitInput {
  counter: TokenCounter;
  limit: number;
  /** Briefs that may be degraded to references, lowest priority first. */
  degradable: readonly string[];
  /** The triage report body, already escaped; '' when there is none. */
  triageText: string;
  /** Output dropped by the capture (absent when the capture kept everything). */
  omitted?: OmittedOutput;
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

/** Units counted per request to the counter (and at most this many characters). */
const BATCH_UNITS = 512;
const BATCH_CHARS = 256 * 1024;

/**
 * Per-unit raw token counts, counted on demand in batches and cached. Units that make up the capture's
 * gap line are ours, not the script's: they are left out of the original-size estimate.
 */
class UnitCounts {
  private readonly counts: Int32Array;
  private readonly gap: ReadonlySet<number>;
  private headDone = 0;
  private headSum = 0;
  private tailDone = 0;
  private tailSum = 0;
  private counted = 0;
  private contentChars = 0;
  private countedChars = 0;
  private countedBytes = 0;
  private countedTokens = 0;
  readonly totalChars: number;

  constructor(
    readonly units: string[],
    private readonly counter: TokenCounter,
    gap: ReadonlySet<number>,
  ) {
    this.counts = new Int32Array(units.length).fill(-1);
    this.gap = gap;
    this.totalChars = units.reduce((n, u) => n + u.length, 0);
    units.forEach((u, i) => {
      if (!gap.has(i)) this.contentChars += u.length;
    });
  }

  /** A counted unit's raw tokens (callers count first with headUntil/tailUntil/ensure). */
  at(i: number): number {
    const c = this.counts[i] ?? -1;
    if (c < 0) throw new Error(`unit ${i} was read before it was counted`);
    return c;
  }

  get allCounted(): boolean {
    return this.counted === this.units.length;
  }

  /** Counts the given units (those not counted yet) in one request. */
  async ensure(indices: readonly number[]): Promise<void> {
    const todo = indices.filter((i) => (this.counts[i] ?? 0) < 0);
    if (todo.length === 0) return;
    const raw = await this.counter.rawMany(todo.map((i) => this.units[i] ?? ''));
    todo.forEach((i, k) => {
      const c = raw[k] ?? 0;
      this.counts[i] = c;
      this.counted += 1;
      if (this.gap.has(i)) return;
      const unit = this.units[i] ?? '';
      this.countedChars += unit.length;
      this.countedBytes += Buffer.byteLength(unit);
      this.countedTokens += c;
    });
  }

  /** Counts units from the head until their sum exceeds `rawLimit` (or all are counted); returns that sum. */
  async headUntil(rawLimit: number): Promise<number> {
    const n = this.units.length;
    while (this.headDone < n && this.headSum <= rawLimit) {
      const batch = this.batch(this.headDone, 1);
      await this.ensure(batch);
      for (const i of batch) {
        this.headSum += this.at(i);
        this.headDone = i + 1;
        if (this.headSum > rawLimit) break;
      }
    }
    return this.headSum;
  }

  /** The same from the tail. */
  async tailUntil(rawLimit: number): Promise<void> {
    const n = this.units.length;
    while (this.tailDone < n && this.tailSum <= rawLimit) {
      const batch = this.batch(n - 1 - this.tailDone, -1);
      await this.ensure(batch);
      for (const i of batch) {
        this.tailSum += this.at(i);
        this.tailDone = n - i;
        if (this.tailSum > rawLimit) break;
      }
    }
  }

  private batch(from: number, step: 1 | -1): number[] {
    const out: number[] = [];
    let chars = 0;
    for (let i = from; i >= 0 && i < this.units.length && out.length < BATCH_UNITS; i += step) {
      out.push(i);
      chars += this.units[i]?.length ?? 0;
      if (chars >= BATCH_CHARS) break;
    }
    return out;
  }

  /**
   * Raw tokens of everything the script printed: exact when every unit was counted and nothing was
   * dropped by the capture, else extrapolated from the counted units' tokens per character (the rest
   * of the capture) and per byte (the dropped output).
   */
  estimateOriginal(omitted: OmittedOutput | undefined): { tokens: number; estimated: boolean } {
    const contentCounted = this.countedChars >= this.contentChars;
    if (contentCounted && !omitted) return { tokens: this.countedTokens, estimated: false };
    const perChar = this.countedChars > 0 ? this.countedTokens / this.countedChars : 1 / 3;
    const perByte = this.countedBytes > 0 ? this.countedTokens / this.countedBytes : 1 / 3;
    const rest = Math.ceil((this.contentChars - this.countedChars) * perChar);
    const dropped = omitted ? Math.ceil(omitted.bytes * perByte) : 0;
    return { tokens: this.countedTokens + rest + dropped, estimated: true };
  }
}

async function totalOf(counter: TokenCounter, p: PromptParts): Promise<number> {
  const [system = 0, user = 0] = await counter.rawMany([p.system, p.user]);
  return counter.scale(system) + counter.scale(user);
}

const countLines = (text: string): number => {
  if (text === '') return 0;
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n += 1;
  return text.endsWith('\n') ? n : n + 1;
};

/** Indices of the units covering text[at, at + length). */
function unitsIn(units: readonly string[], at: number, length: number): Set<number> {
  const out = new Set<number>();
  let pos = 0;
  units.forEach((u, i) => {
    if (pos < at + length && pos + u.length > at) out.add(i);
    pos += u.length;
  });
  return out;
}

export async function fitToBudget(input: FitInput): Promise<FitResult> {
  const { counter, limit, omitted } = input;
  const units = splitUnits(input.triageText);
  const gap = omitted ? unitsIn(units, omitted.at, omitted.length) : new Set<number>();
  const counts = new UnitCounts(units, counter, gap);
  const exactChars = input.exactCountChars ?? EXACT_COUNT_CHARS;
  // Lines of the gap text itself, replaced by the lines it stands for.
  const gapLines = omitted ? countLines(input.triageText.slice(omitted.at, omitted.at + omitted.length)) : 0;

  // Count from the head: everything when small, else only until the triage alone is over the limit.
  const headSum = await counts.headUntil(
    counts.totalChars > exactChars ? limit / counter.factor : Number.POSITIVE_INFINITY,
  );
  const wholeFits = counts.allCounted && counter.factor * headSum <= limit;
  if (omitted) await counts.ensure([...gap]);
  const original = counts.estimateOriginal(omitted);
  const f: Fitting = {
    input,
    units,
    gap,
    counts,
    droppedLines: omitted ? omitted.lines - gapLines : 0,
    originalScaled: counter.scale(original.tokens),
    estimated: original.estimated,
    degraded: new Set<string>(),
  };
  // 1. The whole triage report, degrading briefs one at a time while over.
  if (wholeFits) {
    const whole = await fitWhole(f);
    if (whole) return whole;
  } else {
    for (const id of input.degradable) f.degraded.add(id);
  }
  // 2. Cut the triage report around a marker; 3. else the marker alone, or no report.
  return (await fitCut(f)) ?? fitWithoutReport(f);
}

/** What the steps of fitting share: the triage text's units, their counts, and what is degraded. */
interface Fitting {
  input: FitInput;
  units: string[];
  /** Units holding the bounded capture's own gap line. */
  gap: Set<number>;
  counts: UnitCounts;
  /** Lines the capture dropped beyond the gap line itself. */
  droppedLines: number;
  originalScaled: number;
  estimated: boolean;
  degraded: Set<string>;
}

const UNTOUCHED: MarkerInfo = { removedLines: 0, removedTokens: 0, estimated: false };

/** The result for `prompt` with `body` as the triage report. */
async function fitted(
  f: Fitting,
  prompt: PromptParts,
  total: number,
  body: string,
  info: MarkerInfo,
): Promise<FitResult> {
  const { counter, limit, omitted, triageText } = f.input;
  return {
    prompt,
    total,
    degraded: [...f.degraded],
    triageBody: body,
    triage: {
      tokens: await counter.count(body),
      originalTokens: f.originalScaled,
      truncated: body !== triageText || omitted !== undefined,
      ...info,
    },
    overBudgetBy: Math.max(0, total - limit),
  };
}

/** Step 1: the whole triage report, degrading one item more each time the prompt is over. */
async function fitWhole(f: Fitting): Promise<FitResult | undefined> {
  const { input } = f;
  for (const id of [undefined, ...input.degradable]) {
    if (id !== undefined) f.degraded.add(id);
    const prompt = input.assemble(f.degraded, input.triageText);
    const total = await totalOf(input.counter, prompt);
    if (total <= input.limit) return fitted(f, prompt, total, input.triageText, UNTOUCHED);
  }
  return undefined;
}

/** Step 2: head and tail lines around a marker, shrinking until the exact count fits. */
async function fitCut(f: Fitting): Promise<FitResult | undefined> {
  const { input, units, counts, gap } = f;
  const { counter, limit, omitted } = input;
  const widest = input.marker({ removedLines: 9_999_999, removedTokens: 99_999_999, estimated: true });
  const base = await totalOf(counter, input.assemble(f.degraded, widest));
  let rawRoom = Math.floor((limit - base) / counter.factor);
  for (let attempt = 0; attempt < 40 && rawRoom > 0 && units.length > 0; attempt += 1) {
    await counts.headUntil(rawRoom);
    await counts.tailUntil(rawRoom);
    const pick = pickHeadTail(counts, rawRoom);
    const head = units.slice(0, pick.head).join('');
    const tail = units.slice(units.length - pick.tail).join('');
    const middle = units.slice(pick.head, units.length - pick.tail).join('');
    const gapRemoved =
      omitted !== undefined && [...gap].every((i) => i >= pick.head && i < units.length - pick.tail);
    const keptRaw = pick.headTokens + pick.tailTokens;
    const info: MarkerInfo = {
      removedLines: countLines(middle) + (gapRemoved ? f.droppedLines : 0),
      removedTokens: Math.max(0, f.originalScaled - counter.scale(keptRaw)),
      estimated: f.estimated,
    };
    const body = `${withNewline(head)}${input.marker(info)}\n${tail}`;
    const prompt = input.assemble(f.degraded, body);
    const total = await totalOf(counter, prompt);
    if (total <= limit) return fitted(f, prompt, total, body, info);
    rawRoom -= Math.max(1, Math.ceil((total - limit) / counter.factor));
  }
  return undefined;
}

/**
 * Step 3: nothing of the report fits: the marker alone. If even the marker does not fit, the report goes
 * entirely, so that any overrun left is the uncuttable part only (never our own marker).
 */
async function fitWithoutReport(f: Fitting): Promise<FitResult> {
  const { input, units } = f;
  const info: MarkerInfo = {
    removedLines: countLines(input.triageText) + f.droppedLines,
    removedTokens: f.originalScaled,
    estimated: f.estimated,
  };
  if (units.length > 0) {
    const body = input.marker(info);
    const prompt = input.assemble(f.degraded, body);
    const total = await totalOf(input.counter, prompt);
    if (total <= input.limit) return fitted(f, prompt, total, body, info);
  }
  const prompt = input.assemble(f.degraded, '');
  return fitted(f, prompt, await totalOf(input.counter, prompt), '', units.length > 0 ? info : UNTOUCHED);
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
