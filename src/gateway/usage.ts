import { StringDecoder } from 'node:string_decoder';
import type { ProviderSpec } from './providers.js';
import { NO_USAGE, type Usage } from './types.js';

// Reads the usage out of a provider's answer while it streams past: SSE events are parsed line by line
// as they arrive (nothing is held back from the client), a JSON body is kept up to a cap and parsed
// at the end. Later figures replace earlier ones: streamed usage is cumulative in every provider.

/** A JSON answer larger than this is passed through without its usage read. */
const MAX_JSON_BYTES = 16 * 1024 * 1024;
/** An SSE line longer than this is skipped (no usage event is that long). */
const MAX_LINE_CHARS = 4 * 1024 * 1024;

export class UsageReader {
  private readonly decoder = new StringDecoder('utf8');
  private readonly sse: boolean;
  private line = '';
  private skipping = false;
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
    const text = this.decoder.write(chunk);
    let start = 0;
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', start)) {
      this.onLine(this.line + text.slice(start, i));
      this.line = '';
      start = i + 1;
    }
    const rest = text.slice(start);
    if (this.line.length + rest.length > MAX_LINE_CHARS) {
      this.skipping = true;
      this.line = '';
    } else this.line += rest;
  }

  /** The usage the answer reported (zeros when it reported none). */
  end(): { usage: Usage; reported: boolean } {
    if (this.sse) {
      if (this.line) this.onLine(this.line);
    } else if (this.json.length && this.jsonBytes <= MAX_JSON_BYTES) {
      this.apply(Buffer.concat(this.json).toString('utf8'));
    }
    return { usage: this.usage, reported: this.seen };
  }

  private onLine(raw: string): void {
    if (this.skipping) {
      this.skipping = false;
      return;
    }
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (!line.startsWith('data:')) return;
    const data = line.slice(5).trim();
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
