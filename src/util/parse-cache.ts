// Memoised parsing of small configuration files that every run reads (boot.yml, a persona's
// helpers.yaml, the kubectl guard's sources): the file is still read each time, so an edit takes
// effect on the next run, but the same text is parsed once. Keyed by file and full text, so the
// result is exactly what parsing would return; failures are not cached (they throw every time).

/** A bounded cache of parse results by (file, text); the oldest entry goes first when full. */
export class ParseCache<T> {
  private readonly entries = new Map<string, T>();

  constructor(private readonly maxEntries = 32) {}

  /** The cached result for `text` of `file`, or `parse()`'s (cached when it returns). */
  get(file: string, text: string, parse: () => T): T {
    const key = `${file}\0${text}`;
    const hit = this.entries.get(key);
    if (hit !== undefined) return hit;
    const value = parse();
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, value);
    return value;
  }
}
