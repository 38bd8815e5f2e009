import type { ProviderSpec } from './providers.js';
import { NO_USAGE, type Usage } from './types.js';

// Reads the usage out of a provider's answer while it streams past: SSE lines are found as they arrive
// and only those that carry usage are parsed (nothing is held back from the client), a JSON body is kept up to a cap and parsed
// at the end. Later figures replace earlier ones: streamed usage is cumulative in every provider.

/** A JSON answer larger than this is passed through without its usage read. */
const MAX_JSON_BYTES = 16 * 1024 * 1024;
/** An SSE line longer than this is skipped (no usage event is that long). */
const MAX_LINE_BYTES = 4 * 1024 * 1024;

/** Every provider's usage field name contains this; lines without it are never decoded. */
const USAGE_MARK = Buffer.from('sage');
const DATA = Buffer.from('data:');

export class UsageReader {
  private readonly sse: boolean;
  /** The unfinished last line of the stream so far (SSE). */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private json: Buffer[] = [];
  private jsonBytes = 0;
  private usage: Usage = { ...NO_USAGE };
  private seen = false;

  constructor(
    private readonly provider: ProviderSpec,
    contentType: string | undefined,
  ) {
    this.sse = (contentType ?? '').includes('text/event-stream');
  }

  push(chunk: Buffer): void {
    if (!this.sse) {
      this.jsonBytes += chunk.length;
      if (this.jsonBytes <= MAX_JSON_BYTES) this.json.push(chunk);
      else this.json = [];
      return;
    }
    // Lines are found and filtered as bytes: only a `data:` line that mentions usage is decoded and parsed.
    let start = 0;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, i);
      if (this.partialBytes > 0) {
        this.partial.push(piece);
        this.onLine(Buffer.concat(this.partial));
        this.partial = [];
        this.partialBytes = 0;
      } else this.onLine(piece);
      start = i + 1;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.partialBytes += rest.length;
      // A line longer than any usage event is dropped rather than kept growing.
      if (this.partialBytes > MAX_LINE_BYTES) {
        this.partial = [];
        this.partialBytes = 0;
      } else this.partial.push(Buffer.from(rest));
    }
  }

  /** The usage the answer reported (zeros when it reported none). */
  end(): { usage: Usage; reported: boolean } {
    if (this.sse) {
      if (this.partialBytes > 0) this.onLine(Buffer.concat(this.partial));
    } else if (this.json.length && this.jsonBytes <= MAX_JSON_BYTES) {
      this.apply(Buffer.concat(this.json).toString('utf8'));
    }
    return { usage: this.usage, reported: this.seen };
  }

  private onLine(line: Buffer): void {
    if (line.length < DATA.length || line.compare(DATA, 0, DATA.length, 0, DATA.length) !== 0) return;
    if (line.indexOf(USAGE_MARK) === -1) return;
    const data = line.subarray(DATA.length).toString('utf8').trim();
    if (data && data !== '[DONE]') this.apply(data);
  }

  private apply(text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return;
    }
    const found = this.provider.usageOf(value);
    if (!found) return;
    this.seen = true;
    this.usage = { ...this.usage, ...found };
  }
}
