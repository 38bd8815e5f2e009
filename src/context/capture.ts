// Bounded capture of a stream for the prompt: the first half of the cap from the head, the last half
// from the tail, the middle dropped (and counted: bytes and lines of everything that went by, so the
// prompt can say how much of the whole output it holds). Text is cut at line boundaries where the gap
// is and cleaned of terminal escape codes.

/** Removes ANSI/VT escape sequences (CSI, OSC, DCS/SOS/PM/APC strings, two-byte ESC) and stray control characters. */
export function stripAnsi(text: string): string {
  /* eslint-disable no-control-regex -- matching control characters is the point here */
  return (
    text
      // OSC … BEL or ST; DCS/SOS/PM/APC … ST (7-bit and 8-bit introducers).
      // An unterminated string ends at the line's end, so it never swallows the rest of the output.
      .replace(/(?:\u001b\]|\u009d)[^\u0007\u001b\u009c\n]*(?:\u0007|\u001b\\|\u009c)?/g, '')
      .replace(/(?:\u001b[PX^_]|[\u0090\u0098\u009e\u009f])[^\u001b\u009c\n]*(?:\u001b\\|\u009c)?/g, '')
      // CSI: ESC [ or 0x9b, parameters, intermediates, final byte.
      .replace(/(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]/g, '')
      // Other ESC sequences (charset selection, keypad modes, …).
      .replace(/\u001b[ -/]*[0-~]/g, '')
      .replace(/\u001b/g, '')
      // A carriage return overwrites the line on a terminal (progress bars): keep what was shown last.
      .replace(/\r\n/g, '\n')
      .replace(/[^\n\r]*\r(?=[^\n\r])/g, '')
      // Other C0/C1 controls except tab and newline.
      .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '')
  );
  /* eslint-enable no-control-regex */
}

export interface CapturedText {
  /** Cleaned text for the prompt (with a gap line where bytes were dropped). */
  text: string;
  /** Bytes received in total. */
  bytes: number;
  /** Lines received in total (a last line without a newline counts). */
  lines: number;
  /** Bytes dropped from the middle because of the cap (0 when everything was kept). */
  droppedBytes: number;
  /** Where the gap line is in `text` and how many lines it stands for (absent when nothing was dropped). */
  gap?: { at: number; length: number; lines: number };
}

/** Newlines in a buffer (a linear scan). */
export function countNewlines(buf: Buffer): number {
  let n = 0;
  for (let i = buf.indexOf(NL); i >= 0; i = buf.indexOf(NL, i + 1)) n += 1;
  return n;
}

const NL = 0x0a;

/** Collects chunks keeping at most `capBytes`: head and tail halves. */
export class HeadTailCapture {
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private newlines = 0;
  private lastByte = -1;
  bytes = 0;

  constructor(private readonly capBytes: number) {}

  push(chunk: Buffer): void {
    this.bytes += chunk.length;
    this.newlines += countNewlines(chunk);
    if (chunk.length > 0) this.lastByte = chunk[chunk.length - 1] ?? -1;
    const headRoom = Math.floor(this.capBytes / 2) - this.headBytes;
    let rest = chunk;
    if (headRoom > 0) {
      const take = rest.subarray(0, headRoom);
      this.head.push(take);
      this.headBytes += take.length;
      rest = rest.subarray(take.length);
    }
    if (rest.length === 0) return;
    const tailCap = this.capBytes - Math.floor(this.capBytes / 2);
    this.tail.push(rest.length > tailCap ? rest.subarray(rest.length - tailCap) : rest);
    this.tailBytes += Math.min(rest.length, tailCap);
    // Drop whole chunks from the front of the tail while the rest still covers the cap.
    while (this.tail.length > 1 && this.tailBytes - (this.tail[0]?.length ?? 0) >= tailCap) {
      this.tailBytes -= this.tail.shift()?.length ?? 0;
    }
    if (this.tail.length > 64) {
      // Merge small chunks into one copy of at most the cap (a copy, so the dropped bytes are freed).
      const joined = Buffer.concat(this.tail);
      const kept = Buffer.from(joined.subarray(Math.max(0, joined.length - tailCap)));
      this.tail = [kept];
      this.tailBytes = kept.length;
    }
  }

  /** Bytes held in memory for the tail (bounded by the cap plus one chunk's worth of small chunks). */
  get retainedTailBytes(): number {
    return this.tail.reduce((n, b) => n + b.length, 0);
  }

  /** Lines received so far (a last line without a newline counts). */
  get lines(): number {
    return this.newlines + (this.bytes > 0 && this.lastByte !== NL ? 1 : 0);
  }

  /** The kept text; `gapLine(droppedBytes, droppedLines)` is inserted where the middle was dropped. */
  finish(gapLine: (droppedBytes: number, droppedLines: number) => string): CapturedText {
    const head = Buffer.concat(this.head);
    let tail = Buffer.concat(this.tail);
    const tailCap = this.capBytes - Math.floor(this.capBytes / 2);
    if (tail.length > tailCap) tail = tail.subarray(tail.length - tailCap);
    const dropped = this.bytes - head.length - tail.length;
    const lines = this.lines;
    if (dropped <= 0)
      return {
        text: stripAnsi(Buffer.concat([head, tail]).toString('utf8')),
        bytes: this.bytes,
        lines,
        droppedBytes: 0,
      };
    // Cut at line boundaries around the gap: the head's last partial line and the tail's first one go.
    const headEnd = head.lastIndexOf(NL);
    const keptHead = headEnd >= 0 ? head.subarray(0, headEnd + 1) : Buffer.alloc(0);
    const tailStart = tail.indexOf(NL);
    const keptTail = tailStart >= 0 ? tail.subarray(tailStart + 1) : Buffer.alloc(0);
    const droppedBytes = this.bytes - keptHead.length - keptTail.length;
    // The dropped part ends with the tail's first newline (or runs to the end when the tail has none).
    const keptTailLines = countNewlines(keptTail) + (keptTail.length > 0 && this.lastByte !== NL ? 1 : 0);
    const droppedLines = lines - countNewlines(keptHead) - keptTailLines;
    const headText = stripAnsi(keptHead.toString('utf8'));
    const gap = `${gapLine(droppedBytes, droppedLines)}\n`;
    const text = `${headText}${gap}${stripAnsi(keptTail.toString('utf8'))}`;
    return {
      text,
      bytes: this.bytes,
      lines,
      droppedBytes,
      gap: { at: headText.length, length: gap.length, lines: droppedLines },
    };
  }
}
