import type { KubectlCategory } from '../../kubectl/policy/classify.js';
import type { FrozenObject, JsonObject } from './cluster.js';

// What one answer of the shim is, and the printers shared by its commands: kubectl's JSON (Go's
// MarshalIndent: 4 spaces, HTML characters escaped) and YAML Lists assembled from recorded items.

/** Where an answer came from: recordings, a built-in fact of the frozen cluster, or a refusal. */
export type AnsweredFrom =
  | 'objects'
  | 'describe'
  | 'logs'
  | 'commands'
  | 'builtin'
  | 'refused'
  | 'unreachable'
  | 'unsupported'
  | 'not-recorded'
  | 'usage-error'
  | 'unknown-command';

export interface ShimAnswer {
  stdout: string;
  stderr: string;
  exitCode: number;
  answeredFrom: AnsweredFrom;
  /** Set when the call broke the read-only rule (mutating verb, exec, Secret data, mutating raw call). */
  violation?: { category: KubectlCategory; reason: string };
}

export const ok = (stdout: string, answeredFrom: AnsweredFrom = 'objects', stderr = ''): ShimAnswer => ({
  stdout,
  stderr,
  exitCode: 0,
  answeredFrom,
});

export const fail = (stderr: string, answeredFrom: AnsweredFrom, stdout = ''): ShimAnswer => ({
  stdout,
  stderr: stderr.endsWith('\n') ? stderr : `${stderr}\n`,
  exitCode: 1,
  answeredFrom,
});

/** Go's json.MarshalIndent(v, "", "    ") as kubectl prints it: `<`, `>` and `&` escaped. */
export function kubectlJson(value: unknown): string {
  return `${JSON.stringify(value, null, 4)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')}\n`;
}

/** The List kubectl prints for several objects. */
export const listObject = (items: FrozenObject[]): JsonObject => ({
  apiVersion: 'v1',
  items: items.map((i) => i.object),
  kind: 'List',
  metadata: { resourceVersion: '' },
});

/** `kubectl get … -o yaml` of several objects: the recorded items under `items:`, go-yaml style. */
export function listYaml(items: FrozenObject[]): string {
  if (items.length === 0) return 'apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: ""\n';
  const body = items
    .map((item) =>
      item.yaml
        .replace(/\n$/, '')
        .split('\n')
        .map((line, i) => (i === 0 ? `- ${line}` : line === '' ? line : `  ${line}`))
        .join('\n'),
    )
    .join('\n');
  return `apiVersion: v1\nitems:\n${body}\nkind: List\nmetadata:\n  resourceVersion: ""\n`;
}

export const withNewline = (text: string): string =>
  text === '' || text.endsWith('\n') ? text : `${text}\n`;
