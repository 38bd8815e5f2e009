import { describe, expect, it } from 'vitest';
import { HeadTailCapture, stripAnsi } from '../../../src/context/capture.js';

describe('stripAnsi', () => {
  it('removes colours, cursor moves, OSC titles and hyperlinks, and carriage-return progress', () => {
    const raw =
      '\u001b[1;31mERROR\u001b[0m pod\n' +
      '\u001b]8;;https://example.com\u001b\\link\u001b]8;;\u001b\\ text\n' +
      '\u001b[2K\u001b[1Gprogress 10%\rprogress 100%\r\n' +
      '\u001b]0;title\u0007done\u001b(B\u001b=\n';
    expect(stripAnsi(raw)).toBe('ERROR pod\nlink text\nprogress 100%\ndone\n');
  });

  it('stops an unterminated OSC at the end of its line instead of swallowing the rest', () => {
    expect(stripAnsi('a\u001b]0;never closed\nnext line\n')).toBe('a\nnext line\n');
  });

  it('keeps tabs, newlines and non-ASCII text', () => {
    expect(stripAnsi('a\tb\nünï 😀\n')).toBe('a\tb\nünï 😀\n');
  });
});

describe('HeadTailCapture', () => {
  const lines = (from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}\n`).join('');

  it('keeps everything under the cap', () => {
    const c = new HeadTailCapture(1024);
    c.push(Buffer.from(lines(1, 5)));
    expect(c.finish(() => 'GAP')).toEqual({
      text: lines(1, 5),
      bytes: lines(1, 5).length,
      lines: 5,
      droppedBytes: 0,
    });
  });

  it('keeps whole lines from the head and the tail around a gap line when over the cap', () => {
    const c = new HeadTailCapture(100);
    const all = lines(1, 1000);
    for (let i = 0; i < all.length; i += 7) c.push(Buffer.from(all.slice(i, i + 7)));
    const out = c.finish((dropped) => `GAP ${dropped}`);
    expect(out.bytes).toBe(all.length);
    const [head, tail] = out.text.split(/GAP \d+\n/);
    expect(head?.startsWith('line 1\nline 2\n')).toBe(true);
    expect(tail?.endsWith('line 1000\n')).toBe(true);
    expect(all.startsWith(head ?? 'x')).toBe(true);
    expect(all.endsWith(tail ?? 'x')).toBe(true);
    expect(out.text).toContain(`GAP ${out.droppedBytes}`);
    expect(out.droppedBytes).toBe(all.length - (head?.length ?? 0) - (tail?.length ?? 0));
    expect(Buffer.byteLength(out.text)).toBeLessThan(140);
  });

  it('counts the lines of the whole stream and of the dropped middle, however the chunks fall', () => {
    const all = `${lines(1, 260_092)}last line without newline`;
    const buf = Buffer.from(all);
    for (const size of [7, 4093, 65_536, buf.length]) {
      const c = new HeadTailCapture(2000);
      for (let i = 0; i < buf.length; i += size) c.push(buf.subarray(i, i + size));
      const out = c.finish((bytes, dropped) => `GAP ${dropped} lines ${bytes} bytes`);
      expect(out.lines).toBe(260_093);
      const [head = '', tail = ''] = out.text.split(/GAP \d+ lines \d+ bytes\n/);
      const keptLines = head.split('\n').length - 1 + tail.split('\n').length;
      expect(out.gap?.lines).toBe(260_093 - keptLines);
      expect(out.text.slice(out.gap?.at, (out.gap?.at ?? 0) + (out.gap?.length ?? 0))).toBe(
        `GAP ${out.gap?.lines} lines ${out.droppedBytes} bytes\n`,
      );
    }
  });

  it('bounds memory for a single huge chunk', () => {
    const c = new HeadTailCapture(64);
    c.push(Buffer.from(lines(1, 100_000)));
    const out = c.finish(() => 'GAP');
    expect(out.text.length).toBeLessThan(80);
    expect(out.text.endsWith('line 100000\n')).toBe(true);
  });
});

describe('HeadTailCapture memory', () => {
  it('keeps the tail bounded when a long stream arrives in many small chunks', () => {
    // 64 small chunks are less than the tail's half of the cap, so they get merged over and over.
    const c = new HeadTailCapture(16 * 1024);
    const chunk = Buffer.from('x'.repeat(99) + '\n');
    for (let i = 0; i < 50_000; i += 1) c.push(chunk);
    // 5 MB went through; the tail keeps the cap's half plus at most 64 small chunks.
    expect(c.retainedTailBytes).toBeLessThanOrEqual(8 * 1024 + 65 * chunk.length);
    const out = c.finish((dropped) => `GAP ${dropped}`);
    expect(out.bytes).toBe(50_000 * chunk.length);
    expect(out.text.endsWith(`${'x'.repeat(99)}\n`)).toBe(true);
    expect(Buffer.byteLength(out.text)).toBeLessThan(16 * 1024 + 100);
  });
});
