// Shared by the benchmarks: percentiles and the printed table.

/** The p-th percentile of `values` (nearest rank), rounded; 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[rank] as number);
}

/** Prints a titled table: one row per [measure, result, ratio to the baseline]. */
export function printTable(title: string, rows: readonly (readonly string[])[]): void {
  const header = ['measure', 'result', 'ratio'];
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  const line = (r: readonly string[]) => `| ${widths.map((w, c) => (r[c] ?? '').padEnd(w)).join(' | ')} |`;
  process.stdout.write(`\n${title}\n${line(header)}\n| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |\n`);
  for (const r of rows) process.stdout.write(`${line(r)}\n`);
}
