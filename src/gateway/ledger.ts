import { readFile } from 'node:fs/promises';
import { errorMessage } from '../util/errors.js';
import { writeFileAtomic } from '../util/fs.js';

// Model spend across runs per UTC day, for `budget.daily_usd`. With a file the day's spend outlives the
// daemon: it is read back at start (a file from an earlier UTC day counts as nothing spent) and written
// again, atomically, after each call that cost something, so a restart mid-day keeps the cap. Calls under
// way hold their estimated spend here too (never written), so that parallel calls see each other.

interface Stored {
  /** UTC day, `YYYY-MM-DD`. */
  day: string;
  usd: number;
}

const dayOf = (at: Date): string => at.toISOString().slice(0, 10);

export interface LedgerOptions {
  /** Where the day's spend is kept; without one it lives in memory only. */
  file?: string;
  /** A spend file that could not be read or written (the ledger goes on in memory). */
  onProblem?: (message: string) => void;
}

export class DailyLedger {
  private day = '';
  private usd = 0;
  /** Estimated spend of calls under way, across runs (memory only: a call in flight ends with the daemon). */
  private heldUsd = 0;
  private readonly loading: Promise<void>;
  private saving: Promise<void> = Promise.resolve();
  private dirty = false;

  constructor(
    private readonly now: () => Date,
    private readonly options: LedgerOptions = {},
  ) {
    this.loading = options.file ? this.load(options.file) : Promise.resolve();
  }

  /** The day's spend is kept on disk: an earlier daemon's calls are in it already. */
  get persisted(): boolean {
    return this.options.file !== undefined;
  }

  /** Resolves once the spend file (if any) was read: ask before the first refusal. */
  ready(): Promise<void> {
    return this.loading;
  }

  private async load(file: string): Promise<void> {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        this.options.onProblem?.(`could not read ${file}: ${errorMessage(err)}; the day's spend starts at 0`);
      return;
    }
    const stored = parseStored(text);
    if (!stored) {
      this.options.onProblem?.(`${file} is not a day's spend ({"day","usd"}); the day's spend starts at 0`);
      return;
    }
    // Spend counted in memory before the file was read (none in practice: calls wait for it) adds up.
    this.roll();
    if (stored.day === this.day) this.usd += stored.usd;
  }

  private roll(): void {
    const day = dayOf(this.now());
    if (day !== this.day) {
      this.day = day;
      this.usd = 0;
    }
  }

  add(usd: number): void {
    this.roll();
    this.usd += usd;
    if (this.options.file) this.save(this.options.file);
  }

  spent(): number {
    this.roll();
    return this.usd;
  }

  /** Holds (or, negative, releases) a call's estimated spend while it is under way. */
  hold(usd: number): void {
    // To the nano-dollar: holds given back add up to exactly nothing.
    this.heldUsd = Math.max(0, Math.round((this.heldUsd + usd) * 1e9) / 1e9);
  }

  /** What calls under way may still spend today, by their estimates. */
  held(): number {
    return this.heldUsd;
  }

  /** Resolves once every spend added so far is on disk. */
  async flush(): Promise<void> {
    await this.loading;
    while (this.dirty) await this.saving;
    await this.saving;
  }

  /** One write at a time; spend added while one is under way is written by the next. */
  private save(file: string): void {
    if (this.dirty) return;
    this.dirty = true;
    this.saving = this.saving
      .then(() => this.loading)
      .then(async () => {
        this.dirty = false;
        const stored: Stored = { day: this.day, usd: this.usd };
        await writeFileAtomic(file, `${JSON.stringify(stored)}\n`, 0o600);
      })
      .catch((err: unknown) => {
        this.options.onProblem?.(`could not write ${file}: ${errorMessage(err)}`);
      });
  }
}

function parseStored(text: string): Stored | undefined {
  try {
    const value = JSON.parse(text) as Partial<Stored> | null;
    if (
      value &&
      typeof value.day === 'string' &&
      /^\d{4}-\d{2}-\d{2}$/.test(value.day) &&
      typeof value.usd === 'number' &&
      Number.isFinite(value.usd) &&
      value.usd >= 0
    )
      return { day: value.day, usd: value.usd };
  } catch {
    // not JSON: reported by the caller
  }
  return undefined;
}
