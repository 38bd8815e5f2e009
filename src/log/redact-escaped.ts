import { keyBefore, stringEnd, type Edit } from './redact-lines.js';
import { credentialName, secretName } from './redact-pairs.js';

// Kubernetes text inside a JSON string, as a run keeps it: a tool result in a line of an agent's
// stream-json, the same inside a recorded model request (a JSON string inside a JSON string). Escaped,
// its lines are one line and its quotes `\"`, which the patterns for plain text cannot bound; a string
// that holds one of the forms redact-objects.ts redacts is decoded, redacted whole and encoded again.

/** Escape levels decoded (a tool result inside a request body inside a JSON line is two). */
const MAX_DEPTH = 4;

/**
 * What inside a JSON string (escaped) calls for decoding it: a `data:` block, a Secret's compact data, a
 * block scalar, a describe entry, or an env entry or line named like a credential (upper case, as env
 * names are: `- name: DB_PASSWORD` / `value:`, `"name": "DB_PASSWORD"`, `DB_PASSWORD:  a, b`), whose
 * value the one-line patterns cannot bound inside an escaped text. Each alternative starts at a
 * backslash or a colon, which keeps the search cheap over a long stream-json line.
 */
const FAMILY = '[A-Z0-9_]*(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|CREDENTIAL|_KEY|_PASS)[A-Z0-9_]*';
// Alternatives grouped by how they start (an escaped newline, an escaped quote, a colon): each
// position of a long escaped text is tried against one prefix, not every form.
const ESCAPED_MARK = new RegExp(
  [
    String.raw`\\+n(?:`,
    [
      String.raw`[ ]*(?:-[ ]+)*(?:\\+")?(?:data|stringData)(?:\\+")?[ \t]*:`,
      String.raw`----\\+n`,
      // An env entry with a literal value (YAML), a line whose value goes on past a comma or a space.
      String.raw`[ \t]*(?:-[ \t]+)?(?:name:[ \t]*(?:\\+")?${FAMILY}(?:\\+")?[ \t]*\\+n[ \t]*value:|${FAMILY}:[ \t]+[^<\\\s][^\\,; ]*[,; ]+[^\\\s])`,
    ].join('|'),
    String.raw`)|\\+"(?:(?:data|stringData)\\+"[ \t]*:[ \t]*\{|name\\+"[ \t]*:[ \t]*\\+"${FAMILY}\\+",(?:[ \t]|\\+n)*\\+"value\\+")`,
    String.raw`|:[ \t]*[|>][-+0-9]*[ \t]*\\+n`,
  ].join(''),
  'g',
);

const FAMILY_NAME = new RegExp(FAMILY);

/**
 * Whether a mark calls for decoding: a block scalar only under a credential-named key (or an env
 * `value`), an env entry or line only under a name that is a credential's (not `DB_PASSWORD_FILE`).
 */
function markCounts(text: string, m: RegExpMatchArray): boolean {
  if (m[0][0] === ':') {
    let colon = m.index ?? 0;
    // An escaped quote closes the key of an escaped JSON or YAML line: look before it.
    while (text[colon - 1] === '"' || text[colon - 1] === '\\') colon--;
    const key = keyBefore(text, colon)?.key ?? '';
    return key === 'value' || credentialName(key);
  }
  const name = FAMILY_NAME.exec(m[0])?.[0];
  return name === undefined || secretName(name);
}

/** How a decoded JSON string is redacted: everything a text gets, escape levels counted. */
export type RedactDecoded = (text: string, depth: number) => string;

/** Finds JSON string literals holding escaped objects, redacts their decoded text and encodes it again. */
export function escapedEdits(text: string, depth: number, inner: RedactDecoded): Edit[] {
  if (depth >= MAX_DEPTH || !text.includes('\\')) return [];
  const edits: Edit[] = [];
  let done = 0;
  for (const m of text.matchAll(ESCAPED_MARK)) {
    if (m.index < done || !markCounts(text, m)) continue;
    // The literal around the mark: its opening quote is the nearest one not escaped.
    let open = m.index;
    for (;;) {
      open = text.lastIndexOf('"', open - 1);
      if (open < done) break;
      let slashes = 0;
      while (text[open - 1 - slashes] === '\\') slashes++;
      if (slashes % 2 === 0) break;
    }
    if (open < done) continue;
    const close = stringEnd(text, open);
    if (close < m.index) continue;
    done = close + 1;
    let decoded: unknown;
    try {
      decoded = JSON.parse(text.slice(open, close + 1));
    } catch {
      continue;
    }
    if (typeof decoded !== 'string') continue;
    const clean = inner(decoded, depth + 1);
    if (clean !== decoded) edits.push({ start: open, end: close + 1, text: JSON.stringify(clean) });
  }
  return edits;
}
