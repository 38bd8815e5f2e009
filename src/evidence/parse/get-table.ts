// `kubectl get` tables (and `kubectl events`) read back into rows: kubectl lays a table out with a tab
// writer, so every cell of a column starts where its header does; headers are upper case and may hold
// one space (`LAST SEEN`, `NOMINATED NODE`). Several tables in one output are separated by a blank line.

export interface Table {
  columns: string[];
  rows: Record<string, string>[];
}

/** A header line: upper-case names separated by two spaces or more. */
const HEADER = /^[A-Z][A-Z0-9_-]*(?: [A-Z][A-Z0-9_-]*)*(?: {2,}[A-Z][A-Z0-9_-]*(?: [A-Z][A-Z0-9_-]*)*)*\s*$/;

function columnsOf(header: string): { name: string; start: number }[] {
  const out: { name: string; start: number }[] = [];
  for (const m of header.matchAll(/\S+(?: \S+)*/g)) out.push({ name: m[0], start: m.index });
  return out;
}

/** Every table in `text` (an output without a header line has none). */
export function parseTables(text: string): Table[] {
  const tables: Table[] = [];
  let columns: { name: string; start: number }[] | undefined;
  let current: Table | undefined;
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      columns = undefined;
      continue;
    }
    if (!columns) {
      if (!HEADER.test(line) || !/ {2,}/.test(line.trim())) continue;
      columns = columnsOf(line);
      current = { columns: columns.map((c) => c.name), rows: [] };
      tables.push(current);
      continue;
    }
    const row: Record<string, string> = {};
    columns.forEach((column, i) => {
      const next = columns?.[i + 1];
      row[column.name] = line.slice(column.start, next ? next.start : undefined).trim();
    });
    current?.rows.push(row);
  }
  return tables;
}

/** `pod/api-1` → `api-1`; a name without a type is itself. */
export const bareName = (name: string): string => name.slice(name.indexOf('/') + 1);
