import type { ProviderSpec } from './providers.js';
import { NO_USAGE, type Usage } from './types.js';

// Reads what the gateway records of a provider's answer while it streams past: its usage, and whether
// it asks the agent to call a tool. Nothing is held back from the client. An SSE stream is searched as
// bytes for the few marks that such an event carries (`usage`, `tool_use`, `function_call`, …); only the
// lines around a hit are decoded and parsed, and a chunk without any (nearly every text delta) costs a
// handful of byte searches. A JSON body is kept up to a cap and parsed at the end. Later usage figures
// replace earlier ones: streamed usage is cumulative in every provider.

/** A JSON answer larger than this is passed through without its usage read. */
const MAX_JSON_BYTES = 16 * 1024 * 1024;
/** An SSE line longer than this is skipped (no usage or tool event is that long). */
const MAX_LINE_BYTES = 4 * 1024 * 1024;

/**
 * Bytes every event worth parsing contains: every provider's usage field (`usage`, `usageMetadata`),
 * and every provider's tool call (`tool_use`, `tool_calls`, `function_call`, `custom_tool_call`,
 * `local_shell_call`, `functionCall`).
 */
const MARKS = ['sage', 'tool_', 'function_call', 'functionCall', 'shell_call'].map((m) => Buffer.from(m));
const DATA = Buffer.from('data:');
const NL = 10;

export interface AnswerRead {
  usage: Usage;
  /** The answer reported usage (else `usage` is zeros). */
  reported: boolean;
  /** The answer asks the agent to call a tool. */
  toolUse: boolean;
}

export class UsageReader {
  private readonly sse: boolean;
  /** The unfinished last line of the stream so far (SSE). */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private json: Buffer[] = [];
  private jsonBytes = 0;
  private usage: Usage = { ...NO_USAGE };
  private seen = false;
  private toolUse = false;

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
    let start = 0;
    if (this.partialBytes > 0) {
      // The line the last chunk left unfinished ends in this one (or goes on past it).
      const end = chunk.indexOf(NL);
      if (end === -1) {
        this.keep(chunk);
        return;
      }
      this.partial.push(chunk.subarray(0, end));
      const line = Buffer.concat(this.partial);
      this.partial = [];
      this.partialBytes = 0;
      this.onLine(line);
      start = end + 1;
    }
    const last = chunk.lastIndexOf(NL);
    if (last >= start) this.scan(chunk.subarray(start, last));
    const rest = last >= start ? last + 1 : start;
    if (rest < chunk.length) this.keep(chunk.subarray(rest));
  }

  /** What the answer said (zeros when it reported no usage). */
  end(): AnswerRead {
    if (this.sse) {
      if (this.partialBytes > 0) this.onLine(Buffer.concat(this.partial));
    } else if (this.json.length && this.jsonBytes <= MAX_JSON_BYTES) {
      this.apply(Buffer.concat(this.json).toString('utf8'));
    }
    return { usage: this.usage, reported: this.seen, toolUse: this.toolUse };
  }

  /** Whole lines: only those holding a mark are looked at, each once, in order. */
  private scan(lines: Buffer): void {
    const next = MARKS.map((m) => lines.indexOf(m));
    let from = 0;
    for (;;) {
      let hit = -1;
      for (let k = 0; k < MARKS.length; k++) {
        if (next[k]! !== -1 && next[k]! < from) next[k] = lines.indexOf(MARKS[k]!, from);
        if (next[k]! !== -1 && (hit === -1 || next[k]! < hit)) hit = next[k]!;
      }
      if (hit === -1) return;
      const lineStart = lines.lastIndexOf(NL, hit) + 1;
      const nl = lines.indexOf(NL, hit);
      const lineEnd = nl === -1 ? lines.length : nl;
      this.onLine(lines.subarray(lineStart, lineEnd));
      from = lineEnd + 1;
      if (from >= lines.length) return;
    }
  }

  /** Keeps the unfinished last line; one longer than any event worth reading is dropped instead. */
  private keep(piece: Buffer): void {
    this.partialBytes += piece.length;
    if (this.partialBytes > MAX_LINE_BYTES) {
      this.partial = [];
      this.partialBytes = 0;
      return;
    }
    this.partial.push(Buffer.from(piece));
  }

  private onLine(line: Buffer): void {
    if (line.length < DATA.length || line.compare(DATA, 0, DATA.length, 0, DATA.length) !== 0) return;
    if (!MARKS.some((m) => line.indexOf(m) !== -1)) return;
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
    if (!this.toolUse && this.provider.asksTool(value)) this.toolUse = true;
    const found = this.provider.usageOf(value);
    if (!found) return;
    this.seen = true;
    this.usage = { ...this.usage, ...found };
  }
}
