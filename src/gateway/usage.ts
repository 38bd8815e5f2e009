import type { ProviderSpec } from './providers.js';
import { NO_USAGE, type Usage } from './types.js';

// Reads what the gateway records of a provider's answer while it streams past: its usage, and whether
// it asks the agent to call a tool. Nothing is held back from the client, and the hot path does next
// to nothing: every provider says both at the two ends of a stream (Anthropic's message_start, then its
// message_delta with the output tokens and `stop_reason: tool_use`; OpenAI's response.completed or last
// chunk; Gemini's cumulative last chunks), so an SSE stream's first and last events are read and the
// middle is only passed on. Per chunk: one search for its last newline and a reference kept or dropped.
// A JSON body is kept up to a cap and parsed at the end. Later usage figures replace earlier ones.

/** A JSON answer larger than this is passed through without its usage read. */
const MAX_JSON_BYTES = 16 * 1024 * 1024;
/** An SSE line longer than this is skipped (no usage or tool event is that long). */
const MAX_LINE_BYTES = 4 * 1024 * 1024;
/** Bytes read at each end of a stream (the middle of a long one is skipped). */
const END_BYTES = 64 * 1024;

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
  /** SSE: the chunks kept, oldest first, by their number in the stream. */
  private kept: { n: number; buf: Buffer }[] = [];
  private keptBytes = 0;
  private count = 0;
  /** SSE: the chunk the unfinished line starts in, and where in it. */
  private lineStart = 0;
  private lineOffset = 0;
  /** SSE: bytes of the unfinished line so far. */
  private lineBytes = 0;
  /** SSE: the first kept chunk begins a line (true until a chunk is dropped mid-line). */
  private frontAtLine = true;
  private headRead = false;
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
    if (chunk.length === 0) return;
    const n = this.count++;
    this.kept.push({ n, buf: chunk });
    this.keptBytes += chunk.length;
    const last = chunk.lastIndexOf(NL);
    if (last === -1) {
      this.lineBytes += chunk.length;
      // A line longer than any event worth reading is let go (its start can be dropped below).
      if (this.lineBytes > MAX_LINE_BYTES) this.lineStart = n + 1;
    } else {
      const first = chunk.indexOf(NL);
      // A line too long to stay whole in the last END_BYTES (OpenAI's response.completed carries the
      // whole answer) is read as it ends.
      const ended = this.lineBytes + first;
      if (ended >= END_BYTES / 2 && ended <= MAX_LINE_BYTES && this.lineStart < n) {
        const from = this.kept.findIndex((k) => k.n === this.lineStart);
        if (from !== -1) {
          const parts = this.kept.slice(from).map((k) => k.buf);
          parts[0] = parts[0]!.subarray(this.lineOffset);
          parts[parts.length - 1] = chunk.subarray(0, first);
          this.onLine(Buffer.concat(parts));
        }
      }
      this.lineStart = last === chunk.length - 1 ? n + 1 : n;
      this.lineOffset = last === chunk.length - 1 ? 0 : last + 1;
      this.lineBytes = chunk.length - last - 1;
    }
    // The middle goes: keep the last END_BYTES and every chunk of the unfinished line. The first
    // END_BYTES are read once, before anything is dropped.
    while (this.kept.length > 1) {
      const front = this.kept[0]!;
      if (front.n >= this.lineStart || this.keptBytes - front.buf.length < END_BYTES) break;
      if (!this.headRead) {
        this.headRead = true;
        this.readLines(false);
      }
      this.kept.shift();
      this.keptBytes -= front.buf.length;
      this.frontAtLine = front.buf[front.buf.length - 1] === NL;
    }
  }

  /** What the answer said (zeros when it reported no usage). */
  end(): AnswerRead {
    if (this.sse) this.readLines(true);
    else if (this.json.length && this.jsonBytes <= MAX_JSON_BYTES) {
      this.apply(Buffer.concat(this.json).toString('utf8'));
    }
    return { usage: this.usage, reported: this.seen, toolUse: this.toolUse };
  }

  /** The kept lines, whole ones only (and the unfinished last one at the end of the stream). */
  private readLines(atEnd: boolean): void {
    if (this.kept.length === 0) return;
    const text = Buffer.concat(this.kept.map((k) => k.buf));
    let start = 0;
    if (!this.frontAtLine) {
      const nl = text.indexOf(NL);
      if (nl === -1) return;
      start = nl + 1;
    }
    for (;;) {
      const nl = text.indexOf(NL, start);
      if (nl === -1) {
        if (atEnd && start < text.length && text.length - start <= MAX_LINE_BYTES)
          this.onLine(text.subarray(start));
        return;
      }
      if (nl - start <= MAX_LINE_BYTES) this.onLine(text.subarray(start, nl));
      start = nl + 1;
    }
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
