// kubectl's JSONPath templates (client-go util/jsonpath) over recorded objects: `{.a.b}`, `[0]`,
// `[-1]`, `[1:3]`, `[*]`, `..name`, `['x']`, `[?(@.type=="Ready")]`, `{range …}{end}`, `{"\t"}`,
// escaped dots in keys. Missing keys print nothing, as `kubectl get -o jsonpath` does by default.

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'recursive'; name: string }
  | { kind: 'wildcard' }
  | { kind: 'index'; index: number }
  | { kind: 'slice'; start?: number; end?: number; step?: number }
  | { kind: 'filter'; path: Path; op?: string; literal?: unknown };

interface Path {
  root: boolean;
  steps: Step[];
}

type Node =
  { kind: 'text'; text: string } | { kind: 'path'; path: Path } | { kind: 'range'; path: Path; body: Node[] };

export class JsonPathError extends Error {
  override name = 'JsonPathError';
}

function unquote(text: string): string {
  const quote = text[0];
  const body = text.slice(1, -1);
  if (quote === "'") return body;
  return body.replace(/\\(.)/g, (_, c: string) => ({ n: '\n', t: '\t', r: '\r' })[c] ?? c);
}

function parseLiteral(text: string): unknown {
  const t = text.trim();
  if (/^(".*"|'.*')$/.test(t)) return unquote(t);
  if (t === 'true' || t === 'false') return t === 'true';
  if (t !== '' && !Number.isNaN(Number(t))) return Number(t);
  throw new JsonPathError(`unrecognized filter literal ${t}`);
}

/** Parses a path such as `.items[*].metadata.name`, `$.a`, `@.b`, `..name`. */
function parsePath(text: string): Path {
  let s = text.trim();
  const path: Path = { root: false, steps: [] };
  if (s.startsWith('$')) {
    path.root = true;
    s = s.slice(1);
  } else if (s.startsWith('@')) s = s.slice(1);
  let i = 0;
  const readName = (): string => {
    let name = '';
    while (i < s.length) {
      const c = s[i] as string;
      if (c === '\\' && i + 1 < s.length) {
        name += s[i + 1];
        i += 2;
        continue;
      }
      if (c === '.' || c === '[' || /\s/.test(c)) break;
      name += c;
      i++;
    }
    return name;
  };
  while (i < s.length) {
    const c = s[i] as string;
    if (c === '.') {
      if (s[i + 1] === '.') {
        i += 2;
        path.steps.push({ kind: 'recursive', name: readName() });
        continue;
      }
      i++;
      if (s[i] === '*') {
        i++;
        path.steps.push({ kind: 'wildcard' });
        continue;
      }
      const name = readName();
      if (name !== '') path.steps.push({ kind: 'field', name });
      continue;
    }
    if (c === '[') {
      let depth = 0;
      let j = i;
      let quote: string | undefined;
      for (; j < s.length; j++) {
        const d = s[j] as string;
        if (quote) {
          if (d === quote) quote = undefined;
          continue;
        }
        if (d === '"' || d === "'") quote = d;
        else if (d === '[') depth++;
        else if (d === ']' && --depth === 0) break;
      }
      if (j >= s.length) throw new JsonPathError(`unterminated array notation in ${text}`);
      path.steps.push(parseBracket(s.slice(i + 1, j).trim(), text));
      i = j + 1;
      continue;
    }
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    // A leading bare name (`items[0]` in custom-columns without the dot).
    const name = readName();
    if (name === '') throw new JsonPathError(`unrecognized character in action: ${c}`);
    path.steps.push({ kind: 'field', name });
  }
  return path;
}

function parseBracket(body: string, text: string): Step {
  if (body === '*') return { kind: 'wildcard' };
  if (/^(".*"|'.*')$/.test(body)) return { kind: 'field', name: unquote(body) };
  if (body.startsWith('?(') && body.endsWith(')')) {
    const expr = body.slice(2, -1).trim();
    const m = /^(@[^=!<>\s]*)\s*(==|!=|<=|>=|<|>|=~)\s*(.+)$/.exec(expr);
    if (!m) return { kind: 'filter', path: parsePath(expr) };
    return {
      kind: 'filter',
      path: parsePath(m[1] as string),
      op: m[2] as string,
      literal: parseLiteral(m[3] as string),
    };
  }
  if (/^-?\d+$/.test(body)) return { kind: 'index', index: Number(body) };
  const slice = /^(-?\d*):(-?\d*)(?::(-?\d*))?$/.exec(body);
  if (slice) {
    const num = (v: string | undefined) => (v === undefined || v === '' ? undefined : Number(v));
    const step: Step = { kind: 'slice' };
    const [start, end, by] = [num(slice[1]), num(slice[2]), num(slice[3])];
    if (start !== undefined) step.start = start;
    if (end !== undefined) step.end = end;
    if (by !== undefined) step.step = by;
    return step;
  }
  throw new JsonPathError(`invalid array index ${body} in ${text}`);
}

/** Splits a template into text and `{…}` actions, honouring quotes inside actions. */
function tokenize(template: string): { action: boolean; text: string }[] {
  const out: { action: boolean; text: string }[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    if (open === -1) {
      out.push({ action: false, text: template.slice(i) });
      break;
    }
    if (open > i) out.push({ action: false, text: template.slice(i, open) });
    let j = open + 1;
    let quote: string | undefined;
    let depth = 1;
    for (; j < template.length; j++) {
      const c = template[j] as string;
      if (quote) {
        if (c === '\\') j++;
        else if (c === quote) quote = undefined;
        continue;
      }
      if (c === '"' || c === "'") quote = c;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) break;
    }
    if (j >= template.length) throw new JsonPathError(`unclosed action in template ${template}`);
    out.push({ action: true, text: template.slice(open + 1, j).trim() });
    i = j + 1;
  }
  return out;
}

/** Parses a kubectl JSONPath template. */
export function parseTemplate(template: string): Node[] {
  const stack: Node[][] = [[]];
  const ranges: { path: Path }[] = [];
  for (const token of tokenize(template)) {
    const top = stack[stack.length - 1] as Node[];
    if (!token.action) {
      top.push({ kind: 'text', text: token.text });
      continue;
    }
    const body = token.text;
    if (body.startsWith('range ') || body === 'range') {
      ranges.push({ path: parsePath(body.slice(5)) });
      stack.push([]);
    } else if (body === 'end') {
      const range = ranges.pop();
      const inner = stack.pop();
      if (!range || !inner) throw new JsonPathError('not in range, nothing to end');
      (stack[stack.length - 1] as Node[]).push({ kind: 'range', path: range.path, body: inner });
    } else if (/^(".*"|'.*')$/s.test(body)) {
      top.push({ kind: 'text', text: unquote(body) });
    } else {
      top.push({ kind: 'path', path: parsePath(body) });
    }
  }
  if (ranges.length > 0) throw new JsonPathError('unclosed range: missing {end}');
  return stack[0] as Node[];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

function children(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (isObject(v))
    return Object.keys(v)
      .sort()
      .map((k) => v[k]);
  return [];
}

function recursive(v: unknown, name: string, out: unknown[]): void {
  if (isObject(v)) {
    if (name === '' || name === '*') out.push(v);
    else if (name in v) out.push(v[name]);
  }
  for (const child of children(v)) recursive(child, name, out);
}

function compare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return typeof a === typeof b && (a as number) < (b as number);
    case '>':
      return typeof a === typeof b && (a as number) > (b as number);
    case '<=':
      return typeof a === typeof b && (a as number) <= (b as number);
    case '>=':
      return typeof a === typeof b && (a as number) >= (b as number);
    case '=~':
      return typeof a === 'string' && typeof b === 'string' && new RegExp(b).test(a);
  }
  return false;
}

function applyStep(values: unknown[], step: Step): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    switch (step.kind) {
      case 'field':
        if (isObject(v) && step.name in v) out.push(v[step.name]);
        break;
      case 'recursive':
        recursive(v, step.name, out);
        break;
      case 'wildcard':
        out.push(...children(v));
        break;
      case 'index':
        if (Array.isArray(v)) {
          const i = step.index < 0 ? v.length + step.index : step.index;
          if (i >= 0 && i < v.length) out.push(v[i]);
        }
        break;
      case 'slice':
        if (Array.isArray(v)) {
          const norm = (n: number) => (n < 0 ? Math.max(0, v.length + n) : Math.min(n, v.length));
          const start = norm(step.start ?? 0);
          const end = norm(step.end ?? v.length);
          const by = step.step ?? 1;
          for (let i = start; i < end; i += by > 0 ? by : 1) out.push(v[i]);
        }
        break;
      case 'filter':
        for (const item of Array.isArray(v) ? v : children(v)) {
          const found = evaluatePath(step.path, item, item);
          if (step.op === undefined) {
            if (found.length > 0 && found.some((f) => f !== false && f !== null && f !== '')) out.push(item);
          } else if (found.some((f) => compare(f, step.op as string, step.literal))) out.push(item);
        }
        break;
    }
  }
  return out;
}

function evaluatePath(path: Path, root: unknown, current: unknown): unknown[] {
  let values: unknown[] = [path.root ? root : current];
  for (const step of path.steps) values = applyStep(values, step);
  return values;
}

/** A value as kubectl prints it in a template: strings raw, numbers and booleans as text, the rest JSON. */
export function valueText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return '';
  return JSON.stringify(v);
}

function render(nodes: Node[], root: unknown, current: unknown): string {
  let out = '';
  for (const node of nodes) {
    if (node.kind === 'text') out += node.text;
    else if (node.kind === 'path') out += evaluatePath(node.path, root, current).map(valueText).join(' ');
    else for (const item of evaluatePath(node.path, root, current)) out += render(node.body, root, item);
  }
  return out;
}

/** Executes a template against `data` (the object or the List kubectl would print). */
export function executeTemplate(template: string, data: unknown): string {
  return render(parseTemplate(template), data, data);
}

/** The values one path yields (custom-columns cells, `--sort-by`, jsonpath-as-json). */
export function evaluate(pathText: string, data: unknown): unknown[] {
  const inner = pathText.trim().replace(/^\{(.*)\}$/s, '$1');
  return evaluatePath(parsePath(inner), data, data);
}
