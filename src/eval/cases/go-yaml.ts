import { Document, parse, stringify, visit } from '../../shared/yaml.js';
import type { Json } from '../shim/cluster.js';

// `kubectl get -o yaml` as kubectl prints it (sigs.k8s.io/yaml over go-yaml): keys sorted, sequences
// not indented under their key, no line folding, and go-yaml's quoting: a string that would read back as
// something else (a bool, a number, null, a timestamp: "True", "1", "", "2026-03-14T01:40:14Z") is
// double-quoted; one that is no plain scalar for another reason (`containers with unready status:
// [app]`, `*`) is single-quoted; and a plain or single-quoted mapping value is folded as libyaml
// folds it (best width 80): at the first single space past column 80, the rest on the next line two
// columns in from its key. Checked against the real kubectl in
// test/integration/eval/shim-differential.test.ts.

/** libyaml's best_width. */
const BEST_WIDTH = 80;

/** `<indent><- ...>key: ` then a plain or single-quoted value: the parts a fold needs. */
const MAPPING_VALUE =
  /^((?: *- )*| *)([^\s'"{[&*!|>%@`#-][^:]*|[^\s'"{[&*!|>%@`#][^:]*): (?=['A-Za-z0-9/(.~+$])/;

/** One line folded as libyaml folds a plain or single-quoted scalar; lines of any other form are kept. */
function foldLine(line: string): string {
  if (line.length <= BEST_WIDTH + 1) return line;
  const m = MAPPING_VALUE.exec(line);
  if (!m) return line;
  const prefix = m[0];
  const keyColumn = (m[1] ?? '').length;
  const value = line.slice(prefix.length);
  const quoted = value.startsWith("'");
  if (quoted && !value.endsWith("'")) return line;
  const indent = ' '.repeat(keyColumn + 2);
  let out = prefix;
  let column = prefix.length;
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as string;
    const breakable =
      c === ' ' &&
      value[i - 1] !== ' ' &&
      value[i + 1] !== ' ' &&
      column > BEST_WIDTH &&
      (!quoted || (i > 0 && i < value.length - 1));
    if (breakable) {
      out += `\n${indent}`;
      column = indent.length;
      continue;
    }
    out += c;
    column++;
  }
  return out;
}

/** Whether YAML 1.1 reads the text back as a bool, a number, null or a timestamp. */
function readsAsNonString(text: string): boolean {
  try {
    const value: unknown = parse(text, { version: '1.1' });
    return value === null || typeof value === 'boolean' || typeof value === 'number' || value instanceof Date;
  } catch {
    return false;
  }
}

/**
 * A string with an apostrophe that is no plain scalar: go-yaml single-quotes it (`didn''t`), where the
 * yaml library would switch to double quotes. Printable one-line text only; the rest keeps the library's.
 */
function needsSingleQuotes(text: string): boolean {
  if (!text.includes("'") || /[\n\t\p{Cc}]/u.test(text)) return false;
  return stringify(text, { version: '1.1', lineWidth: 0, singleQuote: true }).startsWith('"');
}

export function kubectlYaml(object: Json): string {
  const doc = new Document(object, { version: '1.1', sortMapEntries: true });
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value !== 'string') return;
      if (readsAsNonString(node.value)) node.type = 'QUOTE_DOUBLE';
      else if (needsSingleQuotes(node.value)) node.type = 'QUOTE_SINGLE';
    },
  });
  const text = doc.toString({ indentSeq: false, lineWidth: 0, singleQuote: true });
  return text.split('\n').map(foldLine).join('\n');
}
