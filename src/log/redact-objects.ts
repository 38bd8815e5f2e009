import { escapedEdits, type RedactDecoded } from './redact-escaped.js';
import {
  applyEdits,
  keyBefore,
  lineAt,
  lineStartBefore,
  MARK,
  previousLineStart,
  scalar,
  stringEnd,
  valueEdit,
  valueEnd,
  type Edit,
  type Line,
} from './redact-lines.js';
import { credentialName, secretName } from './redact-pairs.js';

// Kubernetes objects in text, as kubectl prints them: the values of a Secret's `data:` and
// `stringData:` (YAML, indented JSON, the compact JSON of a last-applied-configuration annotation),
// multi-line values under credential-named keys (a YAML block scalar, `kubectl describe configmap`'s
// `KEY:` / `----` / value), and the same inside JSON strings (a tool result in a recorded model request,
// a line of an agent's stream-json). Keys stay and values become [REDACTED], so what is left still reads
// as the object it was. The text is read line by line, by indentation, rather than parsed: an output cut
// at its bound, a report quoting a few lines or a log chunk is not a whole YAML or JSON document.

/** Lines walked in each direction to find an object's `kind:`; past this the object counts as cut. */
const MAX_WALK_LINES = 20_000;

/** The kinds of Secret objects, and the `type:` values only a Secret has. */
const SECRET_KIND = /^Secret$/;
const SECRET_TYPE =
  /^(?:Opaque|kubernetes\.io\/(?:service-account-token|dockercfg|dockerconfigjson|basic-auth|ssh-auth|tls)|bootstrap\.kubernetes\.io\/token|helm\.sh\/release\.v1)$/;
/** Anywhere in a text: a Secret object, YAML or JSON (for a `data:` block whose own object is cut off). */
const SECRET_IN_TEXT = /\bkind"?[ \t]*:[ \t]*"?Secret\b/;

/** What the siblings of the key on `line` say about their object: a Secret, something else, or unknown. */
function objectKind(text: string, line: Line): 'secret' | 'other' | 'unknown' {
  const col = line.keyCol;
  let verdict: 'secret' | 'other' | undefined;
  let closed = 0;
  const sibling = (l: Line) => {
    if (l.key === 'kind') verdict = SECRET_KIND.test(scalar(l.value)) ? 'secret' : (verdict ?? 'other');
    if (l.key === 'type' && SECRET_TYPE.test(scalar(l.value))) verdict = 'secret';
  };
  // Backwards to the line that opens the object (`- apiVersion: v1`, `{`, or less indented).
  if (line.dash) closed++;
  else
    for (let pos = line.start, n = 0; n < MAX_WALK_LINES; n++) {
      if (pos === 0) break;
      const l = lineAt(text, previousLineStart(text, pos));
      pos = l.start;
      if (l.fence) {
        if (l.fence === 'document') closed++;
        break;
      }
      if (l.blank || l.lead > col) continue;
      if (l.keyCol === col && l.key !== undefined && (l.lead === col || l.dash)) sibling(l);
      if (l.lead < col) {
        closed++;
        break;
      }
    }
  // Forwards to the end of the object.
  for (let pos = line.end + 1, n = 0; pos <= text.length && n < MAX_WALK_LINES; n++) {
    if (pos === text.length) break;
    const l = lineAt(text, pos);
    pos = l.end + 1;
    if (l.fence) {
      if (l.fence === 'document') closed++;
      break;
    }
    if (l.blank || l.lead > col) continue;
    if (l.lead < col) {
      closed++;
      break;
    }
    if (!l.dash && l.key !== undefined) sibling(l);
  }
  if (verdict) return verdict;
  return closed === 2 ? 'other' : 'unknown';
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const isBase64 = (v: string) => v.length % 4 === 0 && BASE64.test(v);

/** The entries of a `data:` block: its key lines one indent deeper, each with where its value ends. */
function blockEntries(text: string, block: Line): { line: Line; end: number }[] {
  const out: { line: Line; end: number }[] = [];
  let childCol = -1;
  for (let pos = block.end + 1; pos < text.length;) {
    const l = lineAt(text, pos);
    if (!l.blank && l.lead <= block.keyCol) break;
    pos = l.end + 1;
    if (l.blank) continue;
    if (childCol < 0) childCol = l.keyCol;
    if (l.keyCol === childCol && l.key !== undefined && !l.dash) {
      const end = valueEnd(text, l);
      out.push({ line: l, end });
      pos = end + 1;
    }
  }
  return out;
}

// Found by their key (a search for the words), then checked to open their line.
const DATA_KEY = /(?:data|stringData)["']?[ \t]*:[ \t]*\{?[ \t]*\r?$/gm;
const DATA_LINE = /^[ ]*(?:-[ ]+)*["']?$/;

/** Edits for the values of every Secret `data:`/`stringData:` block written one entry per line. */
function dataBlockEdits(text: string): Edit[] {
  if (!text.includes('ata')) return [];
  const edits: Edit[] = [];
  let secretElsewhere: boolean | undefined;
  for (const m of text.matchAll(DATA_KEY)) {
    const start = text.lastIndexOf('\n', m.index) + 1;
    if (!DATA_LINE.test(text.slice(start, m.index))) continue;
    const line = lineAt(text, start);
    const entries = blockEntries(text, line);
    if (entries.length === 0) continue;
    let kind = line.key === 'stringData' ? 'secret' : objectKind(text, line);
    // A block whose object is cut off (an output cut at its bound, a chunk of a log) is a Secret's
    // when the text shows Secrets and every value is base64, as a Secret's data is.
    if (kind === 'unknown') {
      secretElsewhere ??= SECRET_IN_TEXT.test(text);
      const values = entries.map((e) => scalar(e.line.value.trim()));
      if (secretElsewhere && values.every((v) => v === '' || isBase64(v))) kind = 'secret';
    }
    if (kind !== 'secret') continue;
    for (const entry of entries) {
      const edit = valueEdit(text, entry.line, entry.end);
      if (edit) edits.push(edit);
    }
  }
  return edits;
}

/** `key: |`, `key: >-` at the end of a line, or a quoted scalar begun: found from the colon. */
const MULTI_LINE_VALUE = /:[ \t]*(?:[|>][-+0-9]*[ \t]*\r?$|["'])/gm;
const CLOSED = { '"': /"(?:[^"\\\r\n]|\\.)*"/y, "'": /'(?:[^'\r\n]|'')*'/y };

/** Edits for multi-line values under credential-named keys, and for `value:` of a credential-named env entry. */
function multiLineEdits(text: string): Edit[] {
  if (!/:[ \t]*[|>"']/.test(text)) return [];
  const edits: Edit[] = [];
  for (const m of text.matchAll(MULTI_LINE_VALUE)) {
    // A quoted value closed on its own line is the pairs' (one line, a known end); most are.
    const quote = m[0].at(-1);
    if (quote === '"' || quote === "'") {
      const closed = CLOSED[quote];
      closed.lastIndex = m.index + m[0].length - 1;
      if (closed.test(text)) continue;
    }
    // The key just before the colon, opening its line (looked at backwards from the colon: a long
    // line is never scanned from its start).
    const before = keyBefore(text, m.index);
    if (!before || (before.key !== 'value' && !credentialName(before.key))) continue;
    const start = lineStartBefore(text, before.start);
    if (start < 0) continue;
    const line = lineAt(text, start);
    if (before.key === 'value') {
      if (line.start === 0) continue;
      const prev = lineAt(text, previousLineStart(text, line.start));
      if (!(prev.key === 'name' && prev.keyCol === line.keyCol && secretName(scalar(prev.value.trim()))))
        continue;
    }
    const edit = valueEdit(text, line, valueEnd(text, line));
    if (edit) edits.push(edit);
  }
  return edits;
}

/** `kubectl describe configmap`: `KEY:`, `----`, the value, a blank line; up to the next entry or section. */
const DESCRIBE_ENTRY = /^([A-Za-z0-9_./-]+):\r?\n----\r?\n/gm;
const DESCRIBE_END = /^(?:[A-Za-z0-9_./-]+:\r?\n----\r?$|BinaryData\r?$|Events:)/m;

function describeEdits(text: string): Edit[] {
  if (!text.includes('\n----')) return [];
  const edits: Edit[] = [];
  for (const m of text.matchAll(DESCRIBE_ENTRY)) {
    if (!credentialName(m[1] ?? '')) continue;
    const start = m.index + m[0].length;
    const rest = text.slice(start);
    const next = DESCRIBE_END.exec(rest);
    let end = start + (next ? next.index : rest.length);
    while (end > start && /\s/.test(text[end - 1] ?? '')) end--;
    if (end > start) edits.push({ start, end, text: MARK });
  }
  return edits;
}

/** The values of a flat JSON map starting at `open` (a `{`): their spans, and the map's end; undefined when not flat. */
function flatMapValues(text: string, open: number): { values: [number, number][]; end: number } | undefined {
  const values: [number, number][] = [];
  const ws = (k: number) => {
    while (k < text.length && /\s/.test(text[k] ?? '')) k++;
    return k;
  };
  let i = ws(open + 1);
  if (text[i] === '}') return { values, end: i };
  for (;;) {
    if (text[i] !== '"') return undefined;
    i = stringEnd(text, i);
    if (i < 0) return undefined;
    i = ws(i + 1);
    if (text[i] !== ':') return undefined;
    i = ws(i + 1);
    if (text[i] !== '"') return undefined;
    const close = stringEnd(text, i);
    if (close < 0) return undefined;
    values.push([i, close + 1]);
    i = ws(close + 1);
    if (text[i] === '}') return { values, end: i };
    if (text[i] !== ',') return undefined;
    i = ws(i + 1);
  }
}

const COMPACT_DATA = /(?<!\\)"(?:data|stringData)"[ \t]*:[ \t]*\{(?![ \t]*\r?\n)/g;
const COMPACT_SECRET = /"kind"[ \t]*:[ \t]*"Secret"|"type"[ \t]*:[ \t]*"(?:Opaque|kubernetes\.io\/[a-z-]+)"/;

/** Edits for Secret data maps in compact JSON (one object per line: a last-applied-configuration, `jq -c`). */
function compactEdits(text: string): Edit[] {
  if (!text.includes('Secret') && !text.includes('"type"')) return [];
  const edits: Edit[] = [];
  // The line the last map was on (maps are found in order): a long line is looked at once.
  let line = { end: -1, secret: false };
  for (const m of text.matchAll(COMPACT_DATA)) {
    if (m.index > line.end) {
      const start = text.lastIndexOf('\n', m.index) + 1;
      const end = text.indexOf('\n', m.index);
      line = { end: end < 0 ? text.length : end, secret: false };
      line.secret = COMPACT_SECRET.test(text.slice(start, line.end));
    }
    if (!line.secret) continue;
    const map = flatMapValues(text, m.index + m[0].length - 1);
    if (!map) continue;
    for (const [start, end] of map.values)
      if (end - start > 2 && text.slice(start, end) !== `"${MARK}"`)
        edits.push({ start, end, text: `"${MARK}"` });
  }
  return edits;
}

/**
 * Secret data and multi-line credential values in Kubernetes text, redacted; keys and structure stay.
 * A JSON string holding such text is decoded and passed to `inner` (by default this alone; the
 * Redactor passes its whole redaction), then encoded again.
 */
export function redactObjects(
  text: string,
  inner: RedactDecoded = (decoded, depth) => redactObjects(decoded, inner, depth),
  depth = 0,
): string {
  return applyEdits(text, [
    ...dataBlockEdits(text),
    ...multiLineEdits(text),
    ...describeEdits(text),
    ...compactEdits(text),
    ...escapedEdits(text, depth, inner),
  ]);
}
