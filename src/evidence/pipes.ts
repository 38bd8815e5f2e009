import { splitCommandLine } from '../kubectl/parse.js';

// The simple pipes a report puts after a kubectl call (`| grep FATAL`, `| head -20`, `| tail -n 5`,
// `| awk '{print $1}'`, `| jq -r '.status.containerStatuses[0].lastState'`), re-applied to the call's
// recorded output so that a quote of what the pipe printed can be checked. Anything else (sort, uniq,
// a jq program beyond paths) is derived output this does not re-create: its quotes are not checked.

export type PipeResult = { kind: 'applied'; text: string } | { kind: 'derived'; why: string };

const derived = (why: string): PipeResult => ({ kind: 'derived', why });

function count(value: string | undefined): number | undefined {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

function grep(args: string[], lines: string[]): string[] | undefined {
  let invert = false;
  let flags = '';
  let fixed = false;
  let word = false;
  let before = 0;
  let after = 0;
  let max = Infinity;
  const patterns: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const next = () => args[++i];
    if (a === '-v') invert = true;
    else if (a === '-i') flags = 'i';
    else if (a === '-E' || a === '-P') continue;
    else if (a === '-F') fixed = true;
    else if (a === '-w') word = true;
    else if (a === '-e') patterns.push(next() ?? '');
    else if (/^-[ABC]$/.test(a) || /^-[ABC]\d+$/.test(a)) {
      const n = count(a.length > 2 ? a.slice(2) : next());
      if (n === undefined) return undefined;
      if (a[1] !== 'A') before = n;
      if (a[1] !== 'B') after = n;
    } else if (a === '-m') max = count(next()) ?? Infinity;
    else if (a.startsWith('-')) return undefined;
    else patterns.push(a);
  }
  if (patterns.length === 0) return undefined;
  let re: RegExp;
  try {
    const source = patterns
      .map((p) => (fixed ? p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : p.replace(/\\([|(){}+?])/g, '$1')))
      .map((p) => (word ? `\\b(?:${p})\\b` : p))
      .join('|');
    re = new RegExp(source, flags);
  } catch {
    return undefined;
  }
  const keep = new Set<number>();
  let hits = 0;
  lines.forEach((line, i) => {
    if (hits >= max || re.test(line) === invert) return;
    hits++;
    for (let k = Math.max(0, i - before); k <= Math.min(lines.length - 1, i + after); k++) keep.add(k);
  });
  return lines.filter((_, i) => keep.has(i));
}

function headTail(name: 'head' | 'tail', args: string[], lines: string[]): string[] | undefined {
  let n = 10;
  let from: number | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const value =
      a === '-n' ? args[++i] : a.startsWith('-n') ? a.slice(2) : /^-\d+$/.test(a) ? a.slice(1) : undefined;
    if (value === undefined) return undefined;
    const plus = name === 'tail' && value.startsWith('+');
    const parsed = count(plus ? value.slice(1) : value);
    if (parsed === undefined) return undefined;
    if (plus) from = parsed;
    else n = parsed;
  }
  if (from !== undefined) return lines.slice(Math.max(0, from - 1));
  return name === 'head' ? lines.slice(0, n) : lines.slice(Math.max(0, lines.length - n));
}

function awk(args: string[], lines: string[]): string[] | undefined {
  let separator: RegExp = /\s+/;
  let program: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '-F') separator = new RegExp((args[++i] ?? ' ').replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    else if (a.startsWith('-F')) separator = new RegExp(a.slice(2).replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    else program = a;
  }
  const m = /^\s*\{\s*print\s+((?:\$(?:\d+|NF)\s*,?\s*)+)\}\s*$/.exec(program ?? '');
  if (!m?.[1]) return undefined;
  const fields = [...m[1].matchAll(/\$(\d+|NF)/g)].map((f) => f[1] as string);
  return lines.map((line) => {
    const cells = line.trim().split(separator);
    return fields
      .map((f) => (f === '0' ? line : ((f === 'NF' ? cells.at(-1) : cells[Number(f) - 1]) ?? '')))
      .join(' ');
  });
}

/** A jq program of paths only (`.a.b[0]`, `.items[].metadata.name`, `.a | .b`). */
function jq(args: string[], text: string): string[] | undefined {
  let raw = false;
  let compact = false;
  let program: string | undefined;
  for (const a of args) {
    if (a === '-r' || a === '--raw-output') raw = true;
    else if (a === '-c' || a === '--compact-output') compact = true;
    else if (/^-[rc]{2}$/.test(a)) raw = compact = true;
    else if (a.startsWith('-')) return undefined;
    else program ??= a;
  }
  let values: unknown[];
  try {
    values = [JSON.parse(text) as unknown];
  } catch {
    return undefined;
  }
  for (const stage of (program ?? '.').split('|')) {
    const path = stage.trim();
    if (!/^(?:\.(?:[A-Za-z_][\w-]*|\["[^"]*"\])?(?:\[-?\d*\])*\??)+$/.test(path)) return undefined;
    for (const step of path.matchAll(/\.([A-Za-z_][\w-]*)?|\["([^"]*)"\]|\[(-?\d*)\]/g)) {
      const key = step[1] ?? step[2];
      const index = step[3];
      values = values.flatMap((v): unknown[] => {
        if (key !== undefined)
          return v && typeof v === 'object' && !Array.isArray(v)
            ? [(v as Record<string, unknown>)[key] ?? null]
            : [null];
        if (index === undefined) return [v];
        if (index === '') return Array.isArray(v) ? v : v && typeof v === 'object' ? Object.values(v) : [];
        return Array.isArray(v) ? [v.at(Number(index)) ?? null] : [null];
      });
    }
  }
  return values.flatMap((v) =>
    (raw && typeof v === 'string' ? v : JSON.stringify(v, null, compact ? undefined : 2)).split('\n'),
  );
}

/** `text` through the pipe stages, or why it cannot be re-created. */
export function applyPipes(text: string, stages: readonly string[]): PipeResult {
  let lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const stage of stages) {
    const words = splitCommandLine(stage);
    const [name, ...args] = words ?? [];
    let next: string[] | undefined;
    if (name === 'grep' || name === 'egrep') next = grep(args, lines);
    else if (name === 'head' || name === 'tail') next = headTail(name, args, lines);
    else if (name === 'awk') next = awk(args, lines);
    else if (name === 'jq') next = jq(args, lines.join('\n'));
    if (!next)
      return derived(`the output went through \`${stage.trim()}\`, which the check does not re-create`);
    lines = next;
  }
  return { kind: 'applied', text: lines.join('\n') };
}
