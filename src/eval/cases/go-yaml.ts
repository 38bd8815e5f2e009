import { Document, parse, visit } from '../../shared/yaml.js';
import type { Json } from '../shim/cluster.js';

// `kubectl get -o yaml` as kubectl prints it (sigs.k8s.io/yaml over go-yaml): keys sorted, sequences
// not indented under their key, no line folding, and go-yaml's quoting: a string that would read back as
// something else (a bool, a number, null, a timestamp: "True", "1", "", "2026-03-14T01:40:14Z") is
// double-quoted; one that is no plain scalar for another reason (`containers with unready status:
// [app]`, `*`) is single-quoted. Checked against the real kubectl in
// test/integration/eval/shim-differential.test.ts.

/** Whether YAML 1.1 reads the text back as a bool, a number, null or a timestamp. */
function readsAsNonString(text: string): boolean {
  try {
    const value: unknown = parse(text, { version: '1.1' });
    return value === null || typeof value === 'boolean' || typeof value === 'number' || value instanceof Date;
  } catch {
    return false;
  }
}

export function kubectlYaml(object: Json): string {
  const doc = new Document(object, { version: '1.1', sortMapEntries: true });
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value === 'string' && readsAsNonString(node.value)) node.type = 'QUOTE_DOUBLE';
    },
  });
  return doc.toString({ indentSeq: false, lineWidth: 0, singleQuote: true });
}
