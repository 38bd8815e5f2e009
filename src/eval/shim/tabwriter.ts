// Go's text/tabwriter (left-aligned, no flags), which kubectl describe writes through with
// minwidth 0, padding 2: cells are tab-terminated, a column is aligned over a block of consecutive
// lines that have a cell in it, and a line's last cell is never padded. Porting the algorithm, not
// approximating it, is what makes generated describe output line up like kubectl's.

interface Cell {
  text: string;
  width: number;
}

const runeWidth = (s: string) => [...s].length;

/** Formats tab-separated text; `flush` points (kubectl's w.Flush) start a new, independent segment. */
export function tabwrite(text: string, options: { minWidth?: number; padding?: number } = {}): string {
  const minWidth = options.minWidth ?? 0;
  const padding = options.padding ?? 2;
  const lines: Cell[][] = text
    .split('\n')
    .map((line) => line.split('\t').map((t) => ({ text: t, width: runeWidth(t) })));
  // A trailing newline leaves an empty last line that is not output.
  const trailing = text.endsWith('\n');
  if (trailing) lines.pop();
  const widths: number[] = [];
  let out = '';

  const writeLines = (line0: number, line1: number) => {
    for (let i = line0; i < line1; i++) {
      const line = lines[i] as Cell[];
      line.forEach((cell, j) => {
        out += cell.text;
        // Tab-terminated cells (all but the last) are padded to their column width.
        if (j < widths.length && j < line.length - 1)
          out += ' '.repeat(Math.max(0, (widths[j] ?? 0) - cell.width));
      });
      out += '\n';
    }
  };

  const format = (line0: number, line1: number): void => {
    const column = widths.length;
    for (let current = line0; current < line1; current++) {
      if (column >= (lines[current] as Cell[]).length - 1) continue;
      writeLines(line0, current);
      line0 = current;
      let width = minWidth;
      for (; current < line1; current++) {
        const line = lines[current] as Cell[];
        if (column >= line.length - 1) break;
        width = Math.max(width, (line[column] as Cell).width + padding);
      }
      widths.push(width);
      format(line0, current);
      widths.pop();
      line0 = current;
      current--;
    }
    writeLines(line0, line1);
  };

  format(0, lines.length);
  return trailing ? out : out.replace(/\n$/, '');
}

/** kubectl's PrefixWriter: indentation per level, written into one buffer, flushed in segments. */
export class PrefixWriter {
  private segments: string[] = [];
  private current = '';

  write(level: number, text: string): void {
    this.current += `${'  '.repeat(level)}${text}`;
  }

  /** Ends a tabwriter segment (kubectl flushes before the Events table). */
  flush(): void {
    this.segments.push(this.current);
    this.current = '';
  }

  toString(): string {
    return [...this.segments, this.current].map((s) => tabwrite(s)).join('');
  }
}
